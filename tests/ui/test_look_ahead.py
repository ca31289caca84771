"""Pilot tests of the look-ahead mark (models/cutoffs.py) on the hand-populated workspace, with
alpha's knowledge cutoff (2025-03-01) after its questions' as-of dates and beta's unknown:
the Results filter `h` and the case detail, and the Arena's pane titles on a replay (with a
failed run's cause)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fintrade_tui.screens.results import KEYS
from textual.widgets import Checkbox, DataTable, Static

from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.ui.app import FinTradeApp
from tests.ui.arena_app import ArenaApp
from tests.ui.conftest import settle

SIZE = (160, 48)


@pytest.fixture
def cfg(built_store: Config, populated_workspace: Path) -> Config:
    c = built_store.model_copy(deep=True)
    c.workspace = populated_workspace
    c.models = c.models | {
        "alpha": ModelConfig(model="script/alpha", knowledge_cutoff="2025-03-01"),
        "beta": ModelConfig(model="script/beta"),
    }
    return c


async def test_results_list_what_alpha_may_know_and_h_hides_it(cfg: Config) -> None:
    app = FinTradeApp(cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        listed = [(c["filter"], c["run_ids"]) for c in screen.shown]
        # alpha's completed answers to F1 (as of 2024-11-01) and T2 (2024-09-30)
        mine = [c for c in listed if c[0] == "may_know"]
        assert mine == [("may_know", ["r01", "r02", "r08"]), ("may_know", ["r03", "r04"])]
        row = listed.index(mine[0])
        screen.query_one("#failures", DataTable).move_cursor(row=row)
        await pilot.pause()
        detail = str(screen.query_one("#case-detail", Static).render())
        line = (
            "may know the outcome: as of 2024-11-01, before alpha's knowledge cutoff 2025-03-01"
            " (configured)"
        )
        assert f"may know: {line}" in " ".join(detail.split())
        # another filter's case of a beta run carries its look-ahead too: unknown
        errors = next(i for i, c in enumerate(screen.shown) if c["filter"] == "errors")
        screen.query_one("#failures", DataTable).move_cursor(row=errors)
        await pilot.pause()
        detail = " ".join(str(screen.query_one("#case-detail", Static).render()).split())
        assert "look-ahead unknown: beta's knowledge cutoff is unknown" in detail
        await pilot.press(KEYS["may_know"])
        await pilot.pause()
        assert screen.query_one("#f-may_know", Checkbox).value is False
        assert [(c["filter"], c["run_ids"]) for c in screen.shown] == [
            c for c in listed if c[0] != "may_know"
        ]


async def test_arena_titles_mark_the_panes_whose_model_may_know(cfg: Config) -> None:
    # F1: alpha's No-RAG run (labelled incorrect: its cause undetermined, reports/causes.py),
    # its Oracle run, and beta's No-RAG error, replayed side by side
    app = ArenaApp(cfg, run_ids=["r01", "r08", "r05"], read_only=True)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        titles = {p.run_id: p.label for p in app.screen.panes()}
        assert titles == {
            "r01": "No-RAG · alpha · undetermined · may know (cutoff 2025-03-01)",
            "r08": "Oracle · alpha · may know (cutoff 2025-03-01)",
            "r05": "No-RAG · beta",
        }
