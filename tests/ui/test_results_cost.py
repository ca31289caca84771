"""What the runs cost beside what they got right, per model × condition: `report --json`'s
`cost` and the Results screen's cost table (`$`), on the hand-populated workspace
(tests/unit/test_failures_export.py) with a cost written on each run. The expected figures are
worked out here by hand from that workspace: which runs are right follows from its scores by
the reports' rule (a judge's 4 or 5 right, a person's score or label overruling it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fintrade_tui.screens.results import ResultsScreen
from textual.widgets import DataTable, Static

from fintrade_tui.cli import main
from fintrade_tui.config import Config
from fintrade_tui.reports.cost import shown
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.connection import open_workspace
from tests.conftest import write_config
from tests.ui.conftest import settle

SIZE = (160, 48)
# run -> cost written on it (r06 none: a run without a price); every run has 900 in, 60 out
COSTS = {"r01": 0.001, "r02": 0.002, "r03": 0.003, "r04": 0.004, "r05": 0.005, "r07": 0.007}
COSTS["r08"] = 0.008


def _row(model, condition, runs, completed, priced, cost, right, with_verdict, per_right):
    return {
        "model": model,
        "condition": condition,
        "runs": runs,
        "completed": completed,
        "tokens_in": 900 * runs,
        "tokens_out": 60 * runs,
        "priced": priced,
        "cost": cost,
        "right": right,
        "with_verdict": with_verdict,
        "cost_per_right": per_right,
    }


# r01 wrong (a person's label "incorrect" overrules the judge's 4), r02 right (the judge's 2,
# a person's 5 overruling it), r03 no verdict (judge 3), r04 right (judge 4), r05 (error) and
# r06 (time-out) unscored, r07 refused (a label), r08 right (judge 5, label "correct")
EXPECTED = [
    _row("alpha", "no_rag", 2, 2, 2, 0.004, 0, 1, None),
    _row("alpha", "rag", 2, 2, 2, 0.006, 2, 2, 0.003),
    _row("alpha", "oracle", 1, 1, 1, 0.008, 1, 1, 0.008),
    _row("beta", "no_rag", 2, 1, 2, 0.012, 0, 1, None),
    _row("beta", "rag", 1, 0, 0, None, 0, 0, None),
]


@pytest.fixture
def ui_cfg(built_store: Config, populated_workspace: Path) -> Config:
    with open_workspace(populated_workspace) as ws:
        for rid, cost in COSTS.items():
            ws.execute("UPDATE runs SET cost = ? WHERE id = ?", [cost, rid])
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = populated_workspace
    return cfg


def test_report_json_carries_cost_and_cost_per_right_answer(ui_cfg: Config, tmp_path: Path) -> None:
    extra = f"workspace: {ui_cfg.workspace}\n"
    config = write_config(tmp_path / "cfg", ui_cfg.bundle, ui_cfg.store, extra=extra)
    res = CliRunner().invoke(main, ["--config", str(config), "report", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["cost"] == [pytest.approx(r) for r in EXPECTED]
    text = CliRunner().invoke(main, ["--config", str(config), "report"])
    assert "cost per model × condition" in text.stdout and "$0.003000" in text.stdout


async def test_dollar_swaps_the_matrix_for_the_cost_table(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        grid = screen.query_one("#cost", DataTable)
        assert not grid.display and screen.query_one("#accuracy", DataTable).display
        await pilot.press("dollar_sign")
        await settle(pilot)
        assert grid.display and not screen.query_one("#accuracy", DataTable).display
        title = str(screen.query_one("#accuracy-title", Static).render())
        assert title.startswith("Cost per model × condition")
        cells = [[str(c) for c in grid.get_row_at(i)] for i in range(grid.row_count)]
        assert cells == [list(map(str, shown(r).values())) for r in EXPECTED]
        assert cells[1][-1] == "$0.003000" and cells[4][4] == "—"  # alpha RAG; beta RAG unpriced
        await pilot.press("dollar_sign")
        await settle(pilot)
        assert not grid.display and screen.query_one("#accuracy", DataTable).display
