"""Background indexing in the explorer: started for the filing companies, shown in the title."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fintrade_tui.config import Config, load_config
from fintrade_tui.retrieval import indexing
from fintrade_tui.ui.app import FinTradeApp
from tests.conftest import needs_bundle, write_config
from tests.ui.conftest import notices, until

pytestmark = needs_bundle


def _cfg(built_store: Config, folder: Path) -> Config:
    # long children of which MiniLM reads 32 word pieces: a filing indexes in a fraction of a
    # second, and the title and notice (the subject) count filings, not chunks or vectors
    extra = (
        f"retrieval:\n  index: {folder / 'lancedb'}\n  child_tokens: 4000\n  overlap_tokens: 0\n"
        "  embed_tokens: 32\n"
    )
    cfg = load_config(write_config(folder, built_store.bundle, built_store.store, extra))
    return cfg.model_copy(update={"workspace": folder / "ws.duckdb"})


async def test_index_in_background_queues_every_filing_company(
    built_store, con, tmp_path, monkeypatch
) -> None:
    queued: list[list[str]] = []
    monkeypatch.setattr(indexing.Background, "add", lambda self, t: queued.append(list(t)))
    app = FinTradeApp(_cfg(built_store, tmp_path), index_in_background=True)
    t0 = time.perf_counter()  # before the app starts: a slow start must not eat the delay
    async with app.run_test(size=(120, 40)) as pilot:
        first = app.screen  # the first screen is up before anything is queued
        await until(pilot, lambda: queued, what="the filing companies queued")
        # the subject is a delay: the indexer waits 2 s after the mount (a lower bound, which
        # a busy machine only makes longer)
        assert time.perf_counter() - t0 >= 2.0
        assert app.screen is first and type(first).__name__ == "UniverseScreen"
    want = [r[0] for r in con.execute("SELECT DISTINCT ticker FROM filings ORDER BY 1").fetchall()]
    assert queued == [want] and len(want) == 7


@pytest.mark.long  # the background indexer embeds a company's filings
async def test_title_shows_progress_then_a_ready_notice(built_store, tmp_path) -> None:
    cfg = _cfg(built_store, tmp_path)
    app = FinTradeApp(cfg)
    titles: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        app.watch(app, "title", lambda title: titles.append(title))  # each, as it changes
        sent = notices(app)
        bg = indexing.background(cfg)
        # AAPL: 8 filings, the smallest of the bundle. The indexer is held before its first
        # filing (as while a model answers) until the title has shown it: a quick index must
        # not finish between two of the title's once-a-second updates
        with indexing.busy():
            app.follow_indexing(["AAPL"])
            await until(
                pilot,
                lambda: any("filings · AAPL 10-" in t for t in titles),
                what="the title's progress on AAPL's first filing",
            )
        await until(
            pilot,
            lambda: not bg.status.running and app._index_timer is None,
            what="AAPL's filings indexed and the title's progress stopped",
            timeout=300,
        )
    shown = [t for t in titles if "indexing for RAG" in t]
    assert shown, titles[:5]
    assert any("/8 filings · AAPL 10-" in t for t in shown)
    assert titles[-1] == "fintrade-tui"  # back to the plain title once done
    assert any("8 filings of 1 company ready" in m for m in sent), sent
