"""Running the Arena's panes. Each pane runs in its own async worker on the event loop,
consuming `Runner.stream(spec)` (the litellm call is async; the blocking evidence step already
runs in a thread inside it) and feeding a `MarkdownStream`, so fragments that arrive faster than
the screen draws are batched. A pane's failure stays in that pane; cancelling a pane cancels its
worker, and the runner records the run as cancelled with the partial answer."""

from __future__ import annotations

import asyncio
from contextlib import aclosing, suppress
from typing import TYPE_CHECKING, Any

from textual.widgets import Markdown
from textual.worker import Worker

from fintrade_tui.models import llm
from fintrade_tui.retrieval.indexing import pause_background, resume_background
from fintrade_tui.ui.arena_model import QUIET_GC

from .checks import check_pane

if TYPE_CHECKING:
    from fintrade_tui.runs.runner import Runner, RunSpec
    from fintrade_tui.ui.panes import AnswerPane
    from fintrade_tui.workspace.questions import Question

    from .screen import ArenaScreen


def ready_runner(screen: ArenaScreen) -> Runner | None:
    """The runner, when the question is resolved and the workspace open; else None, said."""
    state = screen.state
    q = state.question
    if q is None:
        screen.say("pick a question first (o)", error=True)
        return None
    if not q.as_of or not q.tickers:
        screen.say(f"question {q.id} is not resolved (no tickers or date)", True)
        return None
    if state.runner is None:
        screen.say("still opening the workspace…")
        return None
    return state.runner


def start(screen: ArenaScreen, pane: AnswerPane, runner: Runner) -> None:
    """(Re)start `pane`'s condition; a run still going in it is cancelled first."""
    from fintrade_tui.runs.runner import RunSpec

    state = screen.state
    assert state.question is not None  # ready_runner checked it
    spec = RunSpec(state.question, pane.condition, pane.model or state.model, state.level)
    pane.worker = screen.run_worker(
        run_pane(screen, pane, runner, spec, pane.worker),
        group="arena-runs",
        exit_on_error=False,
    )


def run_all(screen: ArenaScreen) -> None:
    if (runner := ready_runner(screen)) is not None:
        for pane in screen.panes():
            if not pane.running:
                start(screen, pane, runner)


def rerun(screen: ArenaScreen) -> None:
    current = screen.state.current
    if current is not None and (runner := ready_runner(screen)) is not None:
        start(screen, current, runner)


def retry(screen: ArenaScreen) -> None:
    """Rerun the focused pane if its model failed, else every failed pane; each reruns its own
    condition only, the panes still streaming or done are left alone."""
    failed = [p for p in screen.panes() if p.fault is not None and not p.running]
    if not failed:
        screen.say("no failed pane to retry (e re-runs the focused pane)", error=True)
        return
    if (runner := ready_runner(screen)) is not None:
        current = screen.state.current
        targets = [current] if current in failed and current is not None else failed
        for pane in targets:
            start(screen, pane, runner)
        screen.say(f"retrying {', '.join(p.label for p in targets)}")


def cancel(panes: list[AnswerPane]) -> None:
    for p in panes:
        if p.running:
            p.worker.cancel()


async def run_pane(
    screen: ArenaScreen,
    pane: AnswerPane,
    runner: Runner,
    spec: RunSpec,
    previous: Worker[Any] | None,
) -> None:
    """One pane's run, streamed into its Markdown; checked once it ends."""
    if previous is not None and not previous.is_finished:
        previous.cancel()
        with suppress(Exception):
            await previous.wait()
    await pane.reset()
    pane.preparing()
    screen.refresh_evidence(pane)
    stream = None
    end = None
    QUIET_GC.enter()
    pause_background()  # background indexing gives the cores to this run
    try:
        await asyncio.to_thread(llm.litellm)  # a no-op once warm
        if spec.condition == "rag":
            with suppress(Exception):  # a bad entry fails later, in the pane, with its error
                await asyncio.to_thread(lambda: runner.model(spec.model).warm())
            await ensure_index(screen, pane, spec.question)
            pane.preparing()
        stream = Markdown.get_stream(pane.markdown)  # batches what the screen can't draw
        pane.streaming = True
        async with aclosing(runner.stream(spec)) as events:
            async for ev in events:
                if ev.kind == "token":
                    pane.token()
                    await stream.write(ev.text)
                elif ev.kind == "started":
                    pane.started(ev.run_id, ev.data.get("evidence"))
                    screen.refresh_evidence(pane)
                elif ev.kind == "tool":
                    screen.refresh_evidence(pane)
                elif ev.kind == "ended":
                    end = ev.data
                    pane.run_id = ev.run_id
    except asyncio.CancelledError:
        pane.run_id = pane.run_id or last_run_id(screen, spec)
        pane.cancelled()
        raise
    except Exception as exc:  # the runner records its own errors; this is anything else
        pane.failed(llm.error_text(exc))
    finally:
        QUIET_GC.leave()
        resume_background()
        if stream is not None:
            await stream.stop()
            # stop() returns while a cancelled append it shielded may still be mounting;
            # the widget's lock is held until that append is drawn in
            async with pane.markdown.lock:
                pass
        settle(screen, pane)
        screen.refresh_evidence(pane)
    if end is not None:
        pane.finish(end)
        check_pane(screen, pane)


def settle(screen: ArenaScreen, pane: AnswerPane) -> None:
    """Drop the lines held below finished answers once no pane streams any more: it repaints a
    whole pane, a stall the other panes' frames would share."""
    pane.streaming = False
    panes = screen.panes()
    if not any(p.streaming for p in panes):
        for p in panes:
            if p is pane or p.reserved:
                p.settle()


def last_run_id(screen: ArenaScreen, spec: RunSpec) -> str | None:
    """A run cancelled before its evidence was ready: its record, found by what it was."""
    runs = screen.state.runs
    if runs is None:
        return None
    try:
        found = runs.list(
            question=spec.question.id, condition=spec.condition, model=spec.model, limit=1
        )
    except Exception:
        return None
    return found[0]["id"] if found else None


class IndexProgress:
    """The indexer's progress, shown in the pane being prepared (called from its thread)."""

    def __init__(self, screen: ArenaScreen, pane: AnswerPane) -> None:
        self.app, self.pane = screen.fintrade, pane

    def say(self, msg: str) -> None:
        self.app.call_from_thread(self.pane.preparing, msg)

    def start(self, label: str, total: int) -> Any:
        done = [0]

        def tick(n: int = 1) -> None:
            done[0] += n
            if done[0] == total or done[0] % 25 == 0:
                self.say(f"{label} {done[0]}/{total}")

        return tick


async def ensure_index(screen: ArenaScreen, pane: AnswerPane, question: Question) -> None:
    """RAG needs the question's tickers indexed: build first what it uses, with progress (the
    rest of its companies follows in the background, shown in the title bar)."""
    from fintrade_tui.retrieval.indexing import ensure_index as build

    app = screen.fintrade
    progress = IndexProgress(screen, pane)
    tickers, as_of = list(question.tickers), question.as_of
    await asyncio.to_thread(build, app.cfg, tickers, progress.say, progress, as_of, True)
    app.follow_indexing()
