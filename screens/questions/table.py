"""Questions screen's table room, on the UI thread: the filters as the widgets hold them, the
table of the questions they select (column widths from the whole bank), the line offering the
nearest filters when they select nothing, the highlighted question's detail, and the filter
options once the bank is read. Plain functions over the state and the screen's widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.screen import Screen
from textual.widgets import DataTable, Input, Markdown, Select, Static

from fintrade_tui.safe_text import plain
from fintrade_tui.ui.tables import set_columns

from .filters import (
    ALL,
    CATEGORIES,
    filter_questions,
    nearest,
    nearest_line,
    quarter_end,
    quarter_name,
)
from .state import QuestionsState

if TYPE_CHECKING:
    from fintrade_tui.workspace.questions import Question

COLUMNS = ("ID", "Cat", "Tickers", "As of", "Status", "Coverage", "Question")


def row_cells(q: Question) -> tuple[Text, ...]:
    """A question's row: a benchmark's ids, tickers and text are data, never markup."""
    text = " ".join(q.text.split())
    tickers = ", ".join(q.tickers[:3])
    tickers += f" +{len(q.tickers) - 3}" if len(q.tickers) > 3 else ""
    return (
        plain(q.id),
        plain(q.category),
        plain(tickers),
        plain(q.as_of.isoformat() if q.as_of else "—"),
        plain(q.status),
        plain(q.coverage),
        plain(text if len(text) <= 44 else text[:43] + "…"),
    )


def select_value(select: Select[Any]) -> Any:
    """A Select's value as a filter: None for "All"."""
    v = select.value
    return None if v in (ALL, Select.NULL) else v


def read_filters(screen: Screen[Any]) -> dict[str, Any]:
    """The filters as set: category, ticker, quarter (a quarter end), status."""
    return {
        "category": select_value(screen.query_one("#q-category", Select)),
        "ticker": screen.query_one("#q-ticker", Input).value,
        "quarter": select_value(screen.query_one("#q-quarter", Select)),
        "status": select_value(screen.query_one("#q-status", Select)),
    }


def loaded(screen: Screen[Any], state: QuestionsState, questions: list[Question]) -> None:
    """The bank as read: its categories and quarters as options (the quarter the screen
    opened on picked), then the table."""
    state.questions = questions
    cats = [*CATEGORIES, *sorted({q.category for q in questions} - set(CATEGORIES))]
    state.options["#q-category"] = [ALL, *cats]
    screen.query_one("#q-category", Select).set_options([("All", ALL), *[(c, c) for c in cats]])
    quarters = {quarter_end(q.as_of) for q in questions if q.as_of}
    if state.initial_quarter:
        quarters.add(quarter_end(state.initial_quarter))
    state.options["#q-quarter"] = [ALL, *sorted(quarters)]
    select = screen.query_one("#q-quarter", Select)
    select.set_options([("All", ALL), *[(quarter_name(d), d) for d in sorted(quarters)]])
    if state.initial_quarter:
        select.value = quarter_end(state.initial_quarter)
        state.initial_quarter = None
    refresh(screen, state)


def refresh(screen: Screen[Any], state: QuestionsState) -> None:
    """The questions the filters select, the nearest-filters line, the count, the detail."""
    table = screen.query_one("#questions", DataTable)
    filters = read_filters(screen)
    state.shown = filter_questions(state.questions, **filters)
    state.suggested = nearest(state.questions, filters)
    line = screen.query_one("#q-nearest", Static)
    line.display = state.suggested is not None
    if state.suggested is not None:
        line.update(plain(nearest_line(state.questions, filters, state.suggested)))
    screen.refresh_bindings()  # `n` shows in the footer only when there is something to apply
    # widths from every question: a filter never changes them
    set_columns(table, COLUMNS, [row_cells(q) for q in state.questions])
    for q in state.shown:
        table.add_row(*row_cells(q), key=q.id)
    count = f"{len(state.shown)} of {len(state.questions)}"
    screen.query_one("#q-count", Static).update(count)
    show_detail(screen, state)


def current(screen: Screen[Any], state: QuestionsState) -> Question | None:
    """The question under the table's cursor."""
    table = screen.query_one("#questions", DataTable)
    if not state.shown or table.cursor_row < 0 or table.cursor_row >= len(state.shown):
        return None
    return state.shown[table.cursor_row]


def show_detail(screen: Screen[Any], state: QuestionsState) -> None:
    from fintrade_tui.exports.question_markdown import question_markdown

    q = current(screen, state)
    md = screen.query_one("#q-detail", Markdown)
    if q is None:
        md.update("_No question matches the filters._" if state.questions else "")
    else:
        md.update(question_markdown(q, oracle_as_list=True))


def cycle(screen: Screen[Any], state: QuestionsState, select_id: str) -> None:
    """The next option of the Select `select_id` (after the last: the first)."""
    select = screen.query_one(select_id, Select)
    values = state.options[select_id]
    i = values.index(select.value) if select.value in values else -1
    select.value = values[(i + 1) % len(values)]


def apply_nearest(screen: Screen[Any], state: QuestionsState) -> bool:
    """Set the suggested filters (the nearest quarter with questions, or fewer filters) and
    show what they select; False when there is nothing to apply."""
    f = state.suggested
    if f is None:
        return False
    screen.query_one("#q-category", Select).value = f["category"] or ALL
    screen.query_one("#q-status", Select).value = f["status"] or ALL
    screen.query_one("#q-quarter", Select).value = f["quarter"] or ALL
    screen.query_one("#q-ticker", Input).value = f["ticker"] or ""
    refresh(screen, state)  # now, not when the Changed messages arrive
    return True
