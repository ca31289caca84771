"""Opening the Arena: the workspace stores, the question (given, picked, or the one of the runs
being replayed) and litellm's slow first import — all off the event loop — plus the question
picker widget. `ArenaOpening` is mixed into `ArenaScreen`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from fintrade_tui.safe_text import plain, printable
from fintrade_tui.ui.arena_model import freeze_heap, warm_litellm


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


def replay_causes(cur: Any, run_ids: list[str]) -> dict[str, str]:
    """run id -> its failure cause (reports/causes.py), for the replayed runs that failed."""
    from fintrade_tui.reports.causes import failure_causes

    return {r["run_id"]: r["cause"] for r in failure_causes(cur) if r["run_id"] in run_ids}


def _lines(questions: list[Any]) -> list[tuple[str, str]]:
    return [(q.id, f"{q.category:<3} {q.text}") for q in questions]


class ArenaOpening:
    """Loading steps of the Arena (mixed into the screen: `self` is an ArenaScreen)."""

    def _cursor_do(self, fn: Callable[[Any], Any]) -> Any:
        """Run `fn(cursor)` on a workspace cursor of its own (called in a thread)."""
        cur = self.app.workspace()
        try:
            return fn(cur)
        finally:
            cur.close()

    @work(exclusive=True, group="arena-load", exit_on_error=False)
    async def _load(self) -> None:
        try:
            data = await asyncio.to_thread(self._load_blocking)
        except Exception as exc:
            self.query_one("#question", Static).update(plain(f"cannot open: {exc}"))
            self.say(f"error: {str(exc).splitlines()[0][:200]}", error=True)
            self.app.notify_error("Arena", exc)
            return
        from fintrade_tui.runs.runner import Runner

        self.runs, self.scores, self.records = data["runs"], data["scores"], data["records"]
        self.causes = data.get("causes") or {}
        self.agreements = data.get("agreements") or {}
        self.runner = Runner(self.cfg, self.runs, staged_index=True)
        if self.records:
            await self._show_replay(data)
        elif data["question"] is not None:
            await self._set_question(data["question"])
        else:
            self._open_picker(data["questions"])
        self._warm()

    def _load_blocking(self) -> dict[str, Any]:
        from fintrade_tui.workspace.questions import get_question, load_questions
        from fintrade_tui.workspace.run_records import RunStore
        from fintrade_tui.workspace.scores import ScoreStore

        con = self.app.workspace_connection()
        out: dict[str, Any] = {"runs": RunStore(con), "scores": ScoreStore(con), "records": []}
        out["question"], out["questions"] = None, []
        with suppress(Exception):  # each judge's measured agreement with people, if any
            from fintrade_tui.workspace.judge_agreement import read_latest

            out["agreements"] = self._cursor_do(read_latest)
        qid = self.question_id
        if self.run_ids:
            out["records"] = [out["runs"].get(r) for r in self.run_ids]
            qid = qid or out["records"][0]["question_id"]
            ids = [r["id"] for r in out["records"]]
            out["human"] = out["scores"].latest(kind="human", run_ids=ids)
            out["llm"] = out["scores"].latest(kind="llm", run_ids=ids, status=None)
            out["causes"] = self._cursor_do(lambda cur: replay_causes(cur, ids))
        if qid and self.run_ids:
            with suppress(Exception):  # a replay whose question was deleted still shows
                out["question"] = self._cursor_do(lambda cur: get_question(cur, qid))
        elif qid:
            out["question"] = self._cursor_do(lambda cur: get_question(cur, qid))
        else:
            out["questions"] = _lines(self._cursor_do(load_questions))
        return out

    @work(group="arena-warm", exit_on_error=False)
    async def _warm(self) -> None:
        """Import litellm (about 3 s) and warm its streaming path in a thread now, so no first
        run stalls the screen; then keep the long-lived objects out of full collections."""
        with suppress(Exception):
            await asyncio.to_thread(warm_litellm)
        freeze_heap()

    def _open_picker(self, questions: list[tuple[str, str]]) -> None:
        picker = self.query_one(QuestionPicker)
        picker.display = True
        if questions:
            picker.set_questions(questions)
        self.query_one("#question", Static).update(Text("Pick a question (type its id)."))
        picker.query_one(Input).focus()

    def action_pick(self) -> None:
        if self.query_one(QuestionPicker).questions:
            self._open_picker([])
        else:
            self.say("loading the question list…")
            self._load_questions()

    def action_variant(self) -> None:
        """`V`: this question asked of another ticker and/or quarter (the own-question form)."""
        from fintrade_tui.screens.own_question import open_variant

        open_variant(self.app, self.question)

    @work(exclusive=True, group="arena-load", exit_on_error=False)
    async def _load_questions(self) -> None:
        from fintrade_tui.workspace.questions import load_questions

        try:
            self._open_picker(_lines(await asyncio.to_thread(self._cursor_do, load_questions)))
            self.say("")
        except Exception as exc:
            self.say(f"error: {exc}", error=True)

    def on_question_picker_picked(self, event: QuestionPicker.Picked) -> None:
        # a named handler: @on in a mixin is not seen by Textual's metaclass
        self.question_id = event.question_id
        self.say(f"opening {event.question_id}…")
        self._open_question(event.question_id)

    @work(exclusive=True, group="arena-load", exit_on_error=False)
    async def _open_question(self, qid: str) -> None:
        from fintrade_tui.workspace.questions import get_question

        try:
            q = await asyncio.to_thread(self._cursor_do, lambda cur: get_question(cur, qid))
        except Exception as exc:
            self.say(str(exc).splitlines()[0][:200], error=True)
            return
        self.query_one(QuestionPicker).display = False
        self.say("")
        await self._set_question(q)

    async def _set_question(self, q: Any) -> None:
        self.question = q
        tickers = ", ".join(q.tickers) or "no tickers"
        head = plain(f"{q.id} · {q.category} · as of {q.as_of} · {tickers}\n", "bold")
        head.append(printable(q.text), "")
        self.query_one("#question", Static).update(head)
        await self._build_panes()
        if not self.records:
            self._prepare(q)

    @work(exclusive=True, group="arena-prepare", exit_on_error=False)
    async def _prepare(self, q: Any) -> None:
        """While the analyst reads the question, a local model loads and reads the opening its
        prompts share, and a RAG pane's first filing is indexed (`readiness.prepare`), so `r`
        starts warm. Another question cancels it between steps; a failure only says so."""
        import threading

        from fintrade_tui.application.readiness import prepare
        from fintrade_tui.models import llm

        panes = self.panes()
        models = []  # the local ones: hosted models have nothing to load or read
        for name in dict.fromkeys(p.model or self.model for p in panes):
            with suppress(Exception):  # an unknown model fails in its pane, with its error
                if (m := self.runner.model(name)).local:
                    models.append(m)
        if not models or not q.as_of:
            return
        stop = threading.Event()
        app = self.app

        def say(msg: str) -> None:
            app.call_from_thread(self._getting_ready, f"getting ready: {msg}")

        rag = any(p.condition == "rag" for p in panes)
        self._getting_ready(f"getting ready: {', '.join(m.name for m in models)} reading…")
        try:
            await asyncio.to_thread(
                prepare, self.cfg, q, models, self.level, rag, say, None, stop.is_set
            )
            if self.question is q:
                self._getting_ready("ready: the model has read the question (r runs every pane)")
        except asyncio.CancelledError:
            stop.set()
            raise
        except Exception as exc:  # the run itself reports a model's problem in its pane
            self.say(f"could not prepare: {llm.error_text(exc)}"[:200], error=True)
        if rag and hasattr(self.app, "follow_indexing"):
            self.app.follow_indexing()

    def _getting_ready(self, line: str) -> None:
        """Preparation's news, until a pane starts: from then the line follows the panes."""
        if all(p.status == "idle" for p in self.panes()):
            self.say(line)

    async def _show_replay(self, data: dict[str, Any]) -> None:
        q = data["question"]
        if q is not None:
            await self._set_question(q)
        else:
            self.query_one("#question", Static).update(
                Text(f"question {self.records[0]['question_id']} (not in the workspace)")
            )
            await self._build_panes()
        human = {s["run_id"]: s for s in data.get("human", [])}
        judged = {s["run_id"]: s for s in data.get("llm", [])}
        by_key = {p.key: p for p in self.panes()}
        for run in self.records:
            pane = by_key[run["id"]]
            await pane.replay(run)
            self.check_pane(pane)  # type: ignore[attr-defined]
            pane.human, pane.judge = human.get(run["id"]), judged.get(run["id"])
            pane.show_scores()
        self.evidence_for(self.current)
