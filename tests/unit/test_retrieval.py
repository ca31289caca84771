"""Retrieval over a real index of four AAPL filings: incremental build, point-in-time, bad input."""

from __future__ import annotations

import random
import re
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.retrieval.index import Index
from fintrade_tui.retrieval.search import MODES, retrieve
from tests.conftest import needs_bundle, write_config

pytestmark = needs_bundle
FIELDS = {
    "id",
    "track",
    "ticker",
    "form",
    "accession",
    "filed",
    "section",
    "period",
    "scores",
    "text",
    "parent_id",
    "parent_text",
    "source_path",
    "char_start",
    "char_end",
}

# Half of AAPL's eight filings, at the product's own chunk and embedding settings (embedding is
# nearly all of the build): the FY2024 10-K the risk-factor query must find, a 10-Q filed before
# it and two after it, so an as_of between them still has filings on both sides, and later
# 10-Qs still repeat passages of earlier filings
FILED = (date(2024, 5, 3), date(2024, 11, 1), date(2025, 1, 31), date(2025, 8, 1))


@pytest.fixture(scope="module")
def indexed(built_store: Config, tmp_path_factory) -> tuple[Config, list]:
    folder = tmp_path_factory.mktemp("index")
    path = write_config(
        folder,
        built_store.bundle,
        built_store.store,
        f"retrieval:\n  index: {folder / 'lancedb'}\n",
    )
    from fintrade_tui.config import load_config

    cfg = load_config(path)
    con = duckdb.connect(str(cfg.store), read_only=True)
    rows = con.execute("SELECT accession, filed FROM filings WHERE ticker = 'AAPL'").fetchall()
    accessions = [a for a, filed in rows if filed in FILED]
    assert len(accessions) == len(FILED)
    first = Index(cfg).build(con, tickers=["AAPL"], accessions=accessions)
    second = Index(cfg).build(con, tickers=["AAPL"], accessions=accessions)
    con.close()
    return cfg, [first, second]


def test_index_builds_and_a_second_run_embeds_nothing(indexed) -> None:
    _, (first, second) = indexed
    assert first.filings == len(FILED) and first.filings_embedded == len(FILED)
    assert first.filing_chunks > 300 and first.market_chunks > 20
    assert first.chunks_shared > 0  # AAPL's 10-Qs repeat passages of earlier filings
    assert first.chunks_embedded + first.chunks_shared == first.filing_chunks + first.market_chunks
    assert second.chunks_embedded == 0 and second.filings_embedded == 0
    assert (second.filing_chunks, second.market_chunks) == (
        first.filing_chunks,
        first.market_chunks,
    )


def test_a_repeated_passage_shares_the_vector_of_its_newest_copy(indexed) -> None:
    """Copies keep their own filing and dates; their vector is the newest copy's embedding,
    recomputed here from that copy's own embedding text."""
    from fintrade_tui.retrieval import embed, filing_text
    from fintrade_tui.retrieval.stored_text import filing_rows, stored_sections

    cfg, (first, _) = indexed
    tbl = Index(cfg).open_table("filing")
    rows = tbl.search().select(["id", "accession", "filed", "text", "vector"]).limit(99999)
    by_text: dict[str, list[dict]] = {}
    for row in rows.to_list():
        by_text.setdefault(row["text"], []).append(row)
    repeated = [v for v in by_text.values() if len({r["accession"] for r in v}) > 1]
    assert sum(len(v) - 1 for v in by_text.values()) == first.chunks_shared
    copies = max(repeated, key=len)
    newest = max(copies, key=lambda r: r["filed"])
    assert len({r["accession"] for r in copies}) == len(copies)  # one per filing, own metadata
    for r in copies:
        assert r["vector"] == newest["vector"]
    con = duckdb.connect(str(cfg.store), read_only=True)
    f = next(f for f in filing_rows(con) if f["accession"] == newest["accession"])
    chunks = filing_text.chunk_sections(stored_sections(con, f["accession"]), f, f["company"])
    con.close()
    mine = next(c for c in chunks if c.id == newest["id"])
    again = embed.embed([mine.embed_text], **embed.settings(cfg.retrieval))[0]
    assert float(again @ newest["vector"]) > 0.9999
    other = next(r for r in copies if r is not newest)
    theirs = next(c for c in chunks if c.text == other["text"])
    assert other["id"] != theirs.id  # the older copy is a row of its own filing


