"""Questions screen (a package): the question bank as a table with filters (category, ticker,
quarter, resolution/coverage status) and a detail panel for the highlighted question — text,
tickers, as_of, window, golden indicators, oracle values with provenance, reference answer,
coverage gaps. `a` (or Enter) opens the question in the Arena, `A` its item audit.

Filters that select nothing never leave an empty list without a way on: a line names the
nearest quarter with questions under the other filters (or the filters to drop) and `n` applies
it. Escape in a filter returns to the table; on the table it goes back (Company, Universe...).

The bank is read once in a worker thread; filtering is in memory on the UI thread.

Rooms: filters.py (quarters, filtering, the nearest filters: no widgets), state.py (the one
`QuestionsState` the screen creates and hands on), table.py (the table, the nearest line and
the detail), screen.py (layout, keys, the worker, actions)."""

from .filters import (
    describe,
    filter_questions,
    nearest,
    nearest_line,
    quarter_end,
    quarter_name,
    quarter_start,
)
from .screen import QuestionsScreen
from .state import QuestionsState

__all__ = [
    "QuestionsScreen",
    "QuestionsState",
    "describe",
    "filter_questions",
    "nearest",
    "nearest_line",
    "quarter_end",
    "quarter_name",
    "quarter_start",
]
