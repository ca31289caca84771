"""The ixbrlparse adapter (ingest/ixbrl.py): its indexed continuation lookup gives exactly the
facts ixbrlparse gives on its own, and the lookup is really the one in use."""

from __future__ import annotations

import warnings

import pytest

from fintrade_tui.ingest.ixbrl import open_ixbrl
from tests.conftest import AAPL_10K, AAPL_10Q3, needs_bundle

pytestmark = needs_bundle


def _facts(doc) -> tuple[list, list]:
    text = [(f.name, f.value, str(f.context), type(f.format)) for f in doc.nonnumeric]
    numbers = [(f.name, f.value, f.unit, str(f.context)) for f in doc.numeric]
    return text, numbers


def test_the_indexed_parse_equals_ixbrlparse_on_a_filing_with_continuations() -> None:
    from ixbrlparse import IXBRL

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = IXBRL.open(AAPL_10Q3, raise_on_error=False)
        ours = open_ixbrl(AAPL_10Q3)
    linked = [f for f in plain.nonnumeric if f.soup_tag.attrs.get("continuedAt")]
    assert len(linked) >= 5  # text blocks split across pages: the path under test
    assert _facts(ours) == _facts(plain)
    assert len(ours.numeric) > 500 and not ours.errors
    # the continuation lookup that ran is the indexed one (ixbrlparse changed if this fails)
    assert type(ours.parser).__name__ == "_Indexed"
    assert "_by_id" in vars(ours.parser)
    # a continued block is the concatenation of its pieces, in order
    first = linked[0]
    joined = ours.nonnumeric[plain.nonnumeric.index(first)]
    assert len(joined.value) > len(first.soup_tag.text.strip()) > 0


@pytest.mark.parametrize("depth", [3000])
def test_a_long_chain_of_continuations_needs_no_recursion(tmp_path, depth: int) -> None:
    """ixbrlparse follows a chain by recursion; the adapter loops, so a filing with more pieces
    than Python's recursion limit still parses."""
    link = [f' continuedAt="c{i + 1}"' for i in range(depth - 1)] + [""]
    pieces = "".join(
        f'<ix:continuation id="c{i}"{link[i]}>p{i} </ix:continuation>' for i in range(depth)
    )
    html = (
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"'
        ' xmlns:xbrli="http://www.xbrl.org/2003/instance"><body><ix:header><ix:resources>'
        '<xbrli:context id="c"><xbrli:entity><xbrli:identifier scheme="s">1</xbrli:identifier>'
        "</xbrli:entity><xbrli:period><xbrli:instant>2024-06-29</xbrli:instant></xbrli:period>"
        "</xbrli:context></ix:resources></ix:header>"
        '<ix:nonNumeric name="us-gaap:Note" contextRef="c" continuedAt="c0">start </ix:nonNumeric>'
        f"{pieces}</body></html>"
    )
    path = tmp_path / "chain.htm"
    path.write_text(html)
    (note,) = open_ixbrl(path).nonnumeric
    assert note.value.startswith("start p0 p1 ") and note.value.endswith(f"p{depth - 1}")


def _numbers_and_dei(doc) -> tuple[list, list]:
    text, numbers = _facts(doc)
    return [t for t in text if t[0].startswith("dei:")], numbers


@pytest.mark.parametrize("path", [AAPL_10Q3, AAPL_10K], ids=["10-Q", "10-K"])
def test_the_cut_down_parse_reads_the_same_numbers_and_dei_facts(path) -> None:
    """Ingest's parse (`text_facts`): every numeric fact and every dei text fact equal to
    ixbrlparse's own on the whole filing, in the same order."""
    from ixbrlparse import IXBRL

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = IXBRL.open(path, raise_on_error=False)
        cut = open_ixbrl(path, text_facts=lambda name: name.startswith("dei:"))
    assert _numbers_and_dei(cut) == _numbers_and_dei(plain)
    assert [f.soup_tag.attrs for f in cut.numeric] == [f.soup_tag.attrs for f in plain.numeric]
    assert len(cut.numeric) > 500 and not cut.errors
    # the text blocks were left out: outside the header only dei's text facts were read
    outside = [f for f in cut.nonnumeric if f.soup_tag.find_parent("header") is None]
    assert outside and all(f.schema == "dei" for f in outside)
    blocks = [sum(f.schema != "dei" for f in d.nonnumeric) for d in (plain, cut)]
    assert blocks[0] - blocks[1] > 30  # a 10-Q has some 40 text blocks


def test_the_cut_down_parse_keeps_nested_hidden_and_continued_facts(tmp_path) -> None:
    """A number inside a text block that is left out, a number inside another, the header's
    hidden facts and a kept text fact continued elsewhere: all read as ixbrlparse reads them."""
    from ixbrlparse import IXBRL

    ctx = (
        '<xbrli:context id="c"><xbrli:entity><xbrli:identifier scheme="s">1</xbrli:identifier>'
        "</xbrli:entity><xbrli:period><xbrli:instant>2024-06-29</xbrli:instant></xbrli:period>"
        '</xbrli:context><xbrli:unit id="u"><xbrli:measure>iso4217:USD</xbrli:measure>'
        "</xbrli:unit>"
    )
    num = '<ix:nonFraction name="us-gaap:{0}" contextRef="c" unitRef="u" decimals="-6" scale="6">'
    html = (
        '<html xmlns="http://www.w3.org/1999/xhtml" xmlns:ix="http://www.xbrl.org/2013/inlineXBRL"'
        ' xmlns:xbrli="http://www.xbrl.org/2003/instance"><body><div style="display:none">'
        f"<ix:header><ix:hidden>{num.format('Hidden')}7</ix:nonFraction>"
        '<ix:nonNumeric name="dei:DocumentType" contextRef="c">10-Q</ix:nonNumeric></ix:hidden>'
        f"<ix:resources>{ctx}</ix:resources></ix:header></div>"
        '<ix:nonNumeric name="us-gaap:Note" contextRef="c"><table><tr><td>'
        f"{num.format('InNote')}1,234</ix:nonFraction></td></tr></table></ix:nonNumeric>"
        f"<p>{num.format('Outer')}5{num.format('Inner')}6</ix:nonFraction></ix:nonFraction></p>"
        '<ix:nonNumeric name="dei:EntityName" contextRef="c" continuedAt="k1">Apple '
        "</ix:nonNumeric>"
        '<ix:continuation id="k1">Inc.</ix:continuation></body></html>'
    )
    path = tmp_path / "small.htm"
    path.write_text(html)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = IXBRL.open(path, raise_on_error=False)
        cut = open_ixbrl(path, text_facts=lambda name: name.startswith("dei:"))
    assert [f.name for f in cut.numeric] == ["Hidden", "InNote", "Outer", "Inner"]
    assert _numbers_and_dei(cut) == _numbers_and_dei(plain)
    assert {f.name: f.value for f in cut.nonnumeric} == {
        "DocumentType": "10-Q",
        "EntityName": "Apple Inc.",
    }
