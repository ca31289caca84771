"""Staged indexing: a question's own filings first, the rest in the background, resumable."""

from __future__ import annotations

import sys
import time
from datetime import date
from pathlib import Path

import duckdb
import pytest

from fintrade_tui.config import Config, load_config
from fintrade_tui.retrieval import indexing
from fintrade_tui.retrieval.index import TABLE, Index, writer_lock
from fintrade_tui.retrieval.indexing import ensure_index
from tests.clock import wait_until
from tests.conftest import needs_bundle, write_config
from tests.reliability.kill_harness import run_until_stopped

pytestmark = needs_bundle
# few, long children of which MiniLM reads only the first 32 word pieces, so a filing embeds
# in a fraction of a second and the index's own work (chunking, LanceDB writes, the manifest)
# is most of a build: these tests are about which filings are whole in the index, never about
# the chunks' size or what a vector means
SMALL = (
    "retrieval:\n  index: {index}\n  child_tokens: {tokens}\n  overlap_tokens: 0\n"
    "  embed_tokens: 32\n"
)


def _cfg(built_store: Config, folder: Path, tokens: int = 4000) -> Config:
    extra = SMALL.format(index=folder / "lancedb", tokens=tokens)
    return load_config(write_config(folder, built_store.bundle, built_store.store, extra))


def _rows(cfg: Config, newest: bool = False) -> dict[str, int]:
    """Indexed filing chunks per accession, read from LanceDB itself: as the manifest
    committed the table, or (`newest`) with what a build wrote after it."""
    index = Index(cfg)
    tbl = index.db().open_table(TABLE["filing"]) if newest else index.open_table("filing")
    accs = tbl.search().select(["accession"]).limit(tbl.count_rows() or 1).to_arrow()
    out: dict[str, int] = {}
    for a in accs.column("accession").to_pylist():
        out[a] = out.get(a, 0) + 1
    return out


def _filings(con: duckdb.DuckDBPyConnection, ticker: str) -> list[tuple[str, str, date]]:
    return con.execute(
        "SELECT accession, form, filed FROM filings WHERE ticker = ? ORDER BY filed DESC", [ticker]
    ).fetchall()


def test_first_filing_is_the_newest_filed_by_as_of(con) -> None:
    rows = _filings(con, "NVDA")
    as_of = date(2025, 6, 30)
    eligible = [r for r in rows if r[2] <= as_of]
    assert indexing.first_filings(con, "NVDA", as_of) == [eligible[0][0]]
    assert eligible[0][2] < rows[0][2]  # not simply the newest filing: one filed by as_of
    assert indexing.eligible(con, "NVDA", as_of) == [r[0] for r in eligible]
    assert indexing.first_filings(con, "NVDA", date(2000, 1, 1)) == []


def test_staged_index_then_background_then_nothing_left(built_store, con, tmp_path) -> None:
    cfg = _cfg(built_store, tmp_path)
    as_of = date(2025, 6, 30)
    said: list[str] = []
    # AAPL (here and below where any company would do): 8 filings, the bundle's smallest
    ensure_index(cfg, ["AAPL"], said.append, None, as_of, staged=True)
    first = indexing.first_filings(con, "AAPL", as_of)
    bg = indexing.background(cfg)
    # what the question uses is indexed before ensure_index returns; the rest comes after
    assert set(first) <= set(Index(cfg).manifest()["filings"])
    assert bg.wait(300), "the background indexer did not finish"
    assert not bg.status.error
    everything = [r[0] for r in _filings(con, "AAPL")]
    assert set(_rows(cfg)) == set(everything)
    assert bg.status.done == bg.status.total == len(everything) - len(first)
    assert indexing.unindexed(Index(cfg), con, everything) == []
    assert Index(cfg).build(con, tickers=["AAPL"]).chunks_embedded == 0
    assert said and "AAPL" in said[0]


def test_coverage_note_names_what_retrieval_could_not_see(built_store, con, tmp_path) -> None:
    cfg = _cfg(built_store, tmp_path)
    as_of = date(2025, 6, 30)
    ensure_index(cfg, ["AAPL"], lambda m: None, None, as_of, staged=False)
    assert indexing.coverage(cfg, con, ["AAPL"], as_of) == ""
    indexing.background(cfg).stop()
    cfg2 = _cfg(built_store, tmp_path / "second")
    Index(cfg2).build(con, tickers=["AAPL"], accessions=indexing.first_filings(con, "AAPL", as_of))
    n = len([r for r in _filings(con, "AAPL") if r[2] <= as_of])
    note = indexing.coverage(cfg2, con, ["AAPL"], as_of)
    assert f"of the {n} filings filed by 2025-06-30" in note


