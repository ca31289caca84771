"""Filing text: clean Item sections with markdown tables, and exact parent/child chunks."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from fintrade_tui.ingest.filings import NAME
from fintrade_tui.retrieval.chunks import Chunk
from fintrade_tui.retrieval.filing_text import (
    children,
    chunk_filing,
    chunk_sections,
    clean_text,
    parents,
    sections,
)
from fintrade_tui.workspace.evidence import approx_tokens
from tests.conftest import AAPL_10K, BUNDLE, needs_bundle

FILINGS = BUNDLE / "fintradebench" / "filings"
AAPL_10Q = FILINGS / "AAPL" / "10-Q_2025-08-01_0000320193-25-000073.htm"
FURNITURE = re.compile(r"\| (Q\d )?\d{4} Form 10-[KQ] \||^table of contents", re.I | re.M)
AAPL_FY2024 = {
    "accession": "0000320193-24-000123",
    "ticker": "AAPL",
    "cik": 320193,
    "form": "10-K",
    "filed": date(2024, 11, 1),
    "period_end": date(2024, 9, 28),
    "fiscal_year": 2024,
    "fiscal_period": "FY",
    "path": str(AAPL_10K),
}


def _filing(path: Path) -> dict:
    """A `filings` row from the file name alone (fiscal fields approximate)."""
    m = NAME.match(path.name)
    assert m, path
    form, filed = m.group(1), date.fromisoformat(m.group(2))
    return {
        "accession": m.group(3),
        "ticker": path.parent.name.upper(),
        "form": form,
        "filed": filed,
        "period_end": None,
        "fiscal_year": filed.year,
        "fiscal_period": "FY" if form == "10-K" else "Q2",
    }


def _check_chunks(chunks: list[Chunk], parent_tokens: int, child_tokens: int) -> None:
    assert len({c.id for c in chunks}) == len(chunks)
    by_parent: dict[str, list[Chunk]] = {}
    for c in chunks:
        assert c.parent_text[c.char_start : c.char_end] == c.text
        assert c.id.startswith(c.parent_id + ":") and c.text.strip()
        assert c.embed_text.endswith("\n" + c.text) and "\n" not in c.embed_text[: -len(c.text) - 1]
        assert approx_tokens(c.text) <= child_tokens + 5
        by_parent.setdefault(c.parent_id, []).append(c)
    for kids in by_parent.values():
        ptext = kids[0].parent_text
        lines = ptext.split("\n")
        one_table = all(ln.startswith("|") for ln in lines)
        assert approx_tokens(ptext) <= parent_tokens + 5 or one_table
        for a, b in zip(kids, kids[1:], strict=False):
            assert a.char_start < b.char_start < a.char_end < b.char_end  # they overlap


@pytest.fixture(scope="module")
def aapl_parsed() -> list[tuple[str, str, str]]:
    return sections(AAPL_10K, "10-K")


@pytest.fixture(scope="module")
def aapl_sections(aapl_parsed) -> dict[str, tuple[str, str]]:
    return {k: (title, text) for k, title, text in aapl_parsed}


@pytest.fixture(scope="module")
def aapl_chunks(aapl_parsed) -> list[Chunk]:
    # the sections parsed once for both fixtures (a parse is most of the cost); chunk_filing,
    # which is `sections` then `chunk_sections`, is run on files by the tests below
    return chunk_sections(aapl_parsed, AAPL_FY2024, "Apple Inc.")


@needs_bundle
def test_aapl_10k_sections_titles_and_tables(aapl_sections) -> None:
    for key in ("part_i_item_1a", "part_ii_item_7", "part_ii_item_8"):
        assert key in aapl_sections
    title, text = aapl_sections["part_i_item_1a"]
    assert title == "Item 1A. Risk Factors"
    assert text.startswith("Item 1A. Risk Factors\n")
    assert "part_i_item_4" not in aapl_sections  # "Mine Safety Disclosures — Not applicable."
    mdna = aapl_sections["part_ii_item_7"][1] + aapl_sections["part_ii_item_8"][1]
    assert re.search(r"^\| Total net sales \|.*391,035 \|", mdna, re.M)
    assert "| Americas | $167,045 | 3% | $162,560 | (4)% | $169,658 |" in mdna
    for _, text in aapl_sections.values():
        assert not FURNITURE.search(text)
        assert "\xa0" not in text and "\n\n\n" not in text
        assert not re.search(r"^\d{1,3}$", text, re.M)  # bare page numbers


@needs_bundle
def test_aapl_10k_chunks(aapl_chunks) -> None:
    _check_chunks(aapl_chunks, 2000, 300)
    risk = [c for c in aapl_chunks if c.section_key == "part_i_item_1a"]
    assert len(risk) > 20
    c = risk[0]
    assert c.id == "0000320193-24-000123:part_i_item_1a:0:0"
    assert c.embed_text.startswith(
        "Apple Inc. (AAPL) 10-K FY2024, filed 2024-11-01, period ended 2024-09-28"
        " — Item 1A. Risk Factors\nItem 1A. Risk Factors"
    )
    assert (c.track, c.ticker, c.form, c.accession) == ("filing", "AAPL", "10-K", c.id[:20])
    assert (c.period, c.section) == ("FY2024 FY", "Item 1A. Risk Factors")
    assert c.available_from == c.filed == date(2024, 11, 1)
    assert c.period_end == date(2024, 9, 28) and c.source_path == str(AAPL_10K)
    assert any("Total net sales" in c.text and "391,035" in c.text for c in aapl_chunks)


@needs_bundle
def test_aapl_10q_sections_and_other_sizes() -> None:
    filing = _filing(AAPL_10Q) | {"fiscal_year": 2025, "fiscal_period": "Q3"}
    chunks = chunk_filing(AAPL_10Q, filing, "Apple Inc.", 800, 120, 30)
    keys = {c.section_key for c in chunks}
    assert {"part_i_item_2", "part_ii_item_1a"} <= keys
    assert chunks[0].period == "FY2025 Q3" and " 10-Q FY2025 Q3, filed 2025-08-01 — " in (
        chunks[0].embed_text
    )
    assert not any(FURNITURE.search(c.parent_text) for c in chunks)
    _check_chunks(chunks, 800, 120)


@needs_bundle
@pytest.mark.parametrize(
    "folder", sorted(p.name for p in FILINGS.iterdir() if p.is_dir()) if FILINGS.is_dir() else []
)
def test_every_company_chunks(folder: str, con) -> None:
    """Each company's first filing, from the sections the store's ingest found in it (the
    same `sections()` call: parsing it again here would only repeat the build's work)."""
    path = sorted((FILINGS / folder).glob("*.htm"))[0]
    filing = _filing(path)
    found = con.execute(
        "SELECT section_key, title, text FROM filing_sections WHERE accession = ? ORDER BY ord",
        [filing["accession"]],
    ).fetchall()
    assert found, path
    chunks = chunk_sections(found, filing | {"path": str(path)}, folder)
    assert len(chunks) > 20
    _check_chunks(chunks, 2000, 300)
    assert not any(FURNITURE.search(c.parent_text) for c in chunks)
    assert any(c.section_key.endswith("item_1a") for c in chunks)


def test_markdown_table_from_node_tree() -> None:
    """Heading-detected sections render their node tree; "$" and "%" cells join their figures
    and colspans that wander inside a column still land in it."""
    from edgar.documents import ParserConfig
    from edgar.documents.parser import HTMLParser

    from fintrade_tui.retrieval.filing_text import node_text

    html = (
        "<html><body><p>Net sales by segment (dollars in millions):</p><table>"
        '<tr><td colspan="3"></td><td colspan="3">2024</td><td colspan="3">Change</td>'
        '<td colspan="3">2023</td></tr>'
        '<tr><td colspan="3">Americas</td><td>$</td><td>167,045</td><td></td>'
        '<td colspan="2">3</td><td>%</td><td>$</td><td>162,560</td><td></td></tr>'
        '<tr><td colspan="3">Europe</td><td colspan="2">101,328</td><td></td>'
        '<td colspan="2">(1)</td><td>%</td><td></td><td colspan="2">94,294</td></tr>'
        "</table><p>Americas net sales increased.</p></body></html>"
    )
    root = HTMLParser(ParserConfig(detect_sections=False)).parse(html).root
    text = clean_text(node_text(root))
    assert (
        "\n\n| | 2024 | Change | 2023 |\n|---|---|---|---|\n"
        "| Americas | $167,045 | 3% | $162,560 |\n| Europe | 101,328 | (1)% | 94,294 |\n\n"
    ).replace("| |", "|  |") in text
    assert text.endswith("Americas net sales increased.")


def test_sections_found_from_headings_keep_their_tables(tmp_path: Path) -> None:
    """A filing without a table of contents: edgartools finds the Items from their headings and
    their text comes from the node tree (parsed with edgartools' table processor), the table
    printed as markdown in place."""
    words = "<p>" + "We sell devices and services to customers in many countries. " * 6 + "</p>"
    table = (  # "$" in cells of their own: edgartools' table processor joins them
        '<table><tr><td colspan="3"></td><td colspan="3">2024</td><td colspan="3">2023</td></tr>'
        '<tr><td colspan="3">Net sales</td><td>$</td><td>391,035</td><td></td>'
        "<td>$</td><td>383,285</td><td></td></tr></table>"
    )
    heading = '<p style="font-weight:bold;font-size:12pt">{}</p>'
    body = heading.format("PART I") + heading.format("Item 1. Business") + words + table + words
    body += heading.format("Item 1A. Risk Factors") + words + words
    path = tmp_path / "10-K_2024-11-01_0000000000-24-000001.htm"
    path.write_text(f"<html><body>{body}</body></html>")
    found = {key: (title, text) for key, title, text in sections(path)}
    assert set(found) == {"business", "risk_factors"}
    title, text = found["business"]
    assert title == "Item 1. Business"
    assert "\n\n|  | 2024 | 2023 |\n|---|---|---|\n| Net sales | $391,035 | $383,285 |\n\n" in text
    assert "|" not in found["risk_factors"][1]


def test_clean_text_drops_page_furniture_and_rejoins_pages() -> None:
    raw = (
        "Item 7.\xa0\xa0Management’s Discussion\n\nSales grew in\n\n"
        "Apple Inc. | Q3 2025 Form 10-Q | 13\n\n21\n\nTable of Contents\n\n"
        "every region.\n\n\n\n•iPhone\n\n| a | b |\n|---|---|\n| x | 1 |"
    )
    assert clean_text(raw) == (
        "Item 7. Management’s Discussion\n\nSales grew in every region.\n\n• iPhone\n\n"
        "| a | b |\n|---|---|\n| x | 1 |"
    )


def test_parents_keep_tables_whole_and_children_overlap() -> None:
    prose = " ".join(f"Sentence number {i} is here." for i in range(60))  # 360 tokens
    table = "| k | v |\n|---|---|\n" + "\n".join(f"| row {i} | {i},000 |" for i in range(20))
    text = f"Heading\n\n{prose}\n\nA table\n\n{table}\n\n{prose}"
    ps = parents(text, 400)
    assert sum(table in p for p in ps) == 1  # not split: it fits a parent on its own
    assert all(approx_tokens(p) <= 400 for p in ps)
    assert any(p.startswith("A table\n\n|") for p in ps)  # its lead-in heading moves with it
    big = parents(table * 3, 100)  # a table over the size: split by rows, header repeated
    assert len(big) > 1 and all(p.startswith("| k | v |\n|---|") for p in big)
    spans = children(prose, 50, 10)
    assert all(approx_tokens(prose[a:b]) <= 50 for a, b in spans)
    assert all(b1 > a2 for (_, b1), (a2, _) in zip(spans, spans[1:], strict=False))
    assert prose[spans[0][0] :].startswith("Sentence") and spans[-1][1] == len(prose)
    assert all(prose[a - 2] == "." for a, _ in spans[1:])  # cut after a sentence
