"""Results screen's cost table (`$`): in place of the accuracy matrix, per model × condition the
runs, tokens in and out, the recorded cost, the right answers and the cost per right answer
(reports/cost.py, the figures `report` prints and `report --json` carries), for the question
set in view and with the disputed references left out when the matrix leaves them out. Read
in a worker thread whenever the matrix is."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.widgets import DataTable

from fintrade_tui.safe_text import plain

COST_CSS = """
ResultsScreen #cost { display: none; height: 1fr; }
ResultsScreen .cost #cost { display: block; }
ResultsScreen .cost #accuracy, ResultsScreen .cost #accuracy-note { display: none; }
ResultsScreen .cost #lanes-pane { display: none; }
"""
COST_HEADERS = ("Model", "Condition", "Runs", "Tokens in / out", "Cost", "Right", "Cost / right")


class CostView:
    """The ResultsScreen's `$` key, its worker and its table (mixed into the screen, which has
    the widgets, `_title()` and the `_db` lock)."""

    show_cost = False
    _db: Any

    def cost_grid(self) -> DataTable:
        grid: DataTable = DataTable(id="cost", cursor_type="none", zebra_stripes=True)
        grid.add_columns(*COST_HEADERS)
        return grid

    def action_toggle_cost(self) -> None:
        self.show_cost = not self.show_cost
        self.query_one("#acc-pane").set_class(self.show_cost, "cost")
        self.query_one("#accuracy-title").update(self._title())

    def cost_title(self, which: str) -> str:
        return f"Cost per model × condition · {which} (g, $: back to accuracy)"

    @work(thread=True, exclusive=True, group="cost", exit_on_error=False)
    def load_cost(self, source: str | None, leave: bool) -> list[dict[str, Any]]:
        from fintrade_tui.reports.cost import cost_rows
        from fintrade_tui.workspace.disputes import DisputeStore

        app: Any = self.app
        with self._db:
            cur = app.workspace()
            try:
                left_out = set(DisputeStore(cur, read_only=True).latest()) if leave else set()
                return cost_rows(cur, source, left_out)
            finally:
                cur.close()

    def _load_cost(self, rows: list[dict[str, Any]]) -> None:
        from fintrade_tui.reports.cost import shown
        from fintrade_tui.ui.tables import set_columns

        grid = self.query_one("#cost", DataTable)
        cells = [tuple(plain(str(v)) for v in shown(r).values()) for r in rows]
        set_columns(grid, COST_HEADERS, cells)  # names come from files: Text, never markup
        for row in cells:
            grid.add_row(*row)
