"""Dispute screen: an analyst marks a question's reference answer wrong or ambiguous (or
withdraws that), with a reason and, for a wrong one, the corrected reference — appended to the
workspace's disputes (workspace/disputes.py) in a worker. The question and its reference on the
left, the form on the right, every version of the question's disputes below; errors in place."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Markdown,
    Select,
    Static,
)

from fintrade_tui.safe_text import printable
from fintrade_tui.ui.app_access import fintrade_app
from fintrade_tui.ui.question_form import QuestionForm
from fintrade_tui.workspace.disputes import KINDS, DisputeStore


class DisputeScreen(QuestionForm):
    """Dispute the reference of one question (`question_id`)."""

    TITLE = "Dispute reference"
    STATUS = "#dispute-status"
    NO_QUESTION = "No question: open it from the Questions screen (D)."
    CSS = """
    DisputeScreen #dispute-main { height: 1fr; }
    DisputeScreen #dispute-question { width: 3fr; padding: 0 1; }
    DisputeScreen #dispute-form { width: 2fr; border-left: tall $panel; padding: 0 1; }
    DisputeScreen .dispute-row { height: 1; margin: 0 0 1 0; }
    DisputeScreen .dispute-row Label { width: 10; }
    DisputeScreen .dispute-row Select, DisputeScreen .dispute-row Input { width: 1fr; }
    DisputeScreen #dispute-status { height: auto; padding: 0 1; }
    DisputeScreen #dispute-status.error { color: $error; }
    DisputeScreen #dispute-history { height: 8; border-top: tall $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="dispute.save"),
        Binding("escape", "back", "Back", id="dispute.back"),
    ]

    def __init__(self, question_id: str | None = None, who: str = "analyst") -> None:
        super().__init__(question_id)
        self.who = who
        self.disputes: DisputeStore | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="dispute-main"):
            with VerticalScroll(id="dispute-question"):
                yield Markdown("", id="dispute-md")
            with Vertical(id="dispute-form"):
                with Horizontal(classes="dispute-row"):
                    yield Label("reference")
                    options = [(k, k) for k in KINDS]
                    yield Select(options, value="wrong", id="dispute-kind", compact=True)
                with Horizontal(classes="dispute-row"):
                    yield Label("reason")
                    yield Input(placeholder="why, in a line", id="dispute-reason", compact=True)
                with Horizontal(classes="dispute-row"):
                    yield Label("corrected")
                    yield Input(placeholder="wrong only", id="dispute-corrected", compact=True)
                with Horizontal(classes="dispute-row"):
                    yield Label("who")
                    yield Input(self.who, id="dispute-who", compact=True)
                yield Button("Save dispute", id="dispute-save", variant="primary", compact=True)
                yield Static("", id="dispute-status")
        table: DataTable = DataTable(id="dispute-history", cursor_type="row")
        table.add_columns("When", "v", "Kind", "Who", "Reason", "Corrected", "Origin")
        yield table
        yield Footer()

    def _store(self) -> DisputeStore:
        if self.disputes is None:  # made in a worker: its CREATE TABLE is off the UI thread
            self.disputes = DisputeStore(fintrade_app(self).workspace_connection())
        return self.disputes

    def load_history(self) -> list[dict[str, Any]]:
        return self._store().history(self.question_id)

    def loaded(self, q: Any, history: list[dict[str, Any]]) -> None:
        from fintrade_tui.exports.question_markdown import question_markdown

        self.query_one("#dispute-md", Markdown).update(printable(question_markdown(q)))
        self._show_history(history)

    def _show_history(self, history: list[dict[str, Any]]) -> None:
        table = self.query_one("#dispute-history", DataTable)
        table.clear()
        for d in reversed(history):  # newest first
            table.add_row(
                d["created_at"].strftime("%Y-%m-%d %H:%M"),
                str(d["version"]),
                d["kind"],
                Text(d["who"]),
                Text(d["reason"]),
                Text(d["corrected"] or ""),
                Text(d["origin"]),
            )

    @on(Button.Pressed, "#dispute-save")
    def _pressed(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        if not self.question_id:
            self._status("No question to dispute.", True)
            return
        kind = self.query_one("#dispute-kind", Select).value
        values = {k: self.query_one(f"#dispute-{k}", Input).value for k in ("reason", "who")}
        corrected = self.query_one("#dispute-corrected", Input).value.strip() or None
        self._status("saving…")
        self._save(str(kind), values["reason"], values["who"], corrected)

    @work(exclusive=True, group="dispute-save", exit_on_error=False)
    async def _save(self, kind: str, reason: str, who: str, corrected: str | None) -> None:
        store, qid = self._store(), self.question_id
        if qid is None:
            return
        try:
            row = await asyncio.to_thread(store.save, qid, kind, reason, who, corrected)
            history = await asyncio.to_thread(store.history, qid)
        except Exception as exc:  # shown in place; the form keeps what was typed
            self._status(str(exc).splitlines()[0][:300], True)
            return
        self._status(f"saved v{row['version']}: the reference is {row['kind']}")
        self._show_history(history)
