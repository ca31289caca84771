"""Pilot tests of the Results screen's lane view (`l`: lane table + forest plot, equal to
stats.lanes on the same workspace), inter-annotator agreement (`a`: κ and α equal to sklearn /
krippendorff called directly) and the disagreement view (`D`): two annotators 2+ apart are
listed, a bad score is refused in place, an adjudication is saved through ScoreStore."""

from __future__ import annotations

from pathlib import Path

import krippendorff
import pytest
from fintrade_tui.screens.disagreements import DisagreementsScreen
from fintrade_tui.screens.results import RESAMPLES, ResultsScreen
from sklearn.metrics import cohen_kappa_score
from textual.widgets import DataTable, Input, Static

from fintrade_tui.config import Config, load_config
from fintrade_tui.stats.lanes import workspace_lanes
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.ui.lanes_view import ForestPlot, LanesPane
from fintrade_tui.ui.results_text import lane_cells
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.scores import ScoreStore
from tests.conftest import BUNDLE, write_config
from tests.ui.conftest import settle
from tests.ui.results_app import SIZE, cells
from tests.unit.annotator_cases import second_annotator_scores
from tests.unit.test_failures_export import populate

ANA = [4, 5, 3, 5]  # accuracy of r01 r02 r07 r08 (populate)
BO = [4, 2, 3, 5]  # second_annotator_scores


@pytest.fixture
def ws_cfg(tmp_path: Path) -> Config:
    """A workspace with two annotators; the Results screen needs no store."""
    if not BUNDLE.is_dir():
        pytest.skip("sample bundle not at ../shared/data")
    ws_path = tmp_path / "workspace.duckdb"
    con = open_workspace(ws_path)
    populate(con)
    second_annotator_scores(con)
    con.close()
    folder = tmp_path / "cfg"
    return load_config(
        write_config(folder, BUNDLE, folder / "store.duckdb", f"workspace: {ws_path}\n")
    )


async def test_lanes_and_annotator_agreement_on_results(ws_cfg: Config) -> None:
    con = open_workspace(ws_cfg.workspace)
    try:
        want = workspace_lanes(con, "llm", n_resamples=RESAMPLES)
    finally:
        con.close()
    app = FinTradeApp(ws_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        pane = screen.query_one(LanesPane)
        assert not pane.display and screen.query_one("#accuracy", DataTable).display
        await pilot.press("l")
        await pilot.pause()
        assert pane.display and not screen.query_one("#accuracy", DataTable).display
        assert "Lanes" in str(screen.query_one("#accuracy-title", Static).render())
        (table,) = want  # one protocol: per_condition
        assert cells(screen.query_one("#lanes", DataTable)) == [
            lane_cells(r) for r in table["rows"]
        ]
        assert table["holm"]["family"] in str(screen.query_one("#lanes-note", Static).render())
        forest = screen.query_one(ForestPlot)
        assert [r["lane"] for r in forest.rows] == [
            r["lane"] for r in table["rows"] if r["delta"] is not None
        ]

        await pilot.press("a")
        await pilot.pause()
        grid = screen.query_one("#annotators", DataTable)
        assert grid.display and not screen.query_one("#agreement", DataTable).display
        rows = cells(grid)
        assert rows[0][:3] == ["accuracy", "all 2", "4"]
        alpha = krippendorff.alpha(reliability_data=[ANA, BO], level_of_measurement="ordinal")
        assert rows[0][4] == f"{round(alpha, 3):.2f}"
        kappa = cohen_kappa_score(ANA, BO, weights="quadratic", labels=[1, 2, 3, 4, 5])
        assert rows[1][:4] == ["accuracy", "ana – bo", "4", f"{round(kappa, 3):.2f}"]
        assert rows[1][5:] == ["75.00", "75.00"]


async def test_disagreement_view_adjudicates(ws_cfg: Config) -> None:
    app = FinTradeApp(ws_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DisagreementsScreen)
        grid = screen.query_one("#disagreements", DataTable)
        assert cells(grid) == [
            ["r02", "F1", "alpha", "rag", "accuracy", "ana 5, bo 2", "3", "—"],
            ["r07", "FT3", "beta", "no_rag", "completeness", "ana 3, bo 1", "2", "—"],
        ]
        detail = str(screen.query_one("#d-detail", Static).render())
        assert "Run r02 · accuracy: Apple's ROE is 0.90 and its D/E is 1.87." in detail
        # a bad score is refused in place, nothing saved
        screen.query_one("#d-score", Input).value = "7"
        screen.query_one("#d-reason", Input).value = "the figure is off"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "give a whole number 1 to 5" in str(screen.query_one("#d-error", Static).render())
        # the first row: score 3, reason, Enter in the reason field saves
        screen.query_one("#d-score", Input).value = "3"
        screen.query_one("#d-reason", Input).focus()
        await pilot.press("enter")
        await settle(pilot)
        stored = [
            s
            for s in ScoreStore(app.workspace_connection()).latest(kind="human")
            if s["annotator"] == "adjudicated"
        ]
        assert len(stored) == 1
        assert (stored[0]["run_id"], stored[0]["accuracy"], stored[0]["note"]) == (
            "r02",
            3,
            "the figure is off",
        )
        assert stored[0]["completeness"] is None
        assert cells(grid)[0][-1] == "3"  # reloaded: settled
        # an adjudicator who scored the run is refused, shown in place
        grid.move_cursor(row=1)
        screen.query_one("#d-score", Input).value = "2"
        screen.query_one("#d-adjudicator", Input).value = "ana"
        screen.query_one("#d-reason", Input).value = "mine"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "already scored run r07" in str(screen.query_one("#d-error", Static).render())
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ResultsScreen)
