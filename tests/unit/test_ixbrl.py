"""The ixbrlparse adapter (ingest/ixbrl.py): its indexed continuation lookup gives exactly the
facts ixbrlparse gives on its own, and the lookup is really the one in use."""

from __future__ import annotations

import warnings

import pytest

from fintrade_tui.ingest.ixbrl import open_ixbrl
from tests.conftest import AAPL_10Q3, needs_bundle

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
