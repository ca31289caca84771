"""Lane view widgets for the Results screen: the lane table (comparison × lane: N, Δ, CI,
W/T/L, Holm-corrected p) above a plotext forest plot of Δ with its interval per lane.

`LanesPane.show` is called on the UI thread with tables a worker computed; the plot draws with
its own `self.plt`, never the global plotext module."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static
from textual_plotext import PlotextPlot

from fintrade_tui.ui.results_text import LANE_HEADERS, lane_cells, lane_label, lanes_note
from fintrade_tui.ui.tables import set_columns


class ForestPlot(PlotextPlot):
    """Δ (dot) and its CI (line) per row, one row per y position, zero marked."""

    DEFAULT_CSS = """
    ForestPlot { height: 1fr; width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[dict[str, Any]] = []  # the rows drawn (those with a Δ), top first

    def set_rows(self, rows: list[dict[str, Any]], title: str) -> None:
        plt = self.plt
        plt.clear_figure()
        self.rows = [r for r in rows if r["delta"] is not None]
        plt.title(title if self.rows else f"{title}: no paired questions")
        n = len(self.rows)
        for i, r in enumerate(self.rows):
            y = n - i  # first row on top
            if r["ci_low"] is not None:
                plt.plot([r["ci_low"], r["ci_high"]], [y, y], color="cyan")
            plt.scatter([r["delta"]], [y], marker="●", color="orange")
        if self.rows:
            plt.vline(0, color="gray")
            plt.yticks(list(range(n, 0, -1)), [lane_label(r) for r in self.rows])
            plt.ylim(0.5, n + 0.5)
            plt.xlabel("Δ (1–5 scale)")
        self.refresh()


class LanesPane(Vertical):
    """The lane table and its forest plot for one lane table (one score kind, one protocol)."""

    DEFAULT_CSS = """
    LanesPane { height: 1fr; }
    LanesPane #lanes { height: 1fr; }
    LanesPane #lanes-note { color: $text-muted; padding: 0 1; height: auto; }
    LanesPane #forest { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        grid: DataTable = DataTable(id="lanes", cursor_type="none", zebra_stripes=True)
        grid.add_columns(*LANE_HEADERS)
        yield grid
        yield Static("", id="lanes-note")
        yield ForestPlot(id="forest")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tables: list[dict[str, Any]] = []  # one lane table per judging protocol
        self.at = 0  # the one shown

    def set_tables(self, tables: list[dict[str, Any]], who: str) -> None:
        """New lane tables (UI thread); keeps the protocol shown when it is still there."""
        was = self.tables[self.at]["protocol"] if self.tables else None
        self.tables = tables
        names = [t["protocol"] for t in tables]
        self.at = names.index(was) if was in names else 0
        if not tables:
            self.show(None, f"No {who} rubric scores to compare.")
        else:
            self.cycle(0)

    def cycle(self, step: int = 1) -> None:
        """Show the next protocol's table (they are never mixed)."""
        if not self.tables:
            return
        self.at = (self.at + step) % len(self.tables)
        table = self.tables[self.at]
        others = [t["protocol"] for t in self.tables if t is not table]
        self.show(table, f"Protocol {table['protocol']}. " + lanes_note(table, others))

    def show(self, table: dict[str, Any] | None, note: str) -> None:
        grid = self.query_one("#lanes", DataTable)
        rows = table["rows"] if table else []
        # model names come from files: Text, never markup
        cells = [tuple(Text(c) for c in lane_cells(r)) for r in rows]
        set_columns(grid, LANE_HEADERS, cells)
        for i, row in enumerate(cells):
            grid.add_row(*row, key=str(i))
        self.query_one("#lanes-note", Static).update(Text(note))
        title = f"Δ vs {table['baseline']} · {table['protocol']}" if table else "Δ"
        self.query_one(ForestPlot).set_rows(rows, title)
