"""Arena widgets: the evidence panel of the focused pane (items with track, title, date and
scores; tool calls) and the modal that shows a parent passage or a tool result in full."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from fintrade_tui.safe_text import plain
from fintrade_tui.ui.arena_model import Row


class PassageScreen(ModalScreen[None]):
    """A parent passage or a tool result in full; Esc, Enter or q closes it."""

    DEFAULT_CSS = """
    PassageScreen { align: center middle; }
    PassageScreen > Vertical {
        width: 90%; height: 85%; border: thick $accent; background: $surface;
    }
    PassageScreen .passage-title { height: auto; padding: 0 1; text-style: bold; }
    PassageScreen VerticalScroll { height: 1fr; padding: 0 1; }
    PassageScreen .passage-help { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("enter", "dismiss", show=False),
        Binding("q", "dismiss", show=False),
    ]

    def __init__(self, title: str, body: str, table: list[list[str]] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.body_text = body
        self.table = table

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(plain(self.title_text), classes="passage-title")
            with VerticalScroll():
                if self.table:
                    yield Static(cells_table(self.table), classes="passage-table")
                else:
                    yield Static(plain(self.body_text or "(empty)"))
            yield Static("Esc closes", classes="passage-help")


def cells_table(rows: list[list[str]]) -> Table:
    """A benchmark's table as published: the first row is the header, every cell text (data,
    never markup), figures right-aligned."""
    width = max(len(r) for r in rows)
    head = [str(c) for c in rows[0]] + [""] * (width - len(rows[0]))
    table = Table(show_lines=False, header_style="bold", expand=False)
    for i, name in enumerate(head):
        table.add_column(plain(name), justify="left" if i == 0 else "right", overflow="fold")
    for r in rows[1:]:
        table.add_row(*(plain(str(c)) for c in list(r) + [""] * (width - len(r))))
    return table


class EvidencePanel(Vertical):
    """The focused pane's evidence: items (track, title, date, scores) and tool calls; Enter
    opens the parent passage or the full result."""

    DEFAULT_CSS = """
    EvidencePanel { height: 9; border-top: solid $panel-lighten-2; }
    EvidencePanel > .ev-title { height: 1; padding: 0 1; text-style: bold; }
    EvidencePanel > OptionList { height: 1fr; border: none; }
    """

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[Row] = []

    def compose(self) -> ComposeResult:
        yield Static("Evidence", classes="ev-title")
        yield OptionList()

    def show(self, title: str, rows: list[Row], empty: str = "no evidence") -> None:
        self.rows = rows
        self.query_one(".ev-title", Static).update(plain(title))
        ol = self.query_one(OptionList)
        ol.clear_options()
        if rows:
            ol.add_options(Option(plain(r.line, no_wrap=True, overflow="ellipsis")) for r in rows)
            ol.highlighted = 0
        else:
            ol.add_option(Option(Text(empty, style="italic"), disabled=True))

    @on(OptionList.OptionSelected)
    def _open(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if 0 <= event.option_index < len(self.rows):
            row = self.rows[event.option_index]
            if row.body or row.table:
                self.app.push_screen(PassageScreen(row.title, row.body, row.table))
