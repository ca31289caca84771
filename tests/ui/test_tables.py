"""Column widths from the data (ui/tables.py): each column is as wide as its widest cell as
DataTable draws it, fixed when the columns are added, so a table is drawn at those widths
before it has had an Idle to measure anything - where a DataTable left to itself is drawn at
its headers' widths."""

from __future__ import annotations

import html
import re

import pytest
from rich.panel import Panel
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from fintrade_tui.ui.tables import cell_width, column_widths, set_columns


def test_cells_are_measured_as_datatable_draws_them() -> None:
    assert cell_width("[b]bold[/b]") == 4  # a str is markup
    assert cell_width(Text("[b]bold[/b]")) == 11  # a Text is as it is
    assert cell_width(Text("two\nlines, the longer")) == len("lines, the longer")
    assert cell_width(1.8723456) == len("1.87")  # DataTable shows floats with two decimals
    assert cell_width(12345) == 5 and cell_width(None) == len("None")
    assert cell_width("株価") == 4  # wide glyphs: two cells each
    with pytest.raises(TypeError, match="Panel"):
        cell_width(Panel("boxed"))


def test_each_column_takes_its_widest_cell_or_header() -> None:
    rows = [("AAPL", "Apple Inc."), ("NVDA", "NVIDIA"), ("X",)]  # a short row: empty cells
    assert column_widths(["Ticker", "Name"], rows) == [6, 10]
    assert column_widths(["Ticker", "Name"], []) == [6, 4]
    with pytest.raises(ValueError, match="3 cells for 2 columns"):
        column_widths(["a", "b"], [("1", "2", "3")])


class _Filling(App):
    CSS = "DataTable { width: 100%; height: 100%; }"  # the region never waits on the data

    def compose(self) -> ComposeResult:
        yield DataTable()


def _drawn(svg: str) -> list[str]:
    """The text runs the terminal shows, padding included (not the window title)."""
    svg = html.unescape(svg).replace("\xa0", " ")
    return [r for r in re.findall(r"<text [^>]*clip-path[^>]*>(.*?)</text>", svg) if r.strip()]


@pytest.mark.parametrize("fitted", [False, True])
async def test_fitted_columns_are_drawn_at_their_width_before_any_idle(fitted: bool) -> None:
    """Columns and rows added and the picture taken at once, with no Idle in between (as on a
    busy machine): fitted columns are already as wide as their values; a DataTable's own
    columns are still as wide as their headers, and cut the values (why the screens fit)."""
    rows = [("1.8723456", "Apple Inc.")]
    app = _Filling()
    async with app.run_test(size=(60, 6)) as pilot:
        table = app.query_one(DataTable)
        await pilot.pause()
        if fitted:
            set_columns(table, ["V", "Name"], rows)
        else:
            table.add_columns("V", "Name")
        for row in rows:
            table.add_row(*row)
        drawn = _drawn(app.export_screenshot())  # nothing awaited since the rows came
    if fitted:
        assert drawn == [" V         ", " Name       ", " 1.8723456 ", " Apple Inc. "]
    else:
        assert drawn[-2:] == [" 1 ", " Appl "]
