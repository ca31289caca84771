"""Pilot test of the Results screen on the hand-populated workspace with one run (r02: alpha,
RAG, question F1) scored by two annotators (accuracy 5 and 1) and settled by an adjudicator
(4): the people's matrix shows the settled accuracy, the number `report --json` gives
(tests/unit/test_score_reader.py), and the lanes pane the Δ of the settled scores."""

from __future__ import annotations

from fintrade_tui.screens.results import ResultsScreen
from textual.widgets import DataTable

from fintrade_tui.config import Config
from fintrade_tui.stats.lanes import fmt_num
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.evidence import LABELS
from tests.ui.conftest import settle
from tests.ui.results_app import (
    SIZE,
    cells,
    results_ui_cfg,  # noqa: F401  (the fixture ui_cfg)
)
from tests.unit.test_score_reader import R01_RUN_SCORE, R02_RUN_SCORE, SETTLED_PCT, settle_r02


async def test_the_people_s_matrix_and_lanes_show_the_settled_score(ui_cfg: Config) -> None:
    with open_workspace(ui_cfg.workspace) as ws:
        settle_r02(ws)
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        await pilot.press("s")  # the people's scores
        await settle(pilot)
        assert screen.kind == "human"
        rows = {(r[0], r[1]): r for r in cells(screen.query_one("#accuracy", DataTable))}
        # model, condition, F, T, FT, overall, n: alpha's RAG run of F1 is r02 alone
        assert rows[("alpha", LABELS["rag"])][2].startswith(f"{SETTLED_PCT:.1f} ")
        lanes = {(r[0], r[1], r[2]): r for r in cells(screen.query_one("#lanes", DataTable))}
        assert lanes[("alpha", LABELS["rag"], "F")][4] == fmt_num(R02_RUN_SCORE - R01_RUN_SCORE)
