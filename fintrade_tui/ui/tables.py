"""UI room: DataTable columns as wide as the data they show, fixed when the columns are added.

A DataTable left to size its own columns measures new rows on its next Idle; until then every
column is as wide as its header, and on a busy machine that was still so when a screenshot or a
snapshot was taken. A screen that knows its rows gives each column the width of its widest
cell (or header) at `add_column` instead: the table is drawn at its final widths from the first
frame, with nothing left to measure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.protocol import is_renderable
from rich.text import Text
from textual.widgets import DataTable


def cell_width(cell: object) -> int:
    """Cells of a one-line row as DataTable draws them: a str is Rich markup, a float shows
    two decimals, a Text is its widest line, anything else not renderable is its str()."""
    if isinstance(cell, str):
        text = Text.from_markup(cell)
    elif isinstance(cell, Text):
        text = cell
    elif isinstance(cell, float):
        text = Text(f"{cell:.2f}")
    elif is_renderable(cell):
        raise TypeError(f"cannot size a column for a {type(cell).__name__} cell; pass Text")
    else:
        text = Text(str(cell))
    return max(cell_len(line) for line in text.plain.split("\n"))


def column_widths(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> list[int]:
    """Each column's widest cell, its header included (a row may be shorter than the headers:
    DataTable leaves the rest empty)."""
    widths = [cell_width(h) for h in headers]
    for row in rows:
        if len(row) > len(widths):
            raise ValueError(f"a row of {len(row)} cells for {len(widths)} columns")
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], cell_width(cell))
    return widths


def set_columns(table: DataTable, headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Empty the table, rows and columns, and add `headers` back as columns fixed at the width
    of their widest cell in `rows`: the rows about to be added, or every row the table may
    show (a filter then never changes a width)."""
    widths = column_widths(headers, rows)
    table.clear(columns=True)
    for header, width in zip(headers, widths, strict=True):
        table.add_column(header, width=width)
