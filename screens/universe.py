"""Universe screen: every ticker in the store, filtered as you type; Enter opens the company.

The table has the focus; typing letters or digits goes to the filter (so single-key bindings
stay usable), `/` focuses the filter, ↓ goes back to the table, Escape clears the filter (with
the filter empty, Escape is the app's Back to the screen the user came from, if any).
The store and workspace queries run in a thread worker; the table is filled on the UI thread
from the worker's result (`Worker.StateChanged`).
"""

from __future__ import annotations

import re
import string
from typing import Any, ClassVar

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static
from textual.worker import Worker, WorkerState

from fintrade_tui.safe_text import plain
from fintrade_tui.store.company import filter_universe, question_counts, universe
from fintrade_tui.ui.app_access import fintrade_app
from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.tables import set_columns

# control characters typed or pasted into a filter (an escape sequence, a bell): no part of any
# ticker or name, and an Input would draw them raw to the terminal
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def drop_controls(box: Input) -> bool:
    """Remove control characters from a filter box, with a notice; true when it changed (the
    new value then arrives as another Input.Changed)."""
    clean = _CONTROL.sub("", box.value)
    if clean == box.value:
        return False
    box.value = clean
    box.app.notify("control characters removed from the filter", title="Filter", timeout=4)
    return True


COLUMNS = ("Ticker", "Name", "Sector", "Industry", "Prices", "Filings", "Fundamentals", "Questions")


def _cells(r: dict[str, Any]) -> tuple[Text, ...]:
    prices = f"{r['first_price']} – {r['last_price']}" if r["first_price"] else "—"
    questions = "—" if r["questions"] is None else str(r["questions"])
    fundamentals = r["coverage"]
    if r["periods"]:
        span = f"{r['first_period'].year}–{r['last_period'].year}"
        fundamentals += f" · {r['periods']} periods {span}"
    # every cell comes from data (reference files, the store): text, never markup, and no
    # control character reaches the terminal
    return (
        plain(r["ticker"]),
        plain((r["name"] or "")[:34]),
        plain(r["sector"] or ""),
        plain((r["industry"] or "")[:30]),
        plain(prices),
        plain(r["filings"]),
        plain(fundamentals),
        plain(questions),
    )


def type_into_filter(screen: UniverseScreen, event: events.Key) -> None:
    """Send a typed letter or digit to the screen's filter; the key is then spent."""
    char = event.character
    if char and char.isalnum():
        event.stop()
        event.prevent_default()
        screen.type_into(char)


class UniverseTable(DataTable):
    """The universe's table. A letter or digit typed on it goes to the filter, by a priority
    binding: those run in the app's own task, as each key arrives, in the order the terminal
    sent them. A handler of the table's own ran in the table's task, and in a burst a key that
    reached the filter once the focus had moved could overtake one still queued at the table
    (the tmux walk once typed "NDA" for "NVDA"). `system`: the key panel does not list them."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(c, f"type_char({c!r})", show=False, priority=True, system=True)
        for c in string.ascii_letters + string.digits
    ]

    def action_type_char(self, char: str) -> None:
        if isinstance(self.screen, UniverseScreen):
            self.screen.type_into(char)


class UniverseScreen(FramePaced, Screen):
    """Tickers with name, sector, price range, filings and questions."""

    AUTO_FOCUS = "#universe-table"
    CSS = """
    UniverseScreen #universe-filter { margin: 0 1; }
    UniverseScreen #universe-count { height: 1; padding: 0 2; color: $text-muted; }
    UniverseScreen #universe-table { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter", id="universe.filter"),
        Binding("escape", "clear_filter", "Clear filter", id="universe.clear"),
        Binding("down", "focus_table", "Table", show=False, id="universe.table"),
        Binding("enter", "open", "Open", id="universe.open"),
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: list[dict[str, Any]] = []
        self.shown: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(
            placeholder="type to filter: ticker, name, sector or industry",
            id="universe-filter",
            select_on_focus=False,
        )
        yield Static("loading the universe…", id="universe-count")
        table = UniverseTable(id="universe-table", cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":  # False: the key falls through to the app's Back
            boxes = self.query("#universe-filter").results(Input)
            return any(box.value for box in boxes)
        return True

    def on_mount(self) -> None:
        self.sub_title = "Universe"
        self.load()

    # -- data ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="universe", exit_on_error=False)
    def load(self) -> list[dict[str, Any]]:
        counts: dict[str, int] | None = None
        try:
            ws = fintrade_app(self).workspace()
            try:
                counts = question_counts(ws)
            finally:
                ws.close()
        except Exception as exc:  # the universe still shows without question counts
            self.app.call_from_thread(fintrade_app(self).notify_error, "Workspace", exc)
        cur = fintrade_app(self).store()
        try:
            return universe(cur, counts)
        finally:
            cur.close()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "universe":
            return
        if event.state == WorkerState.SUCCESS:
            self.rows = event.worker.result or []
            # widths from every row, once: a filter never changes them
            table = self.query_one("#universe-table", DataTable)
            set_columns(table, COLUMNS, [_cells(r) for r in self.rows])
            self.refilter()
        elif event.state == WorkerState.ERROR and event.worker.error is not None:
            self.query_one("#universe-count", Static).update("the store could not be read")
            fintrade_app(self).notify_error("Universe", event.worker.error)

    def refilter(self) -> None:
        text = self.query_one("#universe-filter", Input).value
        self.shown = filter_universe(self.rows, text)
        table = self.query_one("#universe-table", DataTable)
        table.clear()
        for r in self.shown:
            table.add_row(*_cells(r), key=r["ticker"])
        # the filter is what the user typed or pasted: `[/x]` or an escape sequence is shown as
        # text (a str here would be parsed as markup, and a stray closing tag raises)
        note = f" matching {text.strip()!r}" if text.strip() else ""
        self.query_one("#universe-count", Static).update(
            plain(f"{len(self.shown)} of {len(self.rows)} tickers{note} · Enter opens · / filters")
        )

    # -- events ----------------------------------------------------------------------------
    def on_input_changed(self, event: Input.Changed) -> None:
        if drop_controls(event.input):
            return
        self.refilter()
        self.refresh_bindings()  # Escape: "Clear filter" or "Back"

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_open()

    def on_key(self, event: events.Key) -> None:
        """Type-to-filter with nothing focused (the table sends its keys itself; the filter
        stops the printable keys it takes, so none of those arrive here)."""
        type_into_filter(self, event)

    def type_into(self, char: str) -> None:
        """Add a typed character to the filter and give the filter the focus."""
        box = self.query_one("#universe-filter", Input)
        box.insert_text_at_cursor(char)
        box.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value:
            self.open_ticker(event.row_key.value)

    # -- actions ---------------------------------------------------------------------------
    def action_focus_filter(self) -> None:
        self.query_one("#universe-filter", Input).focus()

    def action_focus_table(self) -> None:
        self.query_one("#universe-table", DataTable).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#universe-filter", Input)
        box.value = ""
        self.action_focus_table()

    def action_open(self) -> None:
        """Open the highlighted ticker (from the filter: the best match, i.e. the first row)."""
        table = self.query_one("#universe-table", DataTable)
        if not self.shown:
            self.app.bell()
            return
        row = min(max(table.cursor_row, 0), len(self.shown) - 1)
        self.open_ticker(self.shown[row]["ticker"])

    def open_ticker(self, ticker: str) -> None:
        try:
            fintrade_app(self).action_goto("company", ticker=ticker)
        except Exception as exc:
            fintrade_app(self).notify_error("Company", exc)
