"""Questions screen itself: its layout, CSS and keys, the one `QuestionsState` it creates and
hands to its table room (table.py), the worker that reads the bank, and the actions, which
delegate to the room or open another screen on the highlighted question."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, cast

from fintrade_tui.screens.universe import drop_controls
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, Markdown, Select, Static
from textual.worker import Worker, WorkerState

from fintrade_tui.ui.app_access import fintrade_app
from fintrade_tui.ui.frames import FramePaced

from . import table as bank
from .filters import ALL, CATEGORIES, STATUSES
from .state import QuestionsState

if TYPE_CHECKING:
    from fintrade_tui.ui.app import FinTradeApp
    from fintrade_tui.workspace.questions import Question


class QuestionsScreen(FramePaced, Screen):
    """The question bank: filters, table, detail; `a` opens the Arena on a question."""

    TITLE = "Questions"
    AUTO_FOCUS = "#questions"
    CSS = """
    QuestionsScreen #q-filters { height: 1; padding: 0 1; margin: 1 0 0 0; }
    QuestionsScreen #q-filters Label { padding: 0 1 0 2; }
    QuestionsScreen #q-filters Select { width: 16; }
    QuestionsScreen #q-filters #q-quarter { width: 20; }
    QuestionsScreen #q-filters Input { width: 12; }
    QuestionsScreen #q-count { width: 1fr; padding: 0 2; color: $text-muted; }
    QuestionsScreen #q-nearest {
        height: auto; padding: 0 2; margin: 1 0 0 0; color: $warning; display: none;
    }
    QuestionsScreen #q-main { height: 1fr; margin: 1 0 0 0; }
    QuestionsScreen #questions { width: 3fr; }
    QuestionsScreen #q-detail-box { width: 2fr; border-left: tall $panel; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "arena", "Arena", id="questions.arena"),
        Binding("A", "audit", "Audit item", id="questions.audit"),  # `a` is the Arena's
        Binding("D", "dispute", "Dispute reference", id="questions.dispute"),
        Binding("o", "own", "Own question", id="questions.own"),
        Binding("v", "variant", "Ask of another", id="questions.variant"),
        Binding("c", "cycle_category", "Category", id="questions.category"),
        Binding("s", "cycle_status", "Status", id="questions.status"),
        Binding("slash", "focus_ticker", "Ticker", id="questions.ticker"),
        Binding("n", "nearest", "Nearest", id="questions.nearest"),
        Binding("escape", "back", "Back", id="questions.back"),
        Binding("r", "reload", "Reload", id="questions.reload"),
    ]

    def __init__(self, ticker: str | None = None, quarter_end: date | None = None) -> None:
        super().__init__()
        self.state = QuestionsState((ticker or "").upper(), quarter_end)

    @property
    def fintrade(self) -> FinTradeApp:
        """The app, as the FinTradeApp it is (its workspace and screens)."""
        return fintrade_app(self)

    # the state's fields the tests (and the screens above this one) read
    @property
    def questions(self) -> list[Question]:
        return self.state.questions

    @property
    def shown(self) -> list[Question]:
        return self.state.shown

    def current(self) -> Question | None:
        """The question under the table's cursor."""
        return bank.current(self, self.state)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="q-filters"):
            yield Label("Category")
            yield Select(
                [("All", ALL), *[(c, c) for c in CATEGORIES]],
                value=ALL,
                allow_blank=False,
                id="q-category",
                compact=True,
            )
            yield Label("Ticker")
            yield Input(self.state.initial_ticker, placeholder="any", id="q-ticker", compact=True)
            yield Label("Quarter")
            yield Select([("All", ALL)], value=ALL, allow_blank=False, id="q-quarter", compact=True)
            yield Label("Status")
            yield Select(
                [("All", ALL), *[(s, s) for s in STATUSES]],
                value=ALL,
                allow_blank=False,
                id="q-status",
                compact=True,
            )
            yield Static("", id="q-count")
        yield Static("", id="q-nearest")
        with Horizontal(id="q-main"):
            table: DataTable[Any] = DataTable(id="questions", cursor_type="row", zebra_stripes=True)
            table.add_columns(*bank.COLUMNS)
            yield table
            with VerticalScroll(id="q-detail-box"):
                yield Markdown("", id="q-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    # -- loading (worker thread) --
    @work(thread=True, exclusive=True, group="questions", exit_on_error=False)
    def load_questions(self) -> list[Question]:
        from fintrade_tui.workspace.questions import load_questions

        cur = self.fintrade.workspace()
        try:
            return load_questions(cur)
        finally:
            cur.close()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name != "load_questions":
            return
        table = self.query_one("#questions", DataTable)
        if event.state == WorkerState.ERROR:
            table.loading = False
            self.fintrade.notify_error("Questions", cast(BaseException, worker.error))
        elif event.state == WorkerState.SUCCESS:
            table.loading = False
            bank.loaded(self, self.state, cast("list[Question]", worker.result))

    # -- filtering and display (UI thread): the table room --
    @on(DataTable.RowHighlighted, "#questions")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        bank.show_detail(self, self.state)

    @on(DataTable.RowSelected, "#questions")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_arena()

    @on(Select.Changed)
    @on(Input.Changed, "#q-ticker")
    def _filters_changed(self, event: Select.Changed | Input.Changed) -> None:
        if isinstance(event, Input.Changed) and drop_controls(event.input):
            return  # the cleaned value comes as the next change
        bank.refresh(self, self.state)

    @on(Input.Submitted, "#q-ticker")
    def _ticker_done(self) -> None:
        self.action_focus_table()

    # -- actions --
    def _open(self, screen: str) -> None:
        """Open `screen` on the highlighted question."""
        q = self.current()
        if q is None:
            self.notify("No question highlighted", severity="warning")
            return
        self.fintrade.action_goto(screen, question_id=q.id)

    def action_arena(self) -> None:
        self._open("arena")

    def action_audit(self) -> None:
        self._open("audit")

    def action_dispute(self) -> None:
        self._open("dispute")

    def action_own(self) -> None:
        from ..own_question import open_own

        open_own(self.app, self.current())

    def action_variant(self) -> None:
        from ..own_question import open_variant

        open_variant(self.app, self.current())

    def action_cycle_category(self) -> None:
        bank.cycle(self, self.state, "#q-category")

    def action_cycle_status(self) -> None:
        bank.cycle(self, self.state, "#q-status")

    def action_focus_ticker(self) -> None:
        self.query_one("#q-ticker", Input).focus()

    def action_focus_table(self) -> None:
        self.query_one("#questions", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "nearest":
            return self.state.suggested is not None
        if action == "back":  # on the first screen's table there is nowhere to go
            tables = self.query("#questions").results(DataTable)
            return any(self.focused is not t for t in tables) or self.fintrade.can_go_back()
        return True

    def action_back(self) -> None:
        """Escape: from a filter back to the table; on the table back to the previous screen."""
        table = self.query_one("#questions", DataTable)
        if self.focused is not table:
            table.focus()
        else:
            self.fintrade.action_back()

    def action_nearest(self) -> None:
        """Apply the suggested filters (the nearest quarter with questions, or fewer filters)."""
        if bank.apply_nearest(self, self.state):
            self.action_focus_table()

    def action_reload(self) -> None:
        self.query_one("#questions", DataTable).loading = True
        self.load_questions()
