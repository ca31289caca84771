"""Results screen: the accuracy matrix (model × condition × the question set's categories, Δ vs
No-RAG with significance marks, from the LLM judge's scores, the people's, or their labels),
the human–judge agreement table and a failure-case browser with filter toggles. `l` swaps the
matrix for the lane tables (Δ vs No-RAG per comparison and lane, with a forest plot; `p` cycles
the judging protocols), `a` the agreement for inter-annotator agreement (κ, α), `D` opens the
annotators' disagreements for adjudication. Enter replays a
case in the Arena (read-only, beside the question's other answers); `x` writes its case study
as HTML (with the explorer's own screenshots) and Markdown; `w` writes the filtered view as an
HTML report (matrix, cases, their answers) and its runs and matrix as JSONL and CSV. `$` swaps
the matrix for what the runs cost per model × condition and per right answer.

Every query runs in a worker thread on a workspace cursor; the bootstrap behind the accuracy
table runs there too (with fewer resamples than the CLI), behind a loading state."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container, Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Header, ProgressBar, Static
from textual.worker import Worker, WorkerState

from fintrade_tui.reports.failures import FILTER_LABELS, FILTERS
from fintrade_tui.safe_text import plain
from fintrade_tui.stats.lanes import workspace_lanes
from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.lanes_view import LanesPane
from fintrade_tui.ui.results_cost import COST_CSS, CostView
from fintrade_tui.ui.results_rescore import RESCORE_CSS, RescoreView
from fintrade_tui.ui.results_text import (
    AGREEMENT_COLUMNS,
    AGREEMENT_HEADERS,
    ANNOTATOR_HEADERS,
    FAILURE_HEADERS,
    KIND_NAMES,
    SCORE_KINDS,
    accuracy_note,
    annotator_cells,
    case_text,
    failure_cells,
    fmt_number,
    matrix_headers,
)
from fintrade_tui.ui.tables import set_columns

RESAMPLES = 2000  # fewer than the CLI's: Δ and the marks do not depend on them, the lanes' CIs
# move in the second decimal at most
KEYS = {
    "rag_worse": "r",
    "disagree": "d",
    "contradicted": "c",
    "judge_audit": "j",  # the judge calls it right, the audit contradicts a figure
    "errors": "e",
    "unrated": "u",
    "incorrect": "i",
    "refusal": "f",
    "oracle_flip": "o",
    "may_know": "h",  # hindsight
    "fatal_flaw": "k",
}


class ResultsScreen(FramePaced, RescoreView, CostView, Screen):
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
        + RESCORE_CSS
        + COST_CSS
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
        self.cases: list[dict[str, Any]] = []
        self.shown: list[dict[str, Any]] = []
        self.cause: str | None = None  # show only the cases of this cause (y cycles)
        self.without_disputed = False  # the matrix leaves disputed references out (z)
        self.kind = "llm"
        self._then_reload_rest = False  # a workspace change: agreement and cases after the matrix
        self._stale = False  # changed again while the matrix was being read
        self.source: str | None = None  # one question set, or all of them
        self.sources: list[str] = []  # the sets that have scores of this kind
        self.table: dict[str, Any] | None = None
        self.show_lanes = self.show_inter = False
        self._db = threading.Lock()  # one query at a time: stores may create tables on first use

    def _title(self) -> str:
        which = f"{self.source} questions" if self.source else "all questions"
        if self.show_cost:
            return self.cost_title(which)
        if self.show_lanes:
            return f"Lanes ({KIND_NAMES[self.kind]} scores): Δ vs No-RAG · {which} (g, l)"
        return (
            f"Accuracy % ({KIND_NAMES[self.kind]} scores) by model × condition × category"
            f" · {which} (g)"
        )

    def _kinds(self) -> Text:
        text = Text("Scores: ")
        for k in SCORE_KINDS:
            text.append(f" {KIND_NAMES[k]} ", style="reverse bold" if k == self.kind else "dim")
        return text.append("  (s)", style="dim")

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="r-bar"):
            yield Static(self._kinds(), id="scores-kind")
            yield ProgressBar(id="rescore-progress", show_eta=False)
        with Horizontal(id="r-top"):
            with Vertical(id="acc-pane"):
                yield Static(self._title(), id="accuracy-title", classes="title")
                acc: DataTable = DataTable(id="accuracy", cursor_type="none", zebra_stripes=True)
                acc.add_columns(*matrix_headers(["F", "T", "FT", "overall"]))
                yield acc
                yield Static("", id="accuracy-note")
                yield LanesPane(id="lanes-pane")
                yield self.cost_grid()
            with Vertical(id="agr-pane"):
                yield Static("Human–judge agreement (a)", id="agreement-title", classes="title")
                agr: DataTable = DataTable(id="agreement", cursor_type="none")
                agr.add_columns(*AGREEMENT_HEADERS)
                yield agr
                ann: DataTable = DataTable(id="annotators", cursor_type="none")
                ann.add_columns(*ANNOTATOR_HEADERS)
                yield ann
        with Vertical(id="failures-pane"):
            with Container(id="f-toggles"):  # two rows of six: every filter in view at 140 wide
                for name, key in KEYS.items():
                    yield Checkbox(f"{FILTER_LABELS[name]} ({key})", True, id=f"f-{name}")
                yield Static(self._cause_label(), id="f-cause")
            with Horizontal(id="f-main"):
                table: DataTable = DataTable(id="failures", cursor_type="row", zebra_stripes=True)
                table.add_columns(*FAILURE_HEADERS)
                yield table
                yield Static("", id="case-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    # -- workers (threads: workspace cursors only, no widgets) --
    @work(thread=True, exclusive=True, group="accuracy", exit_on_error=False)
    def load_accuracy(self, kind: str, source: str | None, leave: bool = False) -> tuple[Any, ...]:
        from fintrade_tui.judging.session import CREDIT_KINDS, llm_judges, score_rows
        from fintrade_tui.reports.accuracy import report_table
        from fintrade_tui.workspace.disputes import DisputeStore

        with self._db:
            cur = self.app.workspace()
            try:
                disputed = set(DisputeStore(cur, read_only=True).latest())
                rows = score_rows(cur, kind, leave_out=disputed if leave else set())
                judges = llm_judges(cur) if kind == "llm" else []
            finally:
                cur.close()
        sources = sorted({r["source"] for r in rows if r["source"]})
        rows = [r for r in rows if source is None or r["source"] == source]
        table = report_table(rows, kind, "no_rag", RESAMPLES)  # as `report` and the view report
        lanes: list[dict[str, Any]] = []
        if kind not in CREDIT_KINDS:  # lanes compare rubric scores
            with self._db:
                cur = self.app.workspace()
                try:
                    lanes = workspace_lanes(cur, kind, source, n_resamples=RESAMPLES)
                finally:
                    cur.close()
        return kind, source, table, sources, judges, lanes, (leave, len(disputed))

    @work(thread=True, exclusive=True, group="agreement", exit_on_error=False)
    def load_agreement(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        from fintrade_tui.judging.session import agreement_pairs
        from fintrade_tui.stats.agreement import agreement_table
        from fintrade_tui.stats.annotators import annotator_agreement, annotator_rows, human_scores

        with self._db:
            cur = self.app.workspace()
            try:
                pairs = agreement_pairs(cur)
                humans = human_scores(cur)
            finally:
                cur.close()
        return agreement_table(pairs), annotator_rows(annotator_agreement(humans))

    @work(thread=True, exclusive=True, group="failures", exit_on_error=False)
    def load_failures(self) -> list[dict[str, Any]]:
        from fintrade_tui.reports.causes import annotate, failure_causes
        from fintrade_tui.reports.failures import failure_cases

        with self._db:
            cur = self.app.workspace()
            try:
                cfg = self.app.cfg
                cases = failure_cases(cur, None, cfg.judging.disagreement, cfg.models)
                annotate(cases, failure_causes(cur))
                return cases
            finally:
                cur.close()

    @work(thread=True, group="export", exit_on_error=False)
    def export_case(self, run_ids: list[str]) -> str:
        from fintrade_tui.exports.case_study import write_case_study
        from fintrade_tui.exports.html_report import write_case_html
        from fintrade_tui.ui.case_shots import case_screenshots

        cfg = self.app.cfg
        with self._db:
            cur, store = self.app.workspace(), self.app.store()
            try:
                md = write_case_study(cfg, cur, run_ids)
                shots = case_screenshots(cfg, store, cur, run_ids)
                page = write_case_html(cfg, cur, run_ids, store_con=store, screenshots=shots)
            finally:
                cur.close()
                store.close()
        return f"{page}\n{md}"

    @work(thread=True, group="export", exit_on_error=False)
    def export_view(
        self, cases: list[dict[str, Any]], table: dict[str, Any] | None, subtitle: str
    ) -> str:
        from fintrade_tui.exports.html_view import write_view_html
        from fintrade_tui.exports.runs_table import write_view

        cfg = self.app.cfg
        run_ids = sorted({r for c in cases for r in c["run_ids"]})
        with self._db:
            cur, store = self.app.workspace(), self.app.store()
            try:
                files = write_view(cfg.store.parent / "exports", cur, run_ids, table)
                html = files.with_name(files.name.replace("-runs.jsonl", ".html"))
                page = write_view_html(
                    cfg, cur, cases, table, html, store_con=store, subtitle=subtitle
                )
            finally:
                cur.close()
                store.close()
        return f"{page}\n{files}"

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        target = {
            "load_accuracy": "#accuracy",
            "load_agreement": "#agreement",
            "load_failures": "#failures",
        }.get(worker.name)
        failed = event.state in (WorkerState.ERROR, WorkerState.CANCELLED)
        if worker.name == "rescore_view" and failed:
            self.rescore_ended()
        if event.state == WorkerState.ERROR:
            if target:
                self.query_one(target, DataTable).loading = False
            self.app.notify_error(f"Results: {worker.name.replace('_', ' ')}", worker.error)
        elif event.state == WorkerState.SUCCESS:
            if target:
                self.query_one(target, DataTable).loading = False
            getattr(self, f"_{worker.name}")(worker.result)
        ended = event.state in (WorkerState.SUCCESS, WorkerState.ERROR)
        if worker.name == "load_accuracy" and ended and self._stale:
            self._stale = False
            self.on_workspace_changed(None)
        elif worker.name == "load_accuracy" and ended and self._then_reload_rest:
            self._then_reload_rest = False
            self._reload_rest()

    # -- display (UI thread) --
    def _load_accuracy(self, result: tuple[Any, ...]) -> None:
        from fintrade_tui.stats.tables import fmt_cell, shown_conditions
        from fintrade_tui.workspace.evidence import LABELS

        kind, source, table, sources, judges, lanes, (leave, disputed) = result
        if (kind, source, leave) != (self.kind, self.source, self.without_disputed):
            return
        self.table, self.sources = table, sources
        self.query_one(LanesPane).set_tables(lanes, KIND_NAMES[kind])
        grid = self.query_one("#accuracy", DataTable)
        note = self.query_one("#accuracy-note", Static)
        who = KIND_NAMES[kind]
        columns = table["categories"] if table else ["F", "T", "FT", "overall"]
        rows: dict[str, tuple[Any, ...]] = {}
        for model in table["models"] if table else []:
            for cond in shown_conditions(table, model):
                cells = table["cells"][model][cond]
                rows[f"{model}:{cond}"] = (  # names come from files: Text, never markup
                    plain(model),
                    plain(LABELS.get(cond, cond)),
                    *[fmt_cell(cells[c]) for c in columns],
                    str(cells["overall"]["n"]),
                )
        set_columns(grid, matrix_headers(columns), rows.values())
        if table is None:
            note.update(f"No {who} scores" + (f" on {source} questions." if source else " yet."))
            return
        for key, row in rows.items():
            grid.add_row(*row, key=key)
        text = accuracy_note(table, kind, judges)
        if disputed:
            how = "left out (z)" if leave else "in the matrix (z leaves them out)"
            text += f"\n{disputed} question{'s' * (disputed != 1)} with a disputed reference: {how}"
        note.update(text)

    def _load_agreement(self, result: tuple[list[dict], list[dict]]) -> None:
        rows, inter = result
        grid = self.query_one("#agreement", DataTable)
        cells = [(r["dimension"], *[fmt_number(r[k]) for k in AGREEMENT_COLUMNS]) for r in rows]
        set_columns(grid, AGREEMENT_HEADERS, cells)
        for row in cells:
            grid.add_row(*row)
        ann = self.query_one("#annotators", DataTable)
        # annotator names come from files: Text, never markup
        cells = [tuple(plain(c) for c in annotator_cells(r)) for r in inter]
        set_columns(ann, ANNOTATOR_HEADERS, cells)
        for row in cells:
            ann.add_row(*row)

    def _load_failures(self, cases: list[dict[str, Any]]) -> None:
        self.cases = cases
        self.refresh_failures()

    def _export_case(self, paths: str) -> None:
        self.notify(f"Case study written (HTML, Markdown):\n{paths}", title="Export", timeout=8)

    def _export_view(self, paths: str) -> None:
        self.notify(f"View written (HTML report, runs):\n{paths}", title="Export", timeout=8)

    def _cause_label(self) -> str:
        from fintrade_tui.reports.causes import CAUSE_LABELS

        return f" cause: {CAUSE_LABELS[self.cause] if self.cause else 'any'} (y)"

    def action_toggle_disputed(self) -> None:
        """Leave the questions whose reference is disputed out of the matrix, or take them in."""
        self.without_disputed = not self.without_disputed
        self.reload_accuracy()

    def action_cycle_cause(self) -> None:
        """Show only the cases of one cause, then the next, then all again."""
        from fintrade_tui.reports.causes import CAUSES

        options = [None, *CAUSES]
        self.cause = options[(options.index(self.cause) + 1) % len(options)]
        self.query_one("#f-cause", Static).update(self._cause_label())
        self.refresh_failures()

    def enabled(self) -> set[str]:
        return {name for name in FILTERS if self.query_one(f"#f-{name}", Checkbox).value}

    def refresh_failures(self) -> None:
        on_now = self.enabled()
        self.shown = [
            c for c in self.cases if c["filter"] in on_now and self.cause in (None, c.get("cause"))
        ]
        grid = self.query_one("#failures", DataTable)
        # widths from every case: a filter toggled never changes them
        set_columns(grid, FAILURE_HEADERS, [failure_cells(c) for c in self.cases])
        for c in self.shown:
            grid.add_row(*failure_cells(c), key=c["key"])
        self.show_case(self.current())

    def current(self) -> dict[str, Any] | None:
        grid = self.query_one("#failures", DataTable)
        if not self.shown or not 0 <= grid.cursor_row < len(self.shown):
            return None
        return self.shown[grid.cursor_row]

    def show_case(self, case: dict[str, Any] | None) -> None:
        detail = self.query_one("#case-detail", Static)
        if case is None:
            detail.update(
                Text("No failure cases under these filters.", style="italic")
                if self.cases or not self.enabled()
                else Text("No failure cases.", style="italic")
            )
            return
        detail.update(case_text(case))

    @on(DataTable.RowHighlighted, "#failures")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_case(self.current())

    @on(DataTable.RowSelected, "#failures")
    def _selected(self, event: DataTable.RowSelected) -> None:
        self.action_replay()

    @on(Checkbox.Changed)
    def _filter_changed(self) -> None:
        self.refresh_failures()

    # -- actions --
    def action_toggle_filter(self, name: str) -> None:
        self.query_one(f"#f-{name}", Checkbox).toggle()

    def action_toggle_scores(self) -> None:
        self.kind = SCORE_KINDS[(SCORE_KINDS.index(self.kind) + 1) % len(SCORE_KINDS)]
        self.query_one("#scores-kind", Static).update(self._kinds())
        self.query_one("#accuracy-title", Static).update(self._title())
        self.reload_accuracy()

    def action_toggle_lanes(self) -> None:
        self.show_lanes = not self.show_lanes
        self.query_one("#acc-pane").set_class(self.show_lanes, "lanes")
        self.query_one("#accuracy-title", Static).update(self._title())

    def action_cycle_protocol(self) -> None:
        self.query_one(LanesPane).cycle()

    def action_toggle_annotators(self) -> None:
        self.show_inter = not self.show_inter
        self.query_one("#agr-pane").set_class(self.show_inter, "inter")
        title = "Inter-annotator agreement (a)" if self.show_inter else "Human–judge agreement (a)"
        self.query_one("#agreement-title", Static).update(title)

    def action_disagreements(self) -> None:
        self.app.action_goto("disagreements")

    def action_cycle_source(self) -> None:
        """All question sets, then each set with scores of this kind, one at a time."""
        options: list[str | None] = [None, *self.sources]
        at = options.index(self.source) if self.source in options else 0
        self.source = options[(at + 1) % len(options)]
        self.query_one("#accuracy-title", Static).update(self._title())
        self.reload_accuracy()

    def action_replay(self) -> None:
        case = self.current()
        if case is None:
            self.notify("No case highlighted", severity="warning")
            return
        ids = case.get("replay_ids") or case["run_ids"]
        self.app.action_goto("arena", run_ids=list(ids), read_only=True)

    def action_export_view(self) -> None:
        who = KIND_NAMES[self.kind] + (f", {self.source}" if self.source else "")
        filters = ", ".join(FILTER_LABELS[f] for f in sorted(self.enabled())) or "none"
        self.export_view(list(self.shown), self.table, f"{who}; cases: {filters}")

    def action_export(self) -> None:
        case = self.current()
        if case is None:
            self.notify("No case highlighted", severity="warning")
            return
        self.export_case(list(case["run_ids"]))

    def reload_accuracy(self) -> None:
        self.query_one("#accuracy", DataTable).loading = True
        self.load_accuracy(self.kind, self.source, self.without_disputed)
        self.load_cost(self.source, self.without_disputed)

    def on_workspace_changed(self, event: Any) -> None:
        """Runs or scores another process wrote: the matrix is read again first, the agreement
        and the failure cases once it shows (three readers at once would delay it). A reload
        under way is let finish, then one more follows (a batch writing all the while must not
        keep replacing it before it shows)."""
        if any(w.group == "accuracy" and not w.is_finished for w in self.workers):
            self._stale = True
            return
        self._then_reload_rest = True
        self.reload_accuracy()

    def action_reload(self) -> None:
        self.reload_accuracy()
        self._reload_rest()

    def _reload_rest(self) -> None:
        self.query_one("#agreement", DataTable).loading = True
        self.load_agreement()
        self.query_one("#failures", DataTable).loading = True
        self.load_failures()
