"""Own-question screen: the analyst's own question typed in the explorer, or a benchmark question
asked of another ticker and/or quarter (a variant), on one form.

Opened with `o` from the Company screen (its ticker, and as-of the day the quarter's filing was
known) or from Questions (the highlighted question's tickers and as-of; on one of the analyst's
own questions, its fields: saving appends a new version), and with `v` from Questions or `V`
from the Arena (variant mode: the seed's text, golden indicators kept, no reference; tickers
and as-of to change). Golden indicators are suggested from the text until edited by hand.
ctrl+s checks, resolves and saves in a worker (questions/own.py, workspace/question_versions.py)
and opens the Arena on the saved question; bad input is one line under the form, which stays
open with what was typed and the field to fix focused."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Header, Input, Label, Static

from fintrade_tui.questions.indicators import LABEL
from fintrade_tui.questions.own import suggest_indicators
from fintrade_tui.ui.app_access import fintrade_app

FIELDS = ("text", "tickers", "as-of", "indicators", "reference")
# a UserError's `where` starts with one of these: the field to fix
WHERE: tuple[tuple[str, str], ...] = (("question text", "text"), ("ticker", "tickers"))
WHERE += (("as-of", "as-of"), ("indicators", "indicators"))


class OwnQuestionScreen(Screen):
    """The analyst's question (`seed_id` None) or a variant of `seed_id`."""

    TITLE = "Own question"
    CSS = """
    OwnQuestionScreen #own-form { padding: 1 2; height: auto; }
    OwnQuestionScreen .own-row { height: 1; margin: 0 0 1 0; }
    OwnQuestionScreen .own-row Label { width: 12; }
    OwnQuestionScreen .own-row Input { width: 1fr; }
    OwnQuestionScreen #own-note { height: auto; color: $text-muted; margin: 0 0 1 0; }
    OwnQuestionScreen #own-status { height: auto; padding: 0 2; }
    OwnQuestionScreen #own-status.error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save and open the Arena", id="own.save"),
        Binding("escape", "back", "Back", id="own.back"),
    ]

    def __init__(
        self,
        tickers: list[str] | None = None,
        as_of: date | None = None,
        text: str = "",
        indicators: list[str] | None = None,
        reference: str | None = None,
        question_id: str | None = None,
        seed_id: str | None = None,
    ) -> None:
        super().__init__()
        self.values = {
            "text": text,
            "tickers": ", ".join(tickers or []),
            "as-of": as_of.isoformat() if as_of else "",
            "indicators": ", ".join(LABEL.get(i, i) for i in indicators or []),
            "reference": reference or "",
        }
        self.question_id = question_id  # set: a new version of this own question
        self.seed_id = seed_id  # set: a variant of this question
        self.indicators_typed = bool(indicators) or bool(seed_id)  # no more suggestions

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="own-form"):
            if self.seed_id:
                note = f"Ask {self.seed_id} of another ticker and/or quarter: its wording is "
                note += "rewritten, its golden indicators kept, its reference left empty."
            elif self.question_id:
                note = f"Edit {self.question_id}: saving appends a new version."
            else:
                note = "Your own question, point in time: asked as of the close of the as-of."
            yield Static(Text(note), id="own-note")
            hints = {
                "text": "the question",
                "tickers": "NVDA, AMD",
                "as-of": "YYYY-MM-DD",
                "indicators": "suggested from the text: ROE, RSI, Debt/Equity…",
                "reference": "optional: a reference answer",
            }
            for name in FIELDS:
                with Horizontal(classes="own-row"):
                    yield Label(name)
                    field = Input(
                        self.values[name], placeholder=hints[name], id=f"own-{name}", compact=True
                    )
                    field.disabled = bool(self.seed_id) and name in (
                        "text",
                        "indicators",
                        "reference",
                    )
                    yield field
            yield Button("Save and open the Arena", id="own-save", variant="primary", compact=True)
        yield Static("", id="own-status")
        yield Footer()

    def on_mount(self) -> None:
        first = "tickers" if self.seed_id else "text"
        self.query_one(f"#own-{first}", Input).focus()

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#own-status", Static)
        status.set_class(error, "error")
        status.update(Text(text))  # may quote what was typed: never markup

    @on(Input.Changed, "#own-text")
    def _suggest(self, event: Input.Changed) -> None:
        if self.indicators_typed:
            return
        names = [LABEL.get(n, n) for n in suggest_indicators(event.value)]
        field = self.query_one("#own-indicators", Input)
        with field.prevent(Input.Changed):
            field.value = ", ".join(names)

    @on(Input.Changed, "#own-indicators")
    def _typed(self, event: Input.Changed) -> None:
        if self.focused is event.input:
            self.indicators_typed = True  # the analyst's list from now on

    @on(Button.Pressed, "#own-save")
    def _pressed(self) -> None:
        self.action_save()

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_save()

    def action_save(self) -> None:
        values = {name: self.query_one(f"#own-{name}", Input).value for name in FIELDS}
        self._status("checking and resolving…")
        self._save(values)

    @work(exclusive=True, group="own-save", exit_on_error=False)
    async def _save(self, values: dict[str, str]) -> None:
        from fintrade_tui.errors import UserError

        try:
            q = await asyncio.to_thread(self._build, values)
        except UserError as exc:  # in place: the form keeps what was typed
            self._status(str(exc), True)
            field = next((f for w, f in WHERE if exc.where.startswith(w)), None)
            if field:
                self.query_one(f"#own-{field}", Input).focus()
            return
        except Exception as exc:
            self._status(f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}", True)
            return
        self._status(f"saved {q.id}: {', '.join(q.tickers)} as of {q.as_of}, {q.coverage}")
        self.app.notify(
            f"{q.id} saved: {', '.join(q.tickers)} as of {q.as_of}; coverage {q.coverage}",
            title="Own question",
        )
        for below in self.app.screen_stack:  # a Questions screen underneath lists it on return
            from .questions import QuestionsScreen

            if isinstance(below, QuestionsScreen):
                below.action_reload()
        self.app.pop_screen()
        fintrade_app(self).action_goto("arena", question_id=q.id)

    def _build(self, values: dict[str, str]) -> Any:
        """Check, resolve and save (worker thread); returns the saved question."""
        from fintrade_tui.questions.own import (
            next_id,
            own_question,
            parse_as_of,
            split_indicators,
            split_list,
            variant_of,
        )
        from fintrade_tui.questions.resolve import Resolver
        from fintrade_tui.workspace.question_versions import save_version
        from fintrade_tui.workspace.questions import get_question

        cfg = fintrade_app(self).cfg
        as_of = parse_as_of(values["as-of"])
        tickers = split_list(values["tickers"])
        store, ws = fintrade_app(self).store(), fintrade_app(self).workspace()
        try:
            r = Resolver(store, cfg.questions.reference_date, cfg.fundamentals.estimated_lag_days)
            if self.seed_id:
                seed = get_question(ws, self.seed_id)
                q = variant_of(r, seed, next_id(ws), tickers, as_of, date.today())
            else:
                q = own_question(
                    r,
                    self.question_id or next_id(ws),
                    values["text"],
                    tickers,
                    as_of,
                    split_indicators(values["indicators"]),
                    values["reference"],
                    date.today(),
                )
            save_version(ws, q)
        finally:
            store.close()
            ws.close()
        return q

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:  # never pop the app's last screen
            self.app.pop_screen()


def open_own(app: Any, q: Any) -> None:
    """`o` on Questions: the highlighted question's tickers and as-of; on one of the analyst's
    own questions (not a variant), its fields, saved as a new version of it."""
    if q is None:
        app.action_goto("own_question")
    elif q.source == "own" and not q.parent_id:
        app.action_goto(
            "own_question", tickers=q.tickers, as_of=q.as_of, text=q.text,
            indicators=q.golden, reference=q.reference_answer, question_id=q.id,
        )  # fmt: skip
    else:
        app.action_goto("own_question", tickers=q.tickers, as_of=q.as_of)


def open_variant(app: Any, q: Any) -> None:
    """`v` on Questions, `V` in the Arena: `q` asked of another ticker and/or quarter."""
    if q is None:
        app.notify("No question highlighted", severity="warning")
        return
    app.action_goto(
        "own_question", tickers=q.tickers, as_of=q.as_of, text=q.text, indicators=q.golden,
        seed_id=q.id,
    )  # fmt: skip