def test_hybrid_finds_apple_risk_factors(indexed) -> None:
    cfg, _ = indexed
    items = retrieve(
        cfg, "Apple risk factors about China supply chain", ["AAPL"], date(2025, 9, 30)
    )
    assert items and set(items[0]) >= FIELDS
    top = items[0]
    assert (top["track"], top["form"], top["filed"]) == ("filing", "10-K", date(2024, 11, 1))
    assert top["section"].startswith("Item 1A")
    for it in items:
        if it["track"] == "filing":  # a month's parent is its quarter summary, not a superset
            assert it["parent_text"][it["char_start"] : it["char_end"]] == it["text"]
        assert set(it["scores"]) == {"dense", "text", "fused", "rerank"}


@pytest.mark.parametrize("mode", MODES)
def test_nothing_from_after_as_of(indexed, mode: str) -> None:
    cfg, _ = indexed
    rng = random.Random(mode)
    queries = ["iPhone net sales", "risk factors tariffs", "RSI momentum", "share repurchases"]
    for _ in range(12):
        as_of = date(2023, 12, 1) + timedelta(days=rng.randrange(800))
        start = as_of - timedelta(days=rng.choice([30, 90, 365]))
        items = retrieve(cfg, rng.choice(queries), ["AAPL"], as_of, (start, as_of), k=10, mode=mode)
        for it in items:
            if it["track"] == "filing":
                assert it["filed"] <= as_of, (as_of, it["id"])
            else:
                assert start <= it["end"] <= as_of, (as_of, it["id"])
            # nor in the passage shown with it (a month's quarter summary may run past as_of)
            shown = re.findall(r"\b(\d{4}-\d{2}-\d{2})\b", it["text"] + it["parent_text"])
            assert all(date.fromisoformat(d) <= as_of for d in shown), (as_of, it["id"])


def test_as_of_before_any_filing_gives_nothing(indexed) -> None:
    cfg, _ = indexed
    assert retrieve(cfg, "risk factors", ["AAPL"], date(2023, 6, 1)) == []
    res = CliRunner().invoke(
        main,
        [
            "--config",
            str(cfg.source_file),
            "retrieve",
            "risk factors",
            "-t",
            "AAPL",
            "--as-of",
            "2023-06-01",
        ],
    )
    assert res.exit_code == 0 and "no evidence" in res.output


def test_bad_input(indexed, tmp_path: Path) -> None:
    cfg, _ = indexed
    with pytest.raises(UserError, match="empty"):
        retrieve(cfg, "  ", ["AAPL"], date(2025, 1, 2))
    with pytest.raises(UserError, match="MSFT"):
        retrieve(cfg, "risk", ["MSFT"], date(2025, 1, 2))  # in the store, not in this index
    for args in (
        ["retrieve", "risk", "-t", "ZZZZ", "--as-of", "2025-01-02"],
        ["retrieve", "", "-t", "AAPL", "--as-of", "2025-01-02"],
        ["retrieve", "risk", "-t", "AAPL", "--as-of", "2025-13-02"],
    ):
        res = CliRunner().invoke(main, ["--config", str(cfg.source_file), *args])
        assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
        assert "Traceback" not in res.output
    never = write_config(
        tmp_path, cfg.bundle, cfg.store, f"retrieval:\n  index: {tmp_path / 'none'}\n"
    )
    res = CliRunner().invoke(
        main, ["--config", str(never), "retrieve", "risk", "-t", "AAPL", "--as-of", "2025-01-02"]
    )
    assert res.exit_code == 2 and "fintrade-tui index" in res.output


def test_store_holds_each_filings_sections_as_edgartools_parses_them(con) -> None:
    """Indexing reads the section text ingest stored; it must be what the HTML parses to."""
    from fintrade_tui.retrieval.filing_text import sections

    path, form, acc = con.execute(
        "SELECT path, form, accession FROM filings WHERE ticker = 'AAPL' AND form = '10-Q'"
        " ORDER BY filed LIMIT 1"
    ).fetchone()
    stored = con.execute(
        "SELECT section_key, title, text FROM filing_sections WHERE accession = ? ORDER BY ord",
        [acc],
    ).fetchall()
    assert stored == sections(Path(path), form)
    per_filing = con.execute(
        "SELECT f.accession, count(s.accession) FROM filings f"
        " LEFT JOIN filing_sections s USING (accession) GROUP BY 1"
    ).fetchall()
    assert len(per_filing) == 55 and min(n for _, n in per_filing) >= 5
