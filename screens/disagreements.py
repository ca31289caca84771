"""Disagreements screen (opened from Results with `D`): every run and rubric dimension where two
annotators are 2+ points apart, widest first, and an adjudication form. Saving appends a new
human score version (annotator "adjudicated" or the adjudicator's name, the reason as its note)
through ScoreStore, in a worker; errors are shown in place under the form."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Static
from textual.worker import Worker, WorkerState

from fintrade_tui.stats.annotators import ADJUDICATOR
from fintrade_tui.ui.app_access import fintrade_app

HEADERS = ("Run", "Question", "Model", "Condition", "Dimension", "Scores", "Spread", "Settled")


class DisagreementsScreen(Screen):
    """Annotator disagreements of 2+ points, for adjudication."""

    TITLE = "Disagreements"
    AUTO_FOCUS = "#disagreements"
    CSS = """
    DisagreementsScreen #disagreements { height: 1fr; }
    DisagreementsScreen #d-detail { height: auto; max-height: 12; padding: 0 1; }
    DisagreementsScreen #d-form { height: 3; }
    DisagreementsScreen #d-score { width: 16; }
    DisagreementsScreen #d-adjudicator { width: 24; }
    DisagreementsScreen #d-reason { width: 1fr; }
    DisagreementsScreen #d-error { color: $error; padding: 0 1; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="disagreements.back"),
        Binding("ctrl+s", "save", "Adjudicate", id="disagreements.save", priority=True),
        Binding("R", "reload", "Reload", id="disagreements.reload"),
    ]

    def __init__(self, gap: int = 2) -> None:
        super().__init__()
        self.gap = gap
        self.items: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Header()
        grid: DataTable = DataTable(id="disagreements", cursor_type="row", zebra_stripes=True)
        grid.add_columns(*HEADERS)
        yield grid
        yield Static("", id="d-detail")
        with Horizontal(id="d-form"):
            yield Input(placeholder="score 1-5", id="d-score")
            yield Input(ADJUDICATOR, placeholder="adjudicator", id="d-adjudicator")
            yield Input(placeholder="reason (saved as the note); Enter saves", id="d-reason")
        yield Static("", id="d-error")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    @work(thread=True, exclusive=True, group="disagreements", exit_on_error=False)
    def load(self) -> list[dict[str, Any]]:
        from fintrade_tui.stats.annotators import disagreement_view

        cur = fintrade_app(self).workspace()
        try:
            return disagreement_view(cur, self.gap)
        finally:
            cur.close()

    @work(thread=True, exclusive=True, group="adjudicate", exit_on_error=False)
    def save(self, run_id: str, values: dict[str, int], reason: str, who: str) -> dict:
        from fintrade_tui.stats.annotators import adjudicate

        return adjudicate(fintrade_app(self).workspace_connection(), run_id, values, reason, who)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.query_one("#disagreements", DataTable).loading = False
            self._error(str(event.worker.error).splitlines()[0][:300])
        elif event.state == WorkerState.SUCCESS and event.worker.name == "load":
            self._show(event.worker.result or [])
        elif event.state == WorkerState.SUCCESS and event.worker.name == "save":
            row = event.worker.result or {}
            self.query_one("#d-reason", Input).value = ""
            self.query_one("#d-score", Input).value = ""
            self.notify(f"Adjudication v{row['version']} of run {row['run_id']} saved")
            self.action_reload()

    def _error(self, text: str) -> None:
        self.query_one("#d-error", Static).update(Text(text))

    def _show(self, items: list[dict[str, Any]]) -> None:
        self.items = items
        grid = self.query_one("#disagreements", DataTable)
        grid.loading = False
        grid.clear()
        for i, it in enumerate(items):  # ids and names come from files: Text, never markup
            scores = ", ".join(f"{a} {v}" for a, v in it["scores"].items())
            settled = "—" if it["adjudicated"] is None else str(it["adjudicated"])
            cells = (it["run_id"], it["question_id"], it["model"], it["condition"])
            grid.add_row(
                *(Text(str(c)) for c in cells),
                it["dimension"],
                Text(scores),
                str(it["spread"]),
                settled,
                key=str(i),
            )
        self._detail()

    def current(self) -> dict[str, Any] | None:
        grid = self.query_one("#disagreements", DataTable)
        if not self.items or not 0 <= grid.cursor_row < len(self.items):
            return None
        return self.items[grid.cursor_row]

    def _detail(self) -> None:
        it = self.current()
        text = (
            Text(f"No disagreements of {self.gap}+ points between annotators.", style="italic")
            if it is None
            else Text.assemble(  # the answer is data from a model: plain Text, never markup
                (f"Run {it['run_id']} · {it['dimension']}: ", "bold"),
                " ".join((it.get("answer") or "(no answer)").split())[:600] + "\n",
                (
                    "Give the settled score, a reason, then Enter (or ctrl+s) to save it as a "
                    "new human score version.",
                    "italic",
                ),
            )
        )
        self.query_one("#d-detail", Static).update(text)

    @on(DataTable.RowHighlighted, "#disagreements")
    def _highlighted(self) -> None:
        self._detail()

    @on(Input.Submitted, "#d-reason")
    def _submitted(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        it = self.current()
        if it is None:
            self._error("No disagreement highlighted.")
            return
        raw = self.query_one("#d-score", Input).value.strip()
        if raw not in {"1", "2", "3", "4", "5"}:
            self._error(f"score {raw!r}: give a whole number 1 to 5")
            self.query_one("#d-score", Input).focus()
            return
        reason = self.query_one("#d-reason", Input).value.strip()
        who = self.query_one("#d-adjudicator", Input).value.strip() or ADJUDICATOR
        self._error("")
        self.save(it["run_id"], {it["dimension"]: int(raw)}, reason, who)

    def action_reload(self) -> None:
        self.query_one("#disagreements", DataTable).loading = True
        self.load()

    def action_back(self) -> None:
        self.app.pop_screen()
