"""Opening the Arena: the workspace stores, the question (given, picked, or the one of the runs
being replayed) and litellm's slow first import — all off the event loop — then the question's
panes, and the preparation that lets `r` start warm. Plain functions over the screen's state."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from rich.text import Text
from textual.widgets import Input, Static

from fintrade_tui.safe_text import plain, printable
from fintrade_tui.ui.arena_model import freeze_heap, warm_litellm

from .checks import check_pane
from .layout import build_panes
from .picker import QuestionPicker, question_lines

if TYPE_CHECKING:
    from fintrade_tui.ui.app import FinTradeApp
    from fintrade_tui.workspace.questions import Question
    from fintrade_tui.workspace.run_records import RunStore
    from fintrade_tui.workspace.scores import ScoreStore

    from .screen import ArenaScreen
    from .state import ArenaState

T = TypeVar("T")


@dataclass
class Opened:
    """What `read_workspace` reads for the Arena, in a thread."""

    runs: RunStore
    scores: ScoreStore
    records: list[dict[str, Any]] = field(default_factory=list)
    question: Question | None = None
    questions: list[tuple[str, str]] = field(default_factory=list)  # the picker's lines
    human: list[dict[str, Any]] = field(default_factory=list)  # replayed runs' latest scores
    llm: list[dict[str, Any]] = field(default_factory=list)
    causes: dict[str, str] = field(default_factory=dict)
    agreements: dict[str, dict[str, Any]] = field(default_factory=dict)


def cursor_do(app: FinTradeApp, fn: Callable[[Any], T]) -> T:
    """Run `fn(cursor)` on a workspace cursor of its own (called in a thread)."""
    cur = app.workspace()
    try:
        return fn(cur)
    finally:
        cur.close()


def replay_causes(cur: Any, run_ids: list[str]) -> dict[str, str]:
    """run id -> its failure cause (reports/causes.py), for the replayed runs that failed."""
    from fintrade_tui.reports.causes import failure_causes

    return {r["run_id"]: r["cause"] for r in failure_causes(cur) if r["run_id"] in run_ids}


def read_workspace(app: FinTradeApp, state: ArenaState) -> Opened:
    """The stores, the replayed runs with their scores and causes, and the question (or the
    picker's list): blocking, so called in a thread."""
    from fintrade_tui.workspace.questions import get_question, load_questions
    from fintrade_tui.workspace.run_records import RunStore
    from fintrade_tui.workspace.scores import ScoreStore

    con = app.workspace_connection()
    out = Opened(RunStore(con), ScoreStore(con))
    with suppress(Exception):  # each judge's measured agreement with people, if any
        from fintrade_tui.workspace.judge_agreement import read_latest

        out.agreements = cursor_do(app, read_latest)
    qid = state.question_id
    if state.run_ids:
        out.records = [out.runs.get(r) for r in state.run_ids]
        qid = qid or out.records[0]["question_id"]
        ids = [r["id"] for r in out.records]
        out.human = out.scores.latest(kind="human", run_ids=ids)
        out.llm = out.scores.latest(kind="llm", run_ids=ids, status=None)
        out.causes = cursor_do(app, lambda cur: replay_causes(cur, ids))
    if qid and state.run_ids:
        with suppress(Exception):  # a replay whose question was deleted still shows
            out.question = cursor_do(app, lambda cur: get_question(cur, qid))
    elif qid:
        out.question = cursor_do(app, lambda cur: get_question(cur, qid))
    else:
        out.questions = question_lines(cursor_do(app, load_questions))
    return out


async def load(screen: ArenaScreen) -> None:
    """Open the workspace and what the Arena shows; a failure shows in place."""
    state, app = screen.state, screen.fintrade
    try:
        opened = await asyncio.to_thread(read_workspace, app, state)
    except Exception as exc:
        screen.query_one("#question", Static).update(plain(f"cannot open: {exc}"))
        screen.say(f"error: {str(exc).splitlines()[0][:200]}", error=True)
        app.notify_error("Arena", exc)
        return
    from fintrade_tui.runs.runner import Runner

    state.runs, state.scores, state.records = opened.runs, opened.scores, opened.records
    state.causes, state.agreements = opened.causes, opened.agreements
    state.runner = Runner(app.cfg, opened.runs, staged_index=True)
    if state.records:
        await show_replay(screen, opened)
    elif opened.question is not None:
        await set_question(screen, opened.question)
    else:
        open_picker(screen, opened.questions)
    screen.run_worker(warm(), group="arena-warm", exit_on_error=False)


async def warm() -> None:
    """Import litellm (about 3 s) and warm its streaming path in a thread now, so no first
    run stalls the screen; then keep the long-lived objects out of full collections."""
    with suppress(Exception):
        await asyncio.to_thread(warm_litellm)
    freeze_heap()


def open_picker(screen: ArenaScreen, questions: list[tuple[str, str]]) -> None:
    picker = screen.query_one(QuestionPicker)
    picker.display = True
    if questions:
        picker.set_questions(questions)
    screen.query_one("#question", Static).update(Text("Pick a question (type its id)."))
    picker.query_one(Input).focus()


async def load_questions(screen: ArenaScreen) -> None:
    """The picker's list, read in a thread (`o` before any list was read)."""
    from fintrade_tui.workspace.questions import load_questions as read

    try:
        qs = await asyncio.to_thread(cursor_do, screen.fintrade, read)
        open_picker(screen, question_lines(qs))
        screen.say("")
    except Exception as exc:
        screen.say(f"error: {exc}", error=True)


async def open_question(screen: ArenaScreen, qid: str) -> None:
    """The question the picker named, read in a thread; its panes replace the picker."""
    from fintrade_tui.workspace.questions import get_question

    try:
        q = await asyncio.to_thread(cursor_do, screen.fintrade, lambda cur: get_question(cur, qid))
    except Exception as exc:
        screen.say(str(exc).splitlines()[0][:200], error=True)
        return
    screen.query_one(QuestionPicker).display = False
    screen.say("")
    await set_question(screen, q)


async def set_question(screen: ArenaScreen, q: Question) -> None:
    state = screen.state
    state.question = q
    tickers = ", ".join(q.tickers) or "no tickers"
    head = plain(f"{q.id} · {q.category} · as of {q.as_of} · {tickers}\n", "bold")
    head.append(printable(q.text), "")
    screen.query_one("#question", Static).update(head)
    await build_panes(screen)
    if not state.records:
        screen.run_worker(
            prepare(screen, q), group="arena-prepare", exclusive=True, exit_on_error=False
        )


async def prepare(screen: ArenaScreen, q: Question) -> None:
    """While the analyst reads the question, a local model loads and reads the opening its
    prompts share, and a RAG pane's first filing is indexed (`readiness.prepare`), so `r`
    starts warm. Another question cancels it between steps; a failure only says so."""
    from fintrade_tui.application.readiness import prepare as get_ready
    from fintrade_tui.models import llm

    state, app = screen.state, screen.fintrade
    panes, runner = screen.panes(), state.runner
    models = []  # the local ones: hosted models have nothing to load or read
    for name in dict.fromkeys(p.model or state.model for p in panes):
        with suppress(Exception):  # an unknown model fails in its pane, with its error
            if runner is not None and (m := runner.model(name)).local:
                models.append(m)
    if not models or not q.as_of:
        return
    stop = threading.Event()

    def say(msg: str) -> None:
        app.call_from_thread(getting_ready, screen, f"getting ready: {msg}")

    rag = any(p.condition == "rag" for p in panes)
    getting_ready(screen, f"getting ready: {', '.join(m.name for m in models)} reading…")
    try:
        await asyncio.to_thread(
            get_ready, app.cfg, q, models, state.level, rag, say, None, stop.is_set
        )
        if state.question is q:
            getting_ready(screen, "ready: the model has read the question (r runs every pane)")
    except asyncio.CancelledError:
        stop.set()
        raise
    except Exception as exc:  # the run itself reports a model's problem in its pane
        screen.say(f"could not prepare: {llm.error_text(exc)}"[:200], error=True)
    if rag:
        app.follow_indexing()


def getting_ready(screen: ArenaScreen, line: str) -> None:
    """Preparation's news, until a pane starts: from then the line follows the panes."""
    if all(p.status == "idle" for p in screen.panes()):
        screen.say(line)


async def show_replay(screen: ArenaScreen, opened: Opened) -> None:
    """Stored runs, each in its pane: answer, evidence, checks and latest scores."""
    state = screen.state
    if opened.question is not None:
        await set_question(screen, opened.question)
    else:
        screen.query_one("#question", Static).update(
            Text(f"question {state.records[0]['question_id']} (not in the workspace)")
        )
        await build_panes(screen)
    human = {s["run_id"]: s for s in opened.human}
    judged = {s["run_id"]: s for s in opened.llm}
    by_key = {p.key: p for p in screen.panes()}
    for run in state.records:
        pane = by_key[run["id"]]
        await pane.replay(run)
        check_pane(screen, pane)
        pane.human, pane.judge = human.get(run["id"]), judged.get(run["id"])
        pane.show_scores()
    screen.evidence_for(state.current)
