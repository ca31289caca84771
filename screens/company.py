"""Company screen: one ticker, one quarter at a time, point in time.

Header: the company and the point-in-time badge ("as of D: filings up to 10-K filed D").
← / → step through the quarters with data (default: the latest); the fundamentals table shows
the nine Table 6 ratios visible at the quarter's `as_of` with the previous quarter's values and
each value's source and filing; four charts show price (MA/EMA), volume (OBV), MACD and RSI
around the quarter, never past `as_of`. `q` opens the questions about this company and quarter;
`o` the form of the analyst's own question about it (as of the quarter's filing day).
Opened without a quarter, the screen starts on the latest quarter that has questions (a
question naming the ticker, dated in the calendar quarter of the period end: exactly what `q`
then lists) and says so in the subtitle; without any, on the latest data. Escape goes back.

All queries run in one exclusive thread worker (`fintrade_tui.store.company`); its result is
applied on the UI thread from `Worker.StateChanged`. A result for a quarter the user has
already stepped past is dropped.
"""

from __future__ import annotations

from datetime import date
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import Worker, WorkerState

from fintrade_tui.store.company import (
    display_rows,
    quarter_label,
    quarter_view,
    quarters,
)
from fintrade_tui.store.company_chart import chart_series, chart_window
from fintrade_tui.store.company_text import COLUMNS
from fintrade_tui.ui.app_access import fintrade_app
from fintrade_tui.ui.charts import MacdChart, PriceChart, RsiChart, SeriesChart, VolumeChart
from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.tables import set_columns

from .questions import filter_questions, quarter_name


