"""Pilot test of the Results screen's `m` (re-score) on the hand-built workspace of
tests/unit/test_rescore.py (no store, no model): the runs of the question set in view get new
`match` scores, the matrix then shows the matcher's verdicts (equal to accuracy_table on
score_rows computed here), the progress bar comes and goes, and nothing calls a model."""

from __future__ import annotations

import pytest
from fintrade_tui.screens.results import RESAMPLES, ResultsScreen
from textual.widgets import DataTable, ProgressBar

from fintrade_tui.config import Config
from fintrade_tui.reports.accuracy import score_rows
from fintrade_tui.stats.tables import LABELS_SCALE, accuracy_table, fmt_cell, shown_conditions
from fintrade_tui.ui.app import FinTradeApp
from tests.ui.conftest import notices, settle
from tests.unit.test_rescore import SELECTED, cfg, cfg_path  # noqa: F401 (fixtures)

SIZE = (160, 48)


def _match_runs(app: FinTradeApp) -> list[str]:
    cur = app.workspace()  # the app holds the workspace open
    try:
        rows = cur.execute("SELECT run_id FROM scores WHERE kind = 'match' ORDER BY 1").fetchall()
    finally:
        cur.close()
    return [r for (r,) in rows]


async def test_m_rescores_the_view_and_shows_the_matchers_matrix(
    cfg: Config,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import litellm

    def boom(*a, **k):
        raise AssertionError("a model was called")

    monkeypatch.setattr(litellm, "completion", boom)
    monkeypatch.setattr(litellm, "acompletion", boom)
    app = FinTradeApp(cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = notices(app)
        screen = app.screen
        assert isinstance(screen, ResultsScreen) and _match_runs(app) == []
        await pilot.press("m")
        await pilot.pause()
        bar = screen.query_one("#rescore-progress", ProgressBar)
        await settle(pilot)
        assert _match_runs(app) == SELECTED
        assert bar.total == len(SELECTED) and bar.progress == len(SELECTED)
        assert not screen.query_one("#r-bar").has_class("rescoring")  # the bar is hidden again
        assert notes[-1].startswith(f"{len(SELECTED)} runs re-scored in ")
        assert ("by the answer matcher (5 with a verdict, 1 without a reference, 1 left to the "
                "judge or a person)") in notes[-1]  # fmt: skip
        assert screen.kind == "match"
        cur = app.workspace()
        try:
            table = accuracy_table(score_rows(cur, "match"), n_resamples=RESAMPLES,
                                   scale=LABELS_SCALE)  # fmt: skip
        finally:
            cur.close()
        grid = screen.query_one("#accuracy", DataTable)
        shown = [[str(c) for c in grid.get_row_at(i)] for i in range(grid.row_count)]
        columns = table["categories"]
        want = [[fmt_cell(table["cells"][m][c][k]) for k in columns]
                for m in table["models"] for c in shown_conditions(table, m)]  # fmt: skip
        assert [row[2 : 2 + len(columns)] for row in shown] == want
        # the view's question set only: `g` picks the first set with matcher scores (byo)
        await pilot.press("g")
        await settle(pilot)
        assert screen.source == "byo"
        await pilot.press("m")
        await settle(pilot)
        assert notes[-1].startswith("4 byo runs re-scored in ")
        assert sorted(_match_runs(app)) == sorted(SELECTED + ["a3", "a4", "a5", "a6"])