KILLED = """
import sys
from fintrade_tui.config import load_config
from fintrade_tui.retrieval import indexing
bg = indexing.background(load_config(sys.argv[1]))
bg.add(["AAPL"])
bg.wait(300)  # stops itself at its third filing, before this returns
print(f"indexed {bg.status.done} filings without stopping: {bg.status.error}", flush=True)
"""


def test_a_killed_background_indexer_resumes_where_it_stopped(built_store, con, tmp_path) -> None:
    """SIGKILL mid-way through the third filing (its rows written, the manifest not yet):
    every filing the manifest lists is whole in LanceDB, and a new start indexes only the
    rest."""
    cfg = _cfg(built_store, tmp_path)
    third = "index.filing-rows-written:3"  # each filing is a build of its own
    out = run_until_stopped([str(cfg.source_file)], third, program=[sys.executable, "-c", KILLED])
    assert out.killed and out.survivors == []
    listed = set(Index(cfg).manifest()["filings"])
    rows = _rows(cfg)
    assert len(listed) == 2 and listed <= set(rows)  # nothing listed is missing from LanceDB
    assert len(set(_rows(cfg, newest=True)) - listed) == 1  # the third's rows, not listed
    everything = [a for a, _, _ in _filings(con, "AAPL")]
    left = indexing.unindexed(Index(cfg), con, everything)
    assert 0 < len(left) < len(everything)
    bg = indexing.background(cfg)
    bg.add(["AAPL"])
    assert bg.wait(300) and not bg.status.error
    assert bg.status.done == len(left)
    # a filing cut off mid-write was embedded again whole: no duplicated chunks
    s = Index(cfg).build(con, tickers=["AAPL"])
    assert s.chunks_embedded == 0 and s.filing_chunks == sum(_rows(cfg).values())
    assert set(_rows(cfg)) == set(everything)


@pytest.mark.parametrize("stage", ["pause", "stop"])
def test_a_paused_or_stopped_indexer_writes_no_part_of_a_filing(
    built_store, con, tmp_path, stage
) -> None:
    cfg = _cfg(built_store, tmp_path)
    bg = indexing.background(cfg)
    bg.add(["AAPL"])  # the smallest filings: the subject is the pause
    wait_until(lambda: bg.status.done >= 1 or not bg.status.running, timeout=300)
    if stage == "pause":
        indexing.pause_background()
        with writer_lock(cfg.retrieval.index):  # taken once the filing in hand is dropped
            held = dict(_rows(cfg))
        time.sleep(2)  # the subject: a paused indexer writes nothing for as long as it lasts
        assert _rows(cfg) == held  # nothing is written while a model answers
        indexing.resume_background()
        assert bg.wait(300)
        assert indexing.unindexed(Index(cfg), con, list(_rows(cfg))) == []
    else:
        bg.stop()
        assert bg.wait(60)
    listed = set(Index(cfg).manifest()["filings"])
    assert listed == set(_rows(cfg))


def test_another_embedding_setting_drops_every_old_vector(built_store, con, tmp_path) -> None:
    """A staged build after the option changed must not leave the old vectors searchable."""
    cfg = _cfg(built_store, tmp_path)
    accs = [r[0] for r in _filings(con, "NVDA")]
    Index(cfg).build(con, tickers=["NVDA"], accessions=accs[:3])
    assert set(_rows(cfg)) == set(accs[:3])
    cfg.retrieval.embed_tokens = 64  # another model key: the index is rebuilt
    Index(cfg).build(con, tickers=["NVDA"], accessions=accs[:1])
    assert set(_rows(cfg)) == {accs[0]}
    assert set(Index(cfg).manifest()["filings"]) == {accs[0]}
    assert Index(cfg).manifest()["model"].endswith(":64")


def test_a_later_filing_reuses_the_stored_vector_of_a_repeated_passage(
    built_store, con, tmp_path
) -> None:
    cfg = _cfg(built_store, tmp_path, tokens=1500)  # shorter passages: more repeat word for word
    (new, *_), (old, *_) = _filings(con, "NVDA")[:2]
    Index(cfg).build(con, tickers=["NVDA"], accessions=[new])
    s = Index(cfg).build(con, tickers=["NVDA"], accessions=[old])
    assert s.chunks_shared > 0 and s.chunks_embedded + s.chunks_shared == _rows(cfg)[old]
    tbl = Index(cfg).open_table("filing")
    got = tbl.search().select(["accession", "text", "vector"]).limit(99999).to_list()
    stored = {r["text"]: r["vector"] for r in got if r["accession"] == new}
    repeats = [r for r in got if r["accession"] == old and r["text"] in stored]
    assert len(repeats) == s.chunks_shared
    assert all(r["vector"] == stored[r["text"]] for r in repeats)
