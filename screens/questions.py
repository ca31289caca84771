"""Questions screen: the question bank as a table with filters (category, ticker, quarter,
resolution/coverage status) and a detail panel for the highlighted question — text, tickers,
as_of, window, golden indicators, oracle values with provenance, reference answer, coverage
gaps. `a` (or Enter) opens the question in the Arena, `A` its item audit.

Filters that select nothing never leave an empty list without a way on: a line names the
nearest quarter with questions under the other filters (or the filters to drop) and `n` applies
it. Escape in a filter returns to the table; on the table it goes back (Company, Universe...).

The bank is read once in a worker thread; filtering is in memory on the UI thread."""

from __future__ import annotations

from datetime import date
from typing import Any, ClassVar

from fintrade_tui.screens.universe import drop_controls
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, Markdown, Select, Static
from textual.worker import Worker, WorkerState

from fintrade_tui.safe_text import plain
from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.tables import set_columns

ALL = "*"
CATEGORIES = ("F", "T", "FT")
STATUSES = ("resolved", "unresolved", "full", "partial", "none", "unknown")


def quarter_end(d: date) -> date:
    """The last day of the calendar quarter holding `d`."""
    q_month = (d.month - 1) // 3 * 3 + 3
    nxt = date(d.year + (q_month == 12), q_month % 12 + 1, 1)
    return date.fromordinal(nxt.toordinal() - 1)


