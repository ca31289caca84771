"""What a RAG run over the universe (a scan naming ~100 tickers) asks the index to build: nothing
once every ticker with prices is held. The seeds' universe names tickers the store has no
prices for (KFT, PCLN): they never get a market track, and counting them missing rebuilt the
track of all ~100 tickers on every such run (~5-10 s each, before any model call)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fintrade_tui.config import Config
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.retrieval.index import Index
from fintrade_tui.retrieval.indexing import eligible_all, ensure_index, needs_market
from fintrade_tui.retrieval.stored_text import text_keys
from fintrade_tui.store.db import connect
from tests.conftest import BUNDLE, needs_bundle

pytestmark = needs_bundle
SEEDS = BUNDLE / "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"


def _index_holding(cfg: Config, con, tickers: list[str], market: list[str]) -> Index:
    """An index whose manifest holds every filing of `tickers` as the store has it now and the
    market track of `market` (what the functions under test read; no table is needed)."""
    index = Index(cfg)
    index.path.mkdir(parents=True, exist_ok=True)
    filings = eligible_all(con, tickers, None)
    keys = text_keys(con, cfg, filings)
    manifest = {
        "model": index.model_key(),
        "filings": {a: keys.get(a, "no sections") for a in filings},
        "market": {f"mkt:{t}:2024-Q3": "h" for t in market},
    }
    index.manifest_path.write_text(json.dumps(manifest))
    return index


def test_a_universe_question_held_by_the_index_builds_nothing(
    built_store: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = built_store.model_copy(deep=True)
    cfg.retrieval.index = tmp_path / "index"
    since = cfg.retrieval.market_since
    with connect(cfg.store, read_only=True) as con:
        r = Resolver(con, cfg.questions.reference_date)
        [scan] = [r.resolve(q) for q in read_questions(SEEDS) if q.id == "T2"]
        assert len(scan.tickers) > 50
        priced = {
            t
            for (t,) in con.execute(
                "SELECT DISTINCT ticker FROM prices WHERE date >= ?", [since]
            ).fetchall()
        }
        unpriced = [t for t in scan.tickers if t not in priced]
        assert {"KFT", "PCLN"} <= set(unpriced)
        held = [t for t in scan.tickers if t in priced]
        index = _index_holding(cfg, con, scan.tickers, held)
        assert needs_market(index, con, scan.tickers) == []
        # one priced ticker without its market track: it alone is missing
        index = _index_holding(cfg, con, scan.tickers, [t for t in held if t != "MSFT"])
        assert needs_market(index, con, scan.tickers) == ["MSFT"]

    built: list[tuple[list[str], list[str]]] = []
    monkeypatch.setattr(
        Index,
        "build",
        lambda self, con, progress, tickers, accessions: built.append((tickers, accessions)),
    )
    said: list[str] = []
    ensure_index(cfg, scan.tickers, said.append)
    assert built == [(["MSFT"], [])]  # MSFT's track, not the universe's
    with connect(cfg.store, read_only=True) as con:
        _index_holding(cfg, con, scan.tickers, held)
    built.clear()
    ensure_index(cfg, scan.tickers, said.append)
    assert built == [] and len(said) == 1


def test_text_keys_are_read_again_when_the_store_changes(built_store: Config, tmp_path: Path):
    """Kept per store state: a write (in the WAL before its checkpoint, or after it) is seen."""
    import shutil

    import duckdb

    from fintrade_tui.retrieval.indexing import cached_text_keys

    store = tmp_path / "store.duckdb"
    shutil.copyfile(built_store.store, store)
    cfg = built_store.model_copy(update={"store": store})
    con = duckdb.connect(str(store))
    [acc] = con.execute("SELECT accession FROM filing_sections LIMIT 1").fetchone()
    before = cached_text_keys(con, cfg, [acc])
    assert cached_text_keys(con, cfg, [acc]) is before  # the same state: not read again
    con.execute("UPDATE filing_sections SET text = text || ' (amended)' WHERE accession = ?", [acc])
    after = cached_text_keys(con, cfg, [acc])
    assert after[acc] != before[acc] and after == text_keys(con, cfg, [acc])
    con.execute("CHECKPOINT")
    assert cached_text_keys(con, cfg, [acc]) == after
    con.close()
