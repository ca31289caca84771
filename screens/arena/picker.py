"""The Arena's question picker: type a question id or words of its text, Enter opens it. A
widget that talks by message (`QuestionPicker.Picked`); the screen opens what it names."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList
from textual.widgets.option_list import Option

from fintrade_tui.safe_text import plain


class QuestionPicker(Vertical):
    """Type a question id (or words of its text); Enter opens the typed id or the top match."""

    DEFAULT_CSS = """
    QuestionPicker { height: 12; }
    QuestionPicker > OptionList { height: 1fr; }
    """

    class Picked(Message):
        def __init__(self, question_id: str) -> None:
            super().__init__()
            self.question_id = question_id

    def __init__(self, id: str | None = None) -> None:
        super().__init__(id=id)
        self.questions: list[tuple[str, str]] = []  # (id, one line)
        self.shown: list[str] = []

    def compose(self) -> ComposeResult:
        yield Input(placeholder="question id or words of its text — Enter opens it")
        yield OptionList()

    def set_questions(self, questions: list[tuple[str, str]]) -> None:
        self.questions = questions
        self._filter(self.query_one(Input).value)

    def _filter(self, text: str) -> None:
        t = text.strip().lower()
        found = [
            (qid, line)
            for qid, line in self.questions
            if not t or qid.lower().startswith(t) or t in line.lower()
        ][:200]
        self.shown = [qid for qid, _ in found]
        ol = self.query_one(OptionList)
        ol.clear_options()
        ol.add_options(Option(plain(f"{qid:<14} {line}", no_wrap=True)) for qid, line in found)

    @on(Input.Changed)
    def _changed(self, event: Input.Changed) -> None:
        self._filter(event.value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        typed = event.value.strip()
        exact = [qid for qid, _ in self.questions if qid.lower() == typed.lower()]
        pick = exact[0] if exact else (self.shown[0] if self.shown else typed)
        if pick:
            self.post_message(self.Picked(pick))

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Picked(self.shown[event.option_index]))


def question_lines(questions: list[Any]) -> list[tuple[str, str]]:
    """(id, one line) of each question, as the picker lists them."""
    return [(q.id, f"{q.category:<3} {q.text}") for q in questions]