def quarter_start(end: date) -> date:
    """The first day of the calendar quarter ending (or holding) `end`."""
    return date(end.year, (end.month - 1) // 3 * 3 + 1, 1)


def filter_questions(
    questions: list[Any],
    category: str | None = None,
    ticker: str | None = None,
    quarter: date | None = None,
    status: str | None = None,
) -> list[Any]:
    """Questions matching every given filter: category; a ticker among its tickers; as_of in
    the calendar quarter holding `quarter`; resolution status or coverage equal to `status`."""
    t = (ticker or "").strip().upper()
    lo, hi = (quarter_start(quarter), quarter_end(quarter)) if quarter else (None, None)
    return [
        q
        for q in questions
        if (not category or q.category == category)
        and (not t or t in q.tickers)
        and (not quarter or (q.as_of is not None and lo <= q.as_of <= hi))
        and (not status or status in (q.status, q.coverage))
    ]


def quarter_name(d: date) -> str:
    """The calendar quarter holding `d`, as the Questions and Company screens name it."""
    return f"Q{(d.month - 1) // 3 + 1} {d.year}"


def _ordinal(d: date) -> int:
    return d.year * 4 + (d.month - 1) // 3


FILTER_KEYS = ("category", "ticker", "quarter", "status")


def nearest(questions: list[Any], filters: dict[str, Any]) -> dict[str, Any] | None:
    """Filters close to `filters` that select something, or None when the bank is empty or
    `filters` already select something. First the nearest other quarter under the same
    filters (ties: the earlier one); then category and status dropped (same quarter, else its
    nearest); then the ticker dropped too; last every filter dropped."""
    if not questions or filter_questions(questions, **filters):
        return None
    steps: tuple[dict[str, Any], ...] = (
        {},  # only the quarter moves
        {"category": None, "status": None},
        {"category": None, "status": None, "ticker": None},
    )
    for drop in steps:
        f = {**filters, **drop}
        if drop and f != filters and filter_questions(questions, **f):
            return f
        if f["quarter"]:
            here = _ordinal(f["quarter"])
            found = {
                quarter_end(q.as_of)
                for q in filter_questions(questions, **{**f, "quarter": None})
                if q.as_of
            }
            if found:
                best = min(found, key=lambda d: (abs(_ordinal(d) - here), d))
                return {**f, "quarter": best}
    return dict.fromkeys(FILTER_KEYS)


def describe(filters: dict[str, Any]) -> str:
    """'in Q4 2025 for NVDA in category F with status full' (the filters that are set)."""
    parts = []
    if filters.get("quarter"):
        parts.append(f"in {quarter_name(filters['quarter'])}")
    if (filters.get("ticker") or "").strip():
        parts.append(f"for {filters['ticker'].strip().upper()}")
    if filters.get("category"):
        parts.append(f"in category {filters['category']}")
    if filters.get("status"):
        parts.append(f"with status {filters['status']}")
    return " ".join(parts)


def nearest_line(questions: list[Any], filters: dict[str, Any], best: dict[str, Any]) -> str:
    """The empty-list line: what selects nothing, the nearest filters that select something,
    how many they select, and the key that applies them."""
    n = len(filter_questions(questions, **best))
    now = describe(filters) or "matches the filters"
    if best.get("quarter") and best["quarter"] != filters.get("quarter"):
        near = f"nearest with questions: {quarter_name(best['quarter'])} ({n})"
        dropped = [k for k in ("category", "status", "ticker") if filters.get(k) != best.get(k)]
        if dropped:
            near += " without the " + " and ".join(dropped) + " filter"
    elif any(best.values()):
        dropped = [k for k in FILTER_KEYS if filters.get(k) and filters.get(k) != best.get(k)]
        near = f"without the {' and '.join(dropped)} filter: {n}"
    else:
        near = f"every question: {n}"
    return f"No question {now}; {near} — press n to show it"


COLUMNS = ("ID", "Cat", "Tickers", "As of", "Status", "Coverage", "Question")


def _cells(q: Any) -> tuple[Text, ...]:
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


def _value(select: Select) -> Any:
    v = select.value
    return None if v in (ALL, Select.NULL) else v


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
        self.initial_ticker = (ticker or "").upper()
        self.initial_quarter = quarter_end
        self.questions: list[Any] = []
        self.shown: list[Any] = []
        self.suggested: dict[str, Any] | None = None  # what `n` applies when nothing is shown
        self.options: dict[str, list[Any]] = {
            "#q-category": [ALL, *CATEGORIES],
            "#q-quarter": [ALL],
            "#q-status": [ALL, *STATUSES],
        }

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
            yield Input(self.initial_ticker, placeholder="any", id="q-ticker", compact=True)
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
            table: DataTable = DataTable(id="questions", cursor_type="row", zebra_stripes=True)
            table.add_columns(*COLUMNS)
            yield table
            with VerticalScroll(id="q-detail-box"):
                yield Markdown("", id="q-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    # -- loading (worker thread) --
    @work(thread=True, exclusive=True, group="questions", exit_on_error=False)
    def load_questions(self) -> list[Any]:
        from fintrade_tui.workspace.questions import load_questions

        cur = self.app.workspace()
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
            self.app.notify_error("Questions", worker.error)
        elif event.state == WorkerState.SUCCESS:
            table.loading = False
            self._loaded(worker.result)

    def _loaded(self, questions: list[Any]) -> None:
        self.questions = questions
        cats = [*CATEGORIES, *sorted({q.category for q in questions} - set(CATEGORIES))]
        self.options["#q-category"] = [ALL, *cats]
        self.query_one("#q-category", Select).set_options([("All", ALL), *[(c, c) for c in cats]])
        quarters = {quarter_end(q.as_of) for q in questions if q.as_of}
        if self.initial_quarter:
            quarters.add(quarter_end(self.initial_quarter))
        self.options["#q-quarter"] = [ALL, *sorted(quarters)]
        select = self.query_one("#q-quarter", Select)
        select.set_options([("All", ALL), *[(quarter_name(d), d) for d in sorted(quarters)]])
        if self.initial_quarter:
            select.value = quarter_end(self.initial_quarter)
            self.initial_quarter = None
        self.refresh_table()

    # -- filtering and display (UI thread) --
    def filters(self) -> dict[str, Any]:
        """The filters as set: category, ticker, quarter (a quarter end), status."""
        return {
            "category": _value(self.query_one("#q-category", Select)),
            "ticker": self.query_one("#q-ticker", Input).value,
            "quarter": _value(self.query_one("#q-quarter", Select)),
            "status": _value(self.query_one("#q-status", Select)),
        }

    def refresh_table(self) -> None:
        table = self.query_one("#questions", DataTable)
        filters = self.filters()
        self.shown = filter_questions(self.questions, **filters)
        self.suggested = nearest(self.questions, filters)
        line = self.query_one("#q-nearest", Static)
        line.display = self.suggested is not None
        if self.suggested is not None:
            line.update(plain(nearest_line(self.questions, filters, self.suggested)))
        self.refresh_bindings()  # `n` shows in the footer only when there is something to apply
        # widths from every question: a filter never changes them
        set_columns(table, COLUMNS, [_cells(q) for q in self.questions])
        for q in self.shown:
            table.add_row(*_cells(q), key=q.id)
        self.query_one("#q-count", Static).update(f"{len(self.shown)} of {len(self.questions)}")
        self.show_detail(self.current())

    def current(self) -> Any | None:
        table = self.query_one("#questions", DataTable)
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def show_detail(self, q: Any | None) -> None:
        from fintrade_tui.exports.case_study import question_markdown

        md = self.query_one("#q-detail", Markdown)
        if q is None:
            md.update("_No question matches the filters._" if self.questions else "")
        else:
            md.update(question_markdown(q, oracle_as_list=True))

    @on(DataTable.RowHighlighted, "#questions")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail(self.current())

    @on(DataTable.RowSelected, "#questions")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_arena()

    @on(Select.Changed)
    @on(Input.Changed, "#q-ticker")
    def _filters_changed(self, event: Select.Changed | Input.Changed) -> None:
        if isinstance(event, Input.Changed) and drop_controls(event.input):
            return  # the cleaned value comes as the next change
        self.refresh_table()

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
        self.app.action_goto(screen, question_id=q.id)

    def action_arena(self) -> None:
        self._open("arena")

    def action_audit(self) -> None:
        self._open("audit")

    def action_dispute(self) -> None:
        self._open("dispute")

    def action_own(self) -> None:
        from .own_question import open_own

        open_own(self.app, self.current())

    def action_variant(self) -> None:
        from .own_question import open_variant

        open_variant(self.app, self.current())

    def _cycle(self, select_id: str) -> None:
        select = self.query_one(select_id, Select)
        values = self.options[select_id]
        i = values.index(select.value) if select.value in values else -1
        select.value = values[(i + 1) % len(values)]

    def action_cycle_category(self) -> None:
        self._cycle("#q-category")

    def action_cycle_status(self) -> None:
        self._cycle("#q-status")

    def action_focus_ticker(self) -> None:
        self.query_one("#q-ticker", Input).focus()

    def action_focus_table(self) -> None:
        self.query_one("#questions", DataTable).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "nearest":
            return self.suggested is not None
        if action == "back":  # on the first screen's table there is nowhere to go
            tables = self.query("#questions").results(DataTable)
            return any(self.focused is not t for t in tables) or self.app.can_go_back()
        return True

    def action_back(self) -> None:
        """Escape: from a filter back to the table; on the table back to the previous screen."""
        table = self.query_one("#questions", DataTable)
        if self.focused is not table:
            table.focus()
        else:
            self.app.action_back()

    def action_nearest(self) -> None:
        """Apply the suggested filters (the nearest quarter with questions, or fewer filters)."""
        f = self.suggested
        if f is None:
            return
        self.query_one("#q-category", Select).value = f["category"] or ALL
        self.query_one("#q-status", Select).value = f["status"] or ALL
        self.query_one("#q-quarter", Select).value = f["quarter"] or ALL
        self.query_one("#q-ticker", Input).value = f["ticker"] or ""
        self.refresh_table()  # now, not when the Changed messages arrive
        self.action_focus_table()

    def action_reload(self) -> None:
        self.query_one("#questions", DataTable).loading = True
        self.load_questions()
