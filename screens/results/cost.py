"""Results screen's cost room (`$`): in place of the accuracy matrix, per model × condition the
runs, tokens in and out, the recorded cost, the right answers and the cost per right answer
(reports/cost.py, the figures `report` prints and `report --json` carries), for the question
set in view and with the disputed references left out when the matrix leaves them out. Read
in a worker thread whenever the matrix is. Plain functions over the state and the screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen
from textual.widgets import DataTable

from fintrade_tui.safe_text import plain
from fintrade_tui.ui.tables import set_columns

from .state import ResultsState, Row

if TYPE_CHECKING:
    from fintrade_tui.ui.app import FinTradeApp

COST_CSS = """
ResultsScreen #cost { display: none; height: 1fr; }
ResultsScreen .cost #cost { display: block; }
ResultsScreen .cost #accuracy, ResultsScreen .cost #accuracy-note { display: none; }
ResultsScreen .cost #lanes-pane { display: none; }
"""
COST_HEADERS = ("Model", "Condition", "Runs", "Tokens in / out", "Cost", "Right", "Cost / right")


def cost_grid() -> DataTable[Any]:
    grid: DataTable[Any] = DataTable(id="cost", cursor_type="none", zebra_stripes=True)
    grid.add_columns(*COST_HEADERS)
    return grid


def cost_title(which: str) -> str:
    return f"Cost per model × condition · {which} (g, $: back to accuracy)"


def toggle_cost(screen: Screen[Any], state: ResultsState) -> None:
    """The cost table in place of the matrix, or the matrix back (the title is the caller's)."""
    state.show_cost = not state.show_cost
    screen.query_one("#acc-pane").set_class(state.show_cost, "cost")


def read_cost(state: ResultsState, app: FinTradeApp, source: str | None, leave: bool) -> list[Row]:
    """In a worker thread: the cost rows of `source` (all sets: None)."""
    from fintrade_tui.reports.cost import cost_rows
    from fintrade_tui.workspace.disputes import DisputeStore

    with state.db:
        cur = app.workspace()
        try:
            left_out = set(DisputeStore(cur, read_only=True).latest()) if leave else set()
            return cost_rows(cur, source, left_out)
        finally:
            cur.close()


def show_cost(screen: Screen[Any], rows: list[Row]) -> None:
    from fintrade_tui.reports.cost import shown

    grid = screen.query_one("#cost", DataTable)
    cells = [tuple(plain(str(v)) for v in shown(r).values()) for r in rows]
    set_columns(grid, COST_HEADERS, cells)  # names come from files: Text, never markup
    for row in cells:
        grid.add_row(*row)
