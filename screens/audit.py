"""Audit screen: one benchmark item audited on the five item-audit criteria (clarity, reference
answer, evidence, golden indicators, entity-time alignment). The question, its reference answer
and golden evidence on the left; one Select per criterion, the annotator and a note on the
right; ctrl+s (or Save) appends a new audit version in a worker; the question's audit history
below. The selects start from the annotator's latest audit; errors are shown in place."""

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

from fintrade_tui.questions.item_audit import failed
from fintrade_tui.safe_text import printable
from fintrade_tui.ui.app_access import fintrade_app
from fintrade_tui.ui.question_form import QuestionForm
from fintrade_tui.workspace.audits import CRITERIA, ItemAuditStore


class AuditScreen(QuestionForm):
    """Audit one question (`question_id`); the history shows every version by everyone."""

    TITLE = "Item audit"
    STATUS = "#audit-status"
    NO_QUESTION = "No question: open the audit from the Questions screen (A)."
    CSS = """
    AuditScreen #audit-main { height: 1fr; }
    AuditScreen #audit-question { width: 3fr; padding: 0 1; }
    AuditScreen #audit-form { width: 2fr; border-left: tall $panel; padding: 0 1; }
    AuditScreen .audit-row { height: 1; margin: 0 0 1 0; }
    AuditScreen .audit-row Label { width: 12; }
    AuditScreen .audit-row Select { width: 1fr; }
    AuditScreen .audit-row Input { width: 1fr; }
    AuditScreen #audit-status { height: auto; padding: 0 1; }
    AuditScreen #audit-history { height: 10; border-top: tall $panel; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="audit.save"),
        Binding("escape", "back", "Back", id="audit.back"),
    ]

    def __init__(self, question_id: str | None = None, annotator: str = "analyst") -> None:
        super().__init__(question_id)
        self.annotator = annotator
        self.history: list[dict[str, Any]] = []
        self.audits: ItemAuditStore | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="audit-main"):
            with VerticalScroll(id="audit-question"):
                yield Markdown("", id="audit-md")
            with Vertical(id="audit-form"):
                for c, values in CRITERIA.items():
                    with Horizontal(classes="audit-row"):
                        yield Label(c)
                        yield Select(
                            [(v, v) for v in values],
                            prompt="(keep previous)",
                            id=f"audit-{c}",
                            compact=True,
                        )
                with Horizontal(classes="audit-row"):
                    yield Label("annotator")
                    yield Input(self.annotator, id="audit-annotator", compact=True)
                with Horizontal(classes="audit-row"):
                    yield Label("note")
                    yield Input(placeholder="optional", id="audit-note", compact=True)
                yield Button("Save audit", id="audit-save", variant="primary", compact=True)
                yield Static("", id="audit-status")
        table: DataTable = DataTable(id="audit-history", cursor_type="row")
        table.add_columns("When", "Annotator", "v", *CRITERIA, "Verdict", "Note")
        yield table
        yield Footer()

    def _store(self) -> ItemAuditStore:
        if self.audits is None:  # made in the load worker: its CREATE TABLE is off the UI
            self.audits = ItemAuditStore(fintrade_app(self).workspace_connection())
        return self.audits

    def load_history(self) -> list[dict[str, Any]]:
        return self._store().history(self.question_id)

    def loaded(self, q: Any, history: list[dict[str, Any]]) -> None:
        from fintrade_tui.exports.question_markdown import question_markdown

        self.query_one("#audit-md", Markdown).update(
            printable(question_markdown(q, oracle_as_list=True))
        )
        self._show_history(history)
        self._prefill()

    # -- display (UI thread) --
    def _show_history(self, history: list[dict[str, Any]]) -> None:
        self.history = history
        table = self.query_one("#audit-history", DataTable)
        table.clear()
        for a in reversed(history):  # newest first
            bad = failed(a)
            table.add_row(
                a["created_at"].strftime("%Y-%m-%d %H:%M"),
                Text(a["annotator"]),
                str(a["version"]),
                *[a[c] for c in CRITERIA],
                "Core" if not bad else "fails " + ", ".join(bad),
                Text(a["note"] or ""),
            )

    def _prefill(self) -> None:
        """Start the selects from this annotator's latest audit (a re-audit edits it)."""
        who = self.query_one("#audit-annotator", Input).value.strip()
        mine = [a for a in self.history if a["annotator"] == who]
        if not mine:
            return
        last = max(mine, key=lambda a: a["version"])
        for c in CRITERIA:
            self.query_one(f"#audit-{c}", Select).value = last[c]
        self.query_one("#audit-note", Input).value = last["note"] or ""

    # -- saving --
    @on(Button.Pressed, "#audit-save")
    def _pressed(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        if not self.question_id:
            self._status("No question to audit.", True)
            return
        values = {}
        for c in CRITERIA:
            v = self.query_one(f"#audit-{c}", Select).value
            values[c] = None if v == Select.NULL else v
        who = self.query_one("#audit-annotator", Input).value
        note = self.query_one("#audit-note", Input).value.strip()
        self._status("saving…")
        self._save(who, note, values)

    @work(exclusive=True, group="audit-save", exit_on_error=False)
    async def _save(self, annotator: str, note: str, values: dict[str, str | None]) -> None:
        store, qid = self._store(), self.question_id
        if qid is None:
            return

        def save() -> dict[str, Any]:
            return store.save(qid, annotator, note, None, **values)

        try:
            row = await asyncio.to_thread(save)
            history = await asyncio.to_thread(store.history, qid)
        except Exception as exc:  # shown in place; the form keeps what was typed
            self._status(str(exc).splitlines()[0][:300], True)
            return
        bad = failed(row)
        verdict = "Core" if not bad else "fails " + ", ".join(f"{c}={v}" for c, v in bad.items())
        self._status(f"saved v{row['version']} by {row['annotator']}: {verdict}")
        self._show_history(history)