class CompanyScreen(FramePaced, Screen):
    """Fundamentals and charts of one company at one quarter, as of that quarter's filing."""

    CSS = """
    CompanyScreen #company-head { height: 1; padding: 0 1; }
    CompanyScreen #company-name { width: 1fr; text-style: bold; }
    CompanyScreen #company-badge { width: auto; color: $warning; }
    CompanyScreen #company-quarter { height: 1; padding: 0 1; color: $accent; }
    CompanyScreen #company-fundamentals { height: 11; margin: 0 1; }
    CompanyScreen #company-charts { grid-size: 2 2; height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Prev quarter", id="company.prev_quarter"),
        Binding("right", "step(1)", "Next quarter", id="company.next_quarter"),
        Binding("home", "jump(0)", "First", show=False, id="company.first_quarter"),
        Binding("end", "jump(-1)", "Latest", show=False, id="company.last_quarter"),
        Binding("q", "questions", "Questions", id="company.questions"),
        Binding("o", "own", "Own question", id="company.own"),
        Binding("escape", "back", "Back", id="company.back"),
    ]

    def __init__(self, ticker: str, quarter: str | date | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.ticker = ticker.strip().upper()
        self.requested = quarter
        self.quarters: list[dict[str, Any]] = []
        self.index: int | None = None
        self.view: dict[str, Any] | None = None  # the quarter shown (set on the UI thread)
        self.counts: list[int] = []  # questions per quarter (of self.quarters)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="company-head"):
            yield Static(self.ticker, id="company-name")
            yield Static("", id="company-badge")
        yield Static("loading…", id="company-quarter")
        table: DataTable = DataTable(id="company-fundamentals", show_cursor=False)
        table.can_focus = False  # ← / → belong to the quarter stepper
        table.add_columns(*COLUMNS)
        yield table
        with Grid(id="company-charts"):
            yield PriceChart(id="chart-price")
            yield VolumeChart(id="chart-volume")
            yield MacdChart(id="chart-macd")
            yield RsiChart(id="chart-rsi")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.ticker
        self.load(self.requested, first=True)

    # -- data ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="company", exit_on_error=False)
    def load(self, quarter: str | date | None, first: bool = False) -> dict[str, Any]:
        """View + chart series of one quarter (and on the first load, the quarter list)."""
        lag = fintrade_app(self).cfg.fundamentals.estimated_lag_days
        counts: list[int] | None = None
        cur = fintrade_app(self).store()
        try:
            qs = quarters(cur, self.ticker, lag) if first else None
            if qs is not None:
                counts = self._question_counts(qs)
                if quarter is None and any(counts):
                    last = max(i for i, n in enumerate(counts) if n)
                    quarter = qs[last]["period_end"]
            view = quarter_view(cur, self.ticker, quarter, lag)
            start, end, as_of = chart_window(view["quarter"])
            series = chart_series(cur, self.ticker, start, end, as_of=as_of)
        finally:
            cur.close()
        return {"quarters": qs, "counts": counts, "view": view, "series": series}

    def _question_counts(self, qs: list[dict[str, Any]]) -> list[int]:
        """Questions per quarter, as the Questions screen filters them (a workspace that
        cannot be read gives zeros: the screen still opens, on the latest quarter)."""
        from fintrade_tui.workspace.questions import load_questions

        try:
            ws = fintrade_app(self).workspace()
            try:
                mine = load_questions(ws, ticker=self.ticker)
            finally:
                ws.close()
        except Exception as exc:
            self.app.call_from_thread(fintrade_app(self).notify_error, "Workspace", exc)
            return [0] * len(qs)
        return [
            len(filter_questions(mine, ticker=self.ticker, quarter=q["period_end"])) for q in qs
        ]

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "company":
            return
        if event.state == WorkerState.SUCCESS and event.worker.result is not None:
            self.show(event.worker.result)
        elif event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.query_one("#company-quarter", Static).update(f"could not load: {error}")
            fintrade_app(self).notify_error(f"Company {self.ticker}", error)

    def show(self, result: dict[str, Any]) -> None:
        view = result["view"]
        if result["quarters"] is not None:
            self.quarters = result["quarters"]
            self.counts = result["counts"] or [0] * len(self.quarters)
            self.index = view["index"]
            if self.requested is None:
                self.sub_title = self._opening_note(view["index"])
        if view["index"] != self.index:
            return  # the user has stepped on; that quarter's worker is running
        self.view = view
        name = " · ".join(
            x
            for x in (
                view["ticker"],
                view["name"],
                " / ".join(x for x in (view["sector"], view["industry"]) if x),
            )
            if x
        )
        self.query_one("#company-name", Static).update(name)
        self.query_one("#company-badge", Static).update(f"PIT {view['badge']}")
        close = f" · close {view['close']:.2f} on {view['price_date']}" if view["close"] else ""
        n = self.counts[view["index"]] if view["index"] < len(self.counts) else 0
        self.query_one("#company-quarter", Static).update(
            f"◀ {quarter_label(view)} ▶{close}   (←/→ quarters, q questions"
            + (f": {n} in {quarter_name(view['quarter']['period_end'])})" if n else ")")
        )
        table = self.query_one("#company-fundamentals", DataTable)
        rows = display_rows(view)
        set_columns(table, COLUMNS, rows)  # widths from this quarter's rows
        for row in rows:
            table.add_row(*row)
        for chart in self.query(SeriesChart):
            chart.set_series(result["series"])

    def _opening_note(self, index: int) -> str:
        """The subtitle when no quarter was asked for: why this quarter."""
        q = self.quarters[index]
        n = self.counts[index]
        if not n:
            return f"{self.ticker} · no question names {self.ticker}: the latest data"
        at = f"{q['key']} ({quarter_name(q['period_end'])})"
        tail = "" if index == len(self.quarters) - 1 else "; End: latest data"
        return f"{self.ticker} · {at}: the latest quarter with questions ({n}){tail}"

    # -- actions ---------------------------------------------------------------------------
    def _go(self, index: int) -> None:
        if self.index is None or not self.quarters:
            return
        index = max(0, min(index, len(self.quarters) - 1))
        if index == self.index:
            self.app.bell()
            return
        self.index = index
        q = self.quarters[index]
        self.query_one("#company-quarter", Static).update(f"◀ {q['key']} … loading ▶")
        self.load(q["key"])

    def action_step(self, delta: int) -> None:
        if self.index is not None:
            self._go(self.index + delta)

    def action_jump(self, index: int) -> None:
        self._go(index if index >= 0 else len(self.quarters) + index)

    def action_questions(self) -> None:
        if self.index is None or not self.quarters:
            return
        q = self.quarters[self.index]
        try:
            fintrade_app(self).action_goto(
                "questions", ticker=self.ticker, quarter_end=q["period_end"]
            )
        except Exception as exc:
            fintrade_app(self).notify_error("Questions", exc)

    def action_own(self) -> None:
        """The analyst's own question about this company, as of the day this quarter's
        filing was known."""
        if self.view is None:
            return
        as_of = self.view["quarter"]["as_of"]
        fintrade_app(self).action_goto("own_question", tickers=[self.ticker], as_of=as_of)

    def action_back(self) -> None:
        fintrade_app(self).action_back()
