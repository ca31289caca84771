"""The Arena on FinTradeBench's F4 (issue 54, item 7): golden-indicator coverage is read from
the answer's text, judge or no judge, and the judge's listed metrics show beside it, never
instead of it. A RAG answer that names no ratio covers 0 of F4's 3 golden indicators however
the judge lists them (it listed all three, which once read as golden P/R/F1 1.00); an answer
stating ROE and ROA with their values covers 2 (its P/E is not E/P)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from fintrade_tui.config import Config
from tests.conftest import needs_bundle
from tests.ui.arena_app import JUDGE, ArenaApp
from tests.ui.conftest import f4_workspace, settle, until
from tests.ui.test_arena_open_reference import ANSWER as NAMED

pytestmark = needs_bundle
# a RAG answer from filing passages: figures, but no ratio named
RAG = (
    "Nvidia's data-center revenue grew 56% year over year to $41.1 billion, and its gross "
    "margin held near 72%. Demand for its accelerators still exceeds supply, so its "
    "profitability looks sustainable even at a premium valuation."
)
LISTED = JUDGE | {"metrics_used": ["Earnings/Price", "ROA", "ROE"]}  # the judge's list


@pytest.fixture
def f4_runs(built_store: Config, tmp_path: Path) -> tuple[Config, str, str]:
    answers = [("rag", RAG), ("no_rag", NAMED)]
    cfg, q, ids = f4_workspace(built_store, tmp_path / "workspace.duckdb", LISTED, answers)
    assert sorted(q.golden) == ["earnings_price", "roa", "roe"]
    return cfg, ids[0], ids[1]


def _scores(pane) -> str:
    return str(pane.query_one(".pane-scores", Static).render())


async def test_f4_coverage_from_the_text_with_the_judges_list_beside_it(f4_runs) -> None:
    cfg, rag, named = f4_runs
    app = ArenaApp(cfg, run_ids=[rag, named])
    async with app.run_test(size=(180, 50)) as pilot:
        await settle(pilot)
        panes = {p.run_id: p for p in app.screen.panes()}
        for pane in panes.values():
            await until(pilot, lambda p=pane: p.coverage is not None, what="the coverage")
        # no judge ran: the coverage read from the text alone
        shown = _scores(panes[rag])
        assert "golden coverage 0 of 3 from the text (none stated)" in shown
        assert "judge listed" not in shown
        assert "golden coverage 2 of 3 from the text (roa 21.31%, roe 33.38%)" in _scores(
            panes[named]
        )
        await pilot.press("j")
        for pane in panes.values():
            await until(
                pilot, lambda p=pane: (p.judge or {}).get("status") == "ok", what="the judge"
            )
        await settle(pilot)
        # the judge listed all three; the text still states none of them
        shown = _scores(panes[rag])
        assert (
            "golden coverage 0 of 3 from the text (none stated); "
            "the judge listed: earnings_price, roa, roe"
        ) in shown
        assert "golden P" not in shown and "F1 1.00" not in shown
        stored = panes[rag].judge["detail"]["golden_coverage"]
        assert stored["stated"] == [] and sorted(stored["missing"]) == sorted(stored["golden"])
        assert panes[named].judge["detail"]["golden_coverage"]["stated"] == ["roa", "roe"]
