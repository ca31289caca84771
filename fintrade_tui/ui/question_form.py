"""Question-form screens' shared shell: a screen about one question (`question_id`) that loads
the question and its history in a worker thread, shows a one-line status (errors in place,
never markup: it may quote benchmark text) and goes back without popping the app's last screen.
The item-audit and dispute screens are built on it."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from fintrade_tui.ui.app_access import fintrade_app


class QuestionForm(Screen):
    """Subclasses set STATUS (the status widget's id) and NO_QUESTION (what to do without a
    question), and implement `load_history` (thread) and `loaded` (UI thread)."""

    STATUS = "#form-status"
    NO_QUESTION = "No question."

    def __init__(self, question_id: str | None = None) -> None:
        super().__init__()
        self.question_id = question_id

    def on_mount(self) -> None:
        if not self.question_id:
            self._status(self.NO_QUESTION, True)
            return
        self.load()

    def load_history(self) -> list[dict[str, Any]]:
        """The question's stored versions (called in the load worker's thread)."""
        raise NotImplementedError

    def loaded(self, q: Any, history: list[dict[str, Any]]) -> None:
        """Show the loaded question and history (UI thread)."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="form-load", exit_on_error=False)
    def load(self) -> tuple[Any, list[dict[str, Any]]]:
        from fintrade_tui.workspace.questions import get_question

        question_id = self.question_id
        if question_id is None:  # on_mount loads only with a question
            raise ValueError(self.NO_QUESTION)
        cur = fintrade_app(self).workspace()
        try:
            q = get_question(cur, question_id)
        finally:
            cur.close()
        return q, self.load_history()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "load":
            return
        if event.state == WorkerState.ERROR:
            self._status(str(event.worker.error).splitlines()[0][:300], True)
        elif event.state == WorkerState.SUCCESS:
            result = event.worker.result  # load's (question, history): set on success
            if result is not None:
                self.loaded(*result)

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one(self.STATUS, Static)
        status.set_class(error, "error")
        status.update(Text(text))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:  # never pop the app's last screen
            self.app.pop_screen()
