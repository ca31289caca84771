"""Results screen itself: its layout, CSS and keys, the one `ResultsState` it creates and hands
to its rooms (matrix, failures, cost, rescore: plain functions over the state), the workers
that run the rooms' reads (reads.py) in threads, and what each worker's end shows. Its actions
delegate to the rooms."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Header, ProgressBar, Static
from textual.worker import Worker, WorkerState

from fintrade_tui.reports.failures import FILTER_LABELS
from fintrade_tui.ui.app_access import fintrade_app
from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.lanes_view import LanesPane
from fintrade_tui.ui.results_text import (
    AGREEMENT_HEADERS,
    ANNOTATOR_HEADERS,
    FAILURE_HEADERS,
    KIND_NAMES,
    matrix_headers,
)

from . import cost, failures, matrix, reads, rescore
from .failures import KEYS
from .state import AccuracyRead, AgreementRead, Case, RescoreRead, ResultsState, Row

if TYPE_CHECKING:
    from fintrade_tui.ui.app import FinTradeApp

LOADS = {"load_accuracy": "#accuracy", "load_agreement": "#agreement", "load_failures": "#failures"}


class ResultsScreen(FramePaced, Screen):
    """Accuracy matrix, human–judge agreement and the failure-case browser."""

    TITLE = "Results"
    AUTO_FOCUS = "#failures"
    CSS = (
        """
    ResultsScreen #r-bar { height: 1; padding: 0 1; }
    ResultsScreen #r-bar Static { width: auto; }
    ResultsScreen #r-top { height: 1fr; }
    ResultsScreen #acc-pane { width: 3fr; }
    ResultsScreen #agr-pane { width: 2fr; border-left: tall $panel; }
    ResultsScreen .title { text-style: bold; padding: 0 1; }
    ResultsScreen #accuracy-note { color: $text-muted; padding: 0 1; height: auto; }
    ResultsScreen #failures-pane { height: 1fr; border-top: tall $panel; }
    ResultsScreen #f-toggles {
        height: 2; padding: 0 1; layout: grid; grid-size: 6; grid-columns: auto; grid-rows: 1;
    }
    ResultsScreen #f-toggles Checkbox { height: 1; border: none; padding: 0 0 0 1; }
    ResultsScreen #f-main { height: 1fr; }
    ResultsScreen #failures { width: 3fr; }
    ResultsScreen #case-detail { width: 2fr; border-left: tall $panel; padding: 0 1; }
    ResultsScreen #lanes-pane, ResultsScreen #annotators { display: none; }
    ResultsScreen .lanes #lanes-pane, ResultsScreen .inter #annotators { display: block; }
    ResultsScreen .lanes #accuracy, ResultsScreen .lanes #accuracy-note { display: none; }
    ResultsScreen .inter #agreement { display: none; }
    """
        + rescore.RESCORE_CSS
        + cost.COST_CSS
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.back", "Back", id="results.back"),  # first: a long footer is cut
        # priority: Enter replays even when the failure table (which binds Enter) has focus
        Binding("enter", "replay", "Replay", id="results.replay", priority=True),
        Binding("x", "export", "Export case", id="results.export"),
        Binding("w", "export_view", "Write view", id="results.export_view"),
        Binding("s", "toggle_scores", "Scores", id="results.scores"),
        Binding("g", "cycle_source", "Question set", id="results.source"),
        Binding("l", "toggle_lanes", "Lanes", id="results.lanes"),
        Binding("p", "cycle_protocol", "Protocol", id="results.protocol"),
        Binding("a", "toggle_annotators", "Annotators", id="results.annotators"),
        Binding("D", "disagreements", "Disagreements", id="results.disagreements"),
        *[
            Binding(key, f"toggle_filter('{name}')", FILTER_LABELS[name], id=f"results.{name}")
            for name, key in KEYS.items()
        ],
        Binding("R", "reload", "Reload", id="results.reload"),
        # last: the footer (and its snapshot) keep their keys; `?` lists it
        Binding("m", "rescore", "Re-score", id="results.rescore"),
        Binding("y", "cycle_cause", "Cause", id="results.cause"),
        Binding("z", "toggle_disputed", "Disputed", id="results.disputed"),
        Binding("dollar_sign", "toggle_cost", "Cost", id="results.cost"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.state = ResultsState()

    @property
    def fintrade(self) -> FinTradeApp:
        """The app, as the FinTradeApp it is (its workspace, store and config)."""
        return fintrade_app(self)

    # the state's fields the tests read (and `kind`, which they set)
    @property
    def kind(self) -> str:
        return self.state.kind

    @kind.setter
    def kind(self, kind: str) -> None:
        self.state.kind = kind

    @property
    def source(self) -> str | None:
        return self.state.source

    @property
    def sources(self) -> list[str]:
        return self.state.sources

    @property
    def table(self) -> dict[str, Any] | None:
        return self.state.table

    @property
    def cases(self) -> list[Case]:
        return self.state.cases

    @property
    def shown(self) -> list[Case]:
        return self.state.shown

    def compose(self) -> ComposeResult:
        state = self.state
        yield Header()
        with Horizontal(id="r-bar"):
            yield Static(matrix.kinds_text(state), id="scores-kind")
            yield ProgressBar(id="rescore-progress", show_eta=False)
        with Horizontal(id="r-top"):
            with Vertical(id="acc-pane"):
                yield Static(matrix.title(state), id="accuracy-title", classes="title")
                acc: DataTable[Any] = DataTable(
                    id="accuracy", cursor_type="none", zebra_stripes=True
                )
                acc.add_columns(*matrix_headers(matrix.DEFAULT_COLUMNS))
                yield acc
                yield Static("", id="accuracy-note")
                yield LanesPane(id="lanes-pane")
                yield cost.cost_grid()
            with Vertical(id="agr-pane"):
                yield Static(matrix.AGREEMENT_TITLES[0], id="agreement-title", classes="title")
                agr: DataTable[Any] = DataTable(id="agreement", cursor_type="none")
                agr.add_columns(*AGREEMENT_HEADERS)
                yield agr
                ann: DataTable[Any] = DataTable(id="annotators", cursor_type="none")
                ann.add_columns(*ANNOTATOR_HEADERS)
                yield ann
        with Vertical(id="failures-pane"):
            with Container(id="f-toggles"):  # two rows of six: every filter in view at 140 wide
                for name, label in failures.toggle_labels():
                    yield Checkbox(label, True, id=f"f-{name}")
                yield Static(failures.cause_label(state), id="f-cause")
            with Horizontal(id="f-main"):
                table: DataTable[Any] = DataTable(
                    id="failures", cursor_type="row", zebra_stripes=True
                )
                table.add_columns(*FAILURE_HEADERS)
                yield table
                yield Static("", id="case-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    # -- workers (threads: workspace cursors only, no widgets): the rooms' reads --
    @work(thread=True, exclusive=True, group="accuracy", exit_on_error=False)
    def load_accuracy(self, kind: str, source: str | None, leave: bool = False) -> AccuracyRead:
        return reads.read_accuracy(self.state, self.fintrade, kind, source, leave)

    @work(thread=True, exclusive=True, group="agreement", exit_on_error=False)
    def load_agreement(self) -> AgreementRead:
        return reads.read_agreement(self.state, self.fintrade)

    @work(thread=True, exclusive=True, group="failures", exit_on_error=False)
    def load_failures(self) -> list[Case]:
        return reads.read_failures(self.state, self.fintrade)

    @work(thread=True, exclusive=True, group="cost", exit_on_error=False)
    def load_cost(self, source: str | None, leave: bool) -> list[Row]:
        return cost.read_cost(self.state, self.fintrade, source, leave)

    @work(thread=True, exclusive=True, group="rescore", exit_on_error=False)
    def rescore_view(self, source: str | None) -> RescoreRead:
        bar = self.query_one("#rescore-progress", ProgressBar)
        return rescore.rescore_runs(self.state, self.fintrade, bar, source)

    @work(thread=True, group="export", exit_on_error=False)
    def export_case(self, run_ids: list[str]) -> str:
        return reads.write_case(self.state, self.fintrade, run_ids)

    @work(thread=True, group="export", exit_on_error=False)
    def export_view(self, cases: list[Case], table: dict[str, Any] | None, subtitle: str) -> str:
        return reads.write_view(self.state, self.fintrade, cases, table, subtitle)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker, state = event.worker, self.state
        target = LOADS.get(worker.name)
        failed = event.state in (WorkerState.ERROR, WorkerState.CANCELLED)
        if worker.name == "rescore_view" and failed:
            rescore.ended(self)
        if event.state == WorkerState.ERROR:
            if target:
                self.query_one(target, DataTable).loading = False
            where = f"Results: {worker.name.replace('_', ' ')}"
            self.fintrade.notify_error(where, cast(BaseException, worker.error))
        elif event.state == WorkerState.SUCCESS:
            if target:
                self.query_one(target, DataTable).loading = False
            self.show_result(worker.name, worker.result)
        ended = event.state in (WorkerState.SUCCESS, WorkerState.ERROR)
        if worker.name == "load_accuracy" and ended and state.stale:
            state.stale = False
            self.on_workspace_changed(None)
        elif worker.name == "load_accuracy" and ended and state.then_reload_rest:
            state.then_reload_rest = False
            self.reload_rest()

    def show_result(self, name: str, result: Any) -> None:
        """On the UI thread: what the worker `name` read or wrote, shown by its room."""
        state = self.state
        if name == "load_accuracy":
            matrix.show_accuracy(self, state, result)
        elif name == "load_agreement":
            matrix.show_agreement(self, result)
        elif name == "load_failures":
            state.cases = result
            failures.refresh(self, state)
        elif name == "load_cost":
            cost.show_cost(self, result)
        elif name == "rescore_view":
            rescore.rescored(self, state, result)
            matrix.show_kinds(self, state)
            self.action_reload()
        elif name == "export_case":
            self.notify(
                f"Case study written (HTML, Markdown):\n{result}", title="Export", timeout=8
            )
        elif name == "export_view":
            self.notify(f"View written (HTML report, runs):\n{result}", title="Export", timeout=8)

    @on(DataTable.RowHighlighted, "#failures")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        failures.show_case(self, self.state)

    @on(DataTable.RowSelected, "#failures")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_replay()

    @on(Checkbox.Changed)
    def _filter_changed(self) -> None:
        failures.refresh(self, self.state)

    # -- actions --
    def action_toggle_disputed(self) -> None:
        """Leave the questions whose reference is disputed out of the matrix, or take them in."""
        self.state.without_disputed = not self.state.without_disputed
        self.reload_accuracy()

    def action_cycle_cause(self) -> None:
        """Show only the cases of one cause, then the next, then all again."""
        failures.next_cause(self, self.state)

    def action_toggle_filter(self, name: str) -> None:
        self.query_one(f"#f-{name}", Checkbox).toggle()

    def action_toggle_scores(self) -> None:
        matrix.next_kind(self.state)
        matrix.show_kinds(self, self.state)
        self.reload_accuracy()

    def action_toggle_lanes(self) -> None:
        matrix.toggle_lanes(self, self.state)

    def action_cycle_protocol(self) -> None:
        self.query_one(LanesPane).cycle()

    def action_toggle_annotators(self) -> None:
        matrix.toggle_annotators(self, self.state)

    def action_toggle_cost(self) -> None:
        cost.toggle_cost(self, self.state)
        matrix.show_title(self, self.state)

    def action_disagreements(self) -> None:
        self.fintrade.action_goto("disagreements")

    def action_cycle_source(self) -> None:
        """All question sets, then each set with scores of this kind, one at a time."""
        matrix.next_source(self.state)
        matrix.show_title(self, self.state)
        self.reload_accuracy()

    def action_replay(self) -> None:
        case = failures.current(self, self.state)
        if case is None:
            self.notify("No case highlighted", severity="warning")
            return
        ids = case.get("replay_ids") or case["run_ids"]
        self.fintrade.action_goto("arena", run_ids=list(ids), read_only=True)

    def action_export_view(self) -> None:
        state = self.state
        who = KIND_NAMES[state.kind] + (f", {state.source}" if state.source else "")
        subtitle = f"{who}; cases: {failures.filters_line(self)}"
        self.export_view(list(state.shown), state.table, subtitle)

    def action_export(self) -> None:
        case = failures.current(self, self.state)
        if case is None:
            self.notify("No case highlighted", severity="warning")
            return
        self.export_case(list(case["run_ids"]))

    def action_rescore(self) -> None:
        if rescore.start(self):
            self.rescore_view(self.state.source)

    def reload_accuracy(self) -> None:
        state = self.state
        self.query_one("#accuracy", DataTable).loading = True
        self.load_accuracy(state.kind, state.source, state.without_disputed)
        self.load_cost(state.source, state.without_disputed)

    def on_workspace_changed(self, event: Any) -> None:
        """Runs or scores another process wrote: the matrix is read again first, the agreement
        and the failure cases once it shows (three readers at once would delay it). A reload
        under way is let finish, then one more follows (a batch writing all the while must not
        keep replacing it before it shows)."""
        if any(w.group == "accuracy" and not w.is_finished for w in self.workers):
            self.state.stale = True
            return
        self.state.then_reload_rest = True
        self.reload_accuracy()

    def action_reload(self) -> None:
        self.reload_accuracy()
        self.reload_rest()

    def reload_rest(self) -> None:
        self.query_one("#agreement", DataTable).loading = True
        self.load_agreement()
        self.query_one("#failures", DataTable).loading = True
        self.load_failures()
