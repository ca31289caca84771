"""ixbrlparse adapter room: inline XBRL opened with ixbrlparse, its continuation lookups indexed,
and, for ingest, only the facts it reads.

ixbrlparse 0.12 finds the target of each `continuedAt` (a text block split across pages) with a
scan of the whole document, once per link: about 70 % of its time on a 10-K. The same lookup
from an id map built once gives the same facts (tests/unit/test_ixbrl.py compares the two).

Ingest reads every number but only a few text facts (dei's document type, period, CIK). Most of
the rest of the parse is BeautifulSoup building a tree of the whole filing, so `text_facts`
hands ixbrlparse a document cut down first with lxml (a C parser): the header (contexts, units,
hidden facts), every numeric fact and the text facts asked for, with their continuations, in
their order in the filing. ixbrlparse still reads each fact from the same markup.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

IX = "{http://www.xbrl.org/2013/inlineXBRL}"


def open_ixbrl(path: Path, text_facts: Callable[[str], bool] | None = None) -> Any:
    """The filing parsed by ixbrlparse (errors collected, not raised), continuations indexed.
    With `text_facts`, the text facts whose name (`prefix:Name`) it accepts are read (and
    those the header hides); every numeric fact is."""
    from bs4 import Tag
    from ixbrlparse import IXBRL
    from ixbrlparse.core import IXBRLParser

    class _Indexed(IXBRLParser):
        def _get_tag_continuation(self, s: Any, start_str: str = "") -> str:
            by_id = self.__dict__.get("_by_id")
            if by_id is None:
                by_id = self.__dict__["_by_id"] = {}
                for tag in self.soup.find_all(id=True):
                    by_id.setdefault(tag["id"], tag)  # the first, as soup.find(id=) returns
            # the library's own walk, with the lookup swapped (a loop: no recursion limit)
            while isinstance(s, Tag):
                start_str += s.text
                target = s.attrs.get("continuedAt")
                s = by_id.get(target) if target else None
                if s is not None and s.name != "continuation":
                    s = None
            return start_str

    class _IndexedIXBRL(IXBRL):
        def _get_parser(self) -> None:
            super()._get_parser()
            if type(self.parser) is IXBRLParser:
                self.parser.__class__ = _Indexed

    with path.open("rb") as f:
        raw = f.read()
    if text_facts is not None:
        raw = _facts_only(raw, text_facts) or raw  # not XHTML: ixbrlparse reads it whole
    return _IndexedIXBRL(io.BytesIO(raw), raise_on_error=False)


def _facts_only(raw: bytes, text_facts: Callable[[str], bool]) -> bytes | None:
    """The filing with only what ixbrlparse reads for those facts, or None where lxml cannot
    read it as XML."""
    from lxml import etree

    parser = etree.XMLParser(recover=True, huge_tree=True, resolve_entities=False)
    try:
        root = etree.fromstring(raw, parser)
    except etree.XMLSyntaxError:
        return None
    if root is None or etree.QName(root).localname != "html":
        return None
    by_id: dict[str, Any] = {}
    texts = []
    for el in root.iter(f"{IX}continuation", f"{IX}nonNumeric"):
        if el.tag == f"{IX}continuation":
            by_id.setdefault(el.get("id"), el)  # the first, as ixbrlparse's lookup finds
        elif text_facts(el.get("name") or ""):
            texts.append(el)
    wanted = set(texts)
    for el in texts:  # each kept text fact's continuation chain, as ixbrlparse follows it
        target = el.get("continuedAt")
        while target and (piece := by_id.get(target)) is not None and piece not in wanted:
            wanted.add(piece)
            target = piece.get("continuedAt")
    keep: list[Any] = []
    kept: set[Any] = set()
    tags = (f"{IX}header", f"{IX}nonFraction", f"{IX}nonNumeric", f"{IX}continuation")
    for el in root.iter(*tags):  # in the filing's order
        if el.tag in (f"{IX}nonNumeric", f"{IX}continuation") and el not in wanted:
            continue
        # a fact inside a kept element comes with it (nested facts, the header's hidden ones)
        if any(a in kept for a in el.iterancestors()):
            continue
        keep.append(el)
        kept.add(el)
    out = etree.Element(root.tag, attrib=dict(root.attrib), nsmap=root.nsmap)
    for el in keep:
        el.tail = None
        out.append(el)  # moved, not copied: the source tree is thrown away
    return etree.tostring(out, encoding="utf-8", xml_declaration=True)
