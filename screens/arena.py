"""The Arena: one question answered under several evidence conditions side by side, streamed.

Each pane runs in its own async worker on the event loop, consuming `Runner.stream(spec)` (the
litellm call is async; the blocking evidence step already runs in a thread inside it) and
feeding a `MarkdownStream`, so fragments that arrive faster than the screen draws are batched.
A pane's failure stays in that pane, with its reason and the retry key (`R`, `ui/faults.py`):
it reruns that pane's condition only, the other panes streaming on. Cancelling a pane cancels
its worker: the runner records the run as cancelled with the partial answer. Blind mode hides
the conditions behind A/B/C in a seeded order until every pane is scored (or `v`). `s` scores
the focused pane in a modal, `j` runs the LLM judge and the numeric audit on every completed
pane and shows them inline. `read_only` with `run_ids` replays stored runs: answers, evidence
and scores, no running.
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing, suppress
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Markdown, Static

from fintrade_tui.models import llm
from fintrade_tui.retrieval.indexing import pause_background, resume_background
from fintrade_tui.ui.arena_checks import ArenaChecks, trace_rows
from fintrade_tui.ui.arena_model import QUIET_GC, evidence_rows, ordered
from fintrade_tui.ui.arena_open import ArenaOpening, QuestionPicker
from fintrade_tui.ui.arena_panes import ArenaPanes
from fintrade_tui.ui.arena_refresh import ArenaRefresh
from fintrade_tui.ui.evidence import EvidencePanel
from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.panes import AnswerPane
from fintrade_tui.workspace.evidence import LABELS

from .score import ArenaScoring

READ_ONLY_BLOCKED = {"run_all", "rerun", "cancel", "cancel_all", "model", "compare", "level"}
READ_ONLY_BLOCKED |= {"toggle"}
READ_ONLY_BLOCKED |= {"pick", "retry"}
RETRY = "arena.retry"  # the binding id of the retry key (remappable in `ui.keymap`)


class ArenaScreen(
    FramePaced, ArenaOpening, ArenaScoring, ArenaPanes, ArenaChecks, ArenaRefresh, Screen
):
    """Question × conditions side by side; run, cancel, re-run, blind, score, judge."""

    AUTO_FOCUS = None  # focus goes to the picker or the first pane once the question is known
    DEFAULT_CSS = """
    ArenaScreen #question { height: auto; max-height: 4; padding: 0 1; }
    ArenaScreen #settings { height: 1; padding: 0 1; color: $text-muted; }
    ArenaScreen #panes { height: 1fr; }
    ArenaScreen #arena-status { height: 1; padding: 0 1; background: $panel; }
    ArenaScreen #arena-status.-error { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # m, M, l, i and t are spelled out in the settings line; every key is in `?` and ctrl+p
        Binding("escape", "app.back", "Back", id="arena.back"),  # first: a long footer is cut
        Binding("r", "run_all", "Run", id="arena.run"),
        Binding("e", "rerun", "Re-run", id="arena.rerun"),
        Binding("x", "cancel", "Cancel", id="arena.cancel"),
        Binding("R", "retry", "Retry failed", show=False, id=RETRY),
        Binding("X", "cancel_all", "Cancel all", show=False, id="arena.cancel_all"),
        Binding("m", "model", "Model", show=False, id="arena.model"),
        Binding("M", "compare", "Compare model", show=False, id="arena.compare"),
        Binding("l", "level", "Level", show=False, id="arena.level"),
        Binding("i", "toggle('indicator_rag')", "Ind-RAG", show=False, id="arena.indicator"),
        Binding("t", "toggle('tool_use')", "Tools", show=False, id="arena.tools"),
        Binding("c", "toggle('long_context')", "Long ctx", show=False, id="arena.long_context"),
        Binding("f", "toggle('forecast_summary')", "Forecast", show=False, id="arena.forecast"),
        Binding("b", "blind", "Blind", id="arena.blind"),
        Binding("v", "reveal", "Reveal", id="arena.reveal"),
        Binding("s", "score", "Score", id="arena.score"),
        Binding("j", "judge", "Judge", id="arena.judge"),
        Binding(
            "J", "judge_common", "Judge (common evidence)", show=False, id="arena.judge_common"
        ),
        Binding("p", "prefer", "Prefer", show=False, id="arena.prefer"),
        Binding("o", "pick", "Question", id="arena.question"),
        Binding("V", "variant", "Ask of another", show=False, id="arena.variant"),
        Binding("left", "move(-1)", "Prev pane", show=False, id="arena.prev"),
        Binding("right", "move(1)", "Next pane", show=False, id="arena.next"),
    ]

    def __init__(
        self,
        question_id: str | None = None,
        run_ids: list[str] | None = None,
        read_only: bool = False,
        *,
        hide_timings: bool = False,
        blind_seed: str = "arena",
        annotator: str = "analyst",
    ) -> None:
        """`hide_timings` leaves volatile numbers out of the status lines (snapshots);
        `blind_seed` seeds the blind order (with the question id)."""
        super().__init__()
        self.question_id = question_id
        self.run_ids = list(run_ids or [])
        self.read_only = read_only
        self.hide_timings = hide_timings
        self.blind_seed = blind_seed
        self.annotator = annotator
        self.question: Any = None
        self.records: list[dict[str, Any]] = []
        self.causes: dict[str, str] = {}  # a replayed run's failure cause (reports/causes.py)
        self.agreements: dict[str, dict[str, Any]] = {}  # judge model -> measured agreement
        self.blind = False
        self.revealed = False
        self.current: AnswerPane | None = None
        self.runs: Any = None  # RunStore, opened off the event loop on mount
        self.scores: Any = None  # ScoreStore
        self.runner: Any = None

    # -- layout --
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text("opening the workspace…"), id="question")
        yield QuestionPicker(id="picker")
        yield Static(id="settings")
        yield Horizontal(id="panes")
        yield EvidencePanel(id="evidence")
        yield Static(id="arena-status")
        yield Footer()

    @property
    def cfg(self) -> Any:
        return self.app.cfg

    def on_mount(self) -> None:
        cfg = self.cfg
        self.model = getattr(self.app, "model", None) or cfg.runs.default_model
        self.compare: str | None = None  # a second model answering beside the first
        self.level = cfg.ui.ask_level or cfg.runs.level
        self.conditions = ordered(cfg.runs.conditions)
        self.query_one(QuestionPicker).display = False
        self._settings()
        self.set_interval(0.5, self._tick)
        self._load()

    def panes(self) -> list[AnswerPane]:
        """Panes in display order."""
        return list(self.query_one("#panes").query_children(AnswerPane))

    def say(self, text: str, error: bool = False) -> None:
        status = self.query_one("#arena-status", Static)
        status.update(Text(text))
        status.set_class(error, "-error")

    def _settings(self) -> None:
        if self.records:
            text = f"replay of {len(self.records)} stored runs" + " (read-only)" * self.read_only
        else:
            conds = ", ".join(LABELS[c] for c in self.conditions) or "none"
            models = f"model {self.model} (m)" + (
                f" vs {self.compare} (M)" if self.compare else " · compare (M)"
            )
            text = f"{models} · level {self.level} (l) · {conds} (i/t)"
        blind = "on" + (", revealed" if self.revealed else "") if self.blind else "off"
        self.query_one("#settings", Static).update(Text(f"{text} · blind {blind} (b)"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (self.read_only and action in READ_ONLY_BLOCKED)

    # -- panes --
    def on_answer_pane_focused(self, event: AnswerPane.Focused) -> None:
        self.current = event.pane
        self.evidence_for(event.pane)

    def evidence_for(self, pane: AnswerPane | None) -> None:
        """Show the evidence of `pane` (hidden while blind: it would name the condition)."""
        panel = self.query_one(EvidencePanel)
        if pane is None:
            panel.show("Evidence", [], "no pane")
            return
        if self.blind and not self.revealed:
            panel.show(f"Evidence — {pane.label}", [], "hidden while blind (v reveals)")
            return
        rows = evidence_rows(pane.evidence, pane.tool_calls, pane.end if self.records else None)
        rows = trace_rows(pane.checks) + rows
        empty = "preparing evidence…" if pane.status.startswith("prep") else "no evidence"
        items = sum(r.kind == "item" for r in rows)
        calls = sum(r.kind == "tool" for r in rows)
        title = f"Evidence — {pane.label}: {items} items" + (
            f", {calls} tool calls" if calls else ""
        )
        panel.show(title + " (Enter opens)", rows, empty)

    def _tick(self) -> None:
        for p in self.panes():
            if p.running:
                p.refresh_status()

    def action_move(self, step: int) -> None:
        panes = self.panes()
        if panes:
            i = panes.index(self.current) if self.current in panes else -step
            panes[(i + step) % len(panes)].focus()

    def action_prefer(self) -> None:
        from .prefer import open_prefer

        open_prefer(self)  # a blind A/B/Tie between the focused pane and another

    @work(exclusive=True, group="arena-judge", exit_on_error=False)
    async def action_judge_common(self) -> None:
        """`J`: judge the completed panes against the question's common evidence (the same
        for every condition); the scores show inline, labelled "common"."""
        from fintrade_tui.judging.session import judge_runs

        done = [p for p in self.panes() if p.run_id and p.finished and p.status == "completed"]
        panes = {p.run_id: p for p in done}
        if not panes:
            self.say("no completed answer to judge yet", error=True)
            return
        for p in done:
            p.judging = True
            p.show_scores()
        self.say(f"judging {len(panes)} answers against the common evidence…")

        def on_done(row: dict[str, Any]) -> None:
            if (p := panes.get(row["run_id"])) is not None:
                # a display copy labelled with its protocol; the stored row is unchanged
                p.judge, p.judging = row | {"annotator": f"{row['annotator']} · common"}, False
                p.show_scores()

        try:
            await asyncio.to_thread(llm.litellm)
            runs = await asyncio.to_thread(lambda: [self.runs.get(rid) for rid in panes])
            con = self.app.workspace_connection()
            saved = await judge_runs(self.cfg, con, runs, on_done=on_done, protocol="common")
            self.say(f"judged {len(saved)} answers against the common evidence")
        except Exception as exc:
            self.say(f"judge (common): {llm.error_text(exc)}", error=True)
        finally:
            for p in done:
                p.judging = False
                p.show_scores()

    # -- running --
    def _can_run(self) -> bool:
        if self.question is None:
            self.say("pick a question first (o)", error=True)
            return False
        if not self.question.as_of or not self.question.tickers:
            self.say(f"question {self.question.id} is not resolved (no tickers or date)", True)
            return False
        if self.runner is None:
            self.say("still opening the workspace…")
            return False
        return True

    def action_run_all(self) -> None:
        if self._can_run():
            for pane in self.panes():
                if not pane.running:
                    self._start(pane)

    def action_rerun(self) -> None:
        if self.current is not None and self._can_run():
            self._start(self.current)

    def retry_key(self) -> str:
        """The retry key as the analyst has it (remapped in `ui.keymap` or the default)."""
        keys = self.cfg.ui.keymap.get(RETRY) or next(
            b.key for b in self.BINDINGS if isinstance(b, Binding) and b.id == RETRY
        )
        return keys.split(",")[0].strip()

    def action_retry(self) -> None:
        """Rerun the focused pane if its model failed, else every failed pane; each reruns
        its own condition only, the panes still streaming or done are left alone."""
        failed = [p for p in self.panes() if p.fault is not None and not p.running]
        if not failed:
            self.say("no failed pane to retry (e re-runs the focused pane)", error=True)
            return
        if self._can_run():
            targets = [self.current] if self.current in failed else failed
            for pane in targets:
                self._start(pane)
            self.say(f"retrying {', '.join(p.label for p in targets)}")

    def action_cancel(self) -> None:
        if self.current is not None and self.current.running:
            self.current.worker.cancel()

    def action_cancel_all(self) -> None:
        for p in self.panes():
            if p.running:
                p.worker.cancel()

    def _start(self, pane: AnswerPane) -> None:
        from fintrade_tui.runs.runner import RunSpec

        spec = RunSpec(self.question, pane.condition, pane.model or self.model, self.level)
        pane.worker = self._run_pane(pane, spec, pane.worker)

    @work(group="arena-runs", exit_on_error=False)
    async def _run_pane(self, pane: AnswerPane, spec: Any, previous: Any) -> None:
        if previous is not None and not previous.is_finished:
            previous.cancel()
            with suppress(Exception):
                await previous.wait()
        await pane.reset()
        pane.preparing()
        self._refresh_evidence(pane)
        stream = None
        end = None
        QUIET_GC.enter()
        pause_background()  # background indexing gives the cores to this run
        try:
            await asyncio.to_thread(llm.litellm)  # a no-op once warm
            if spec.condition == "rag":
                with suppress(Exception):  # a bad entry fails later, in the pane, with its error
                    await asyncio.to_thread(lambda: self.runner.model(spec.model).warm())
                await self._ensure_index(pane, spec.question)
                pane.preparing()
            stream = Markdown.get_stream(pane.markdown)  # batches what the screen can't draw
            pane.streaming = True
            async with aclosing(self.runner.stream(spec)) as events:
                async for ev in events:
                    if ev.kind == "token":
                        pane.token()
                        await stream.write(ev.text)
                    elif ev.kind == "started":
                        pane.started(ev.run_id, ev.data.get("evidence"))
                        self._refresh_evidence(pane)
                    elif ev.kind == "tool":
                        self._refresh_evidence(pane)
                    elif ev.kind == "ended":
                        end = ev.data
                        pane.run_id = ev.run_id
        except asyncio.CancelledError:
            pane.run_id = pane.run_id or self._last_run_id(spec)
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
            self._settle(pane)
            self._refresh_evidence(pane)
        if end is not None:
            pane.finish(end)
            self.check_pane(pane)

    def _settle(self, pane: AnswerPane) -> None:
        """Drop the lines held below finished answers once no pane streams any more: it
        repaints a whole pane, a stall the other panes' frames would share."""
        pane.streaming = False
        if not any(p.streaming for p in self.panes()):
            for p in self.panes():
                if p is pane or p.reserved:
                    p.settle()

    def _last_run_id(self, spec: Any) -> str | None:
        """A run cancelled before its evidence was ready: its record, found by what it was."""
        try:
            found = self.runs.list(
                question=spec.question.id, condition=spec.condition, model=spec.model, limit=1
            )
        except Exception:
            return None
        return found[0]["id"] if found else None

    async def _ensure_index(self, pane: AnswerPane, question: Any) -> None:
        """RAG needs the question's tickers indexed: build first what it uses, with progress
        (the rest of its companies follows in the background, shown in the title bar)."""
        from fintrade_tui.retrieval.indexing import ensure_index

        app = self.app

        class Progress:
            def start(self, label: str, total: int):
                done = [0]

                def tick(n: int = 1) -> None:
                    done[0] += n
                    if done[0] == total or done[0] % 25 == 0:
                        app.call_from_thread(pane.preparing, f"{label} {done[0]}/{total}")

                return tick

        def say(msg: str) -> None:
            app.call_from_thread(pane.preparing, msg)

        tickers, as_of = list(question.tickers), question.as_of
        await asyncio.to_thread(ensure_index, self.cfg, tickers, say, Progress(), as_of, True)
        if hasattr(self.app, "follow_indexing"):
            self.app.follow_indexing()

    def _refresh_evidence(self, pane: AnswerPane) -> None:
        if pane is self.current:
            self.evidence_for(pane)
