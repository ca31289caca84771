"""Results screen's failure-case room, on the UI thread: the filter toggles (one key each), the
cause filter (`y`), the table of the cases they leave in view and the highlighted case's detail.
Plain functions over the state and the screen's widgets."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Static

from fintrade_tui.reports.failures import FILTER_LABELS, FILTERS
from fintrade_tui.ui.results_text import FAILURE_HEADERS, case_text, failure_cells
from fintrade_tui.ui.tables import set_columns

from .state import Case, ResultsState

KEYS = {  # a filter's toggle key
    "rag_worse": "r",
    "disagree": "d",
    "contradicted": "c",
    "judge_audit": "j",  # the judge calls it right, the audit contradicts a figure
    "errors": "e",
    "unrated": "u",
    "incorrect": "i",
    "refusal": "f",
    "oracle_flip": "o",
    "may_know": "h",  # hindsight
    "fatal_flaw": "k",
}


def toggle_labels() -> list[tuple[str, str]]:
    """(filter, its checkbox's label), in the keys' order."""
    return [(name, f"{FILTER_LABELS[name]} ({key})") for name, key in KEYS.items()]


def cause_label(state: ResultsState) -> str:
    from fintrade_tui.reports.causes import CAUSE_LABELS

    return f" cause: {CAUSE_LABELS[state.cause] if state.cause else 'any'} (y)"


def next_cause(screen: Screen[Any], state: ResultsState) -> None:
    """Show only the cases of one cause, then the next, then all again."""
    from fintrade_tui.reports.causes import CAUSES

    options: list[str | None] = [None, *CAUSES]
    state.cause = options[(options.index(state.cause) + 1) % len(options)]
    screen.query_one("#f-cause", Static).update(cause_label(state))
    refresh(screen, state)


def enabled(screen: Screen[Any]) -> set[str]:
    """The filters whose toggle is on."""
    return {name for name in FILTERS if screen.query_one(f"#f-{name}", Checkbox).value}


def filters_line(screen: Screen[Any]) -> str:
    """The filters on, as the view export's subtitle names them."""
    return ", ".join(FILTER_LABELS[f] for f in sorted(enabled(screen))) or "none"


def refresh(screen: Screen[Any], state: ResultsState) -> None:
    """The cases the filters and the cause leave, in the table; the detail of the one under the
    cursor."""
    on_now = enabled(screen)
    state.shown = [
        c for c in state.cases if c["filter"] in on_now and state.cause in (None, c.get("cause"))
    ]
    grid = screen.query_one("#failures", DataTable)
    # widths from every case: a filter toggled never changes them
    set_columns(grid, FAILURE_HEADERS, [failure_cells(c) for c in state.cases])
    for c in state.shown:
        grid.add_row(*failure_cells(c), key=c["key"])
    show_case(screen, state)


def current(screen: Screen[Any], state: ResultsState) -> Case | None:
    """The case under the table's cursor."""
    grid = screen.query_one("#failures", DataTable)
    if not state.shown or not 0 <= grid.cursor_row < len(state.shown):
        return None
    return state.shown[grid.cursor_row]


def show_case(screen: Screen[Any], state: ResultsState) -> None:
    detail = screen.query_one("#case-detail", Static)
    case = current(screen, state)
    if case is None:
        detail.update(
            Text("No failure cases under these filters.", style="italic")
            if state.cases or not enabled(screen)
            else Text("No failure cases.", style="italic")
        )
        return
    detail.update(case_text(case))
