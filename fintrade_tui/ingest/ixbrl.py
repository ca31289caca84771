"""ixbrlparse adapter room: inline XBRL opened with ixbrlparse, its continuation lookups indexed.

ixbrlparse 0.12 finds the target of each `continuedAt` (a text block split across pages) with a
scan of the whole document, once per link: about 70 % of its time on a 10-K. The same lookup
from an id map built once gives the same facts (tests/unit/test_ixbrl.py compares the two).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_ixbrl(path: Path) -> Any:
    """The filing parsed by ixbrlparse (errors collected, not raised), continuations indexed."""
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
        return _IndexedIXBRL(f, raise_on_error=False)
