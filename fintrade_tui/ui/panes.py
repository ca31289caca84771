"""Arena widgets: an answer pane - a streamed Markdown answer that follows its end, a status
line, the judge's and the analyst's scores inline, the fatal-flaw screen's flags under the
answer. It only shows state: the Arena screen owns the workers that fill it (the evidence panel
is in ui/evidence.py), except the flags, which the pane reads itself (a thread worker) when its
run ends, is replayed or has been judged."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import LoadingIndicator, Markdown, Static

from fintrade_tui import clock
from fintrade_tui.ui import faults
from fintrade_tui.ui.arena_model import Clock, record_status, status_line
from fintrade_tui.ui.pane_text import (
    flags_text,
    judge_agreement_line,
    score_text,
    screened_flags,
)
from fintrade_tui.ui.streaming import StreamingMarkdown, update_steady
from fintrade_tui.workspace.run_records import FINISHED

# Panes answering at the same pace would move up in the same frame and repaint all of
# themselves at once; a pane that still has room waits this long after another moved.
STEP_SPACING = 0.05


class _Body(VerticalScroll, can_focus=False):
    """The scrolling part of a pane; the pane itself takes focus."""


class AnswerPane(Vertical, can_focus=True):
    """One condition's answer: title, progress, streamed Markdown, scores, status line."""

    last_step: ClassVar[float] = 0.0  # when any pane last moved up (see `_follow`)
    step_clock: ClassVar[clock.Clock] = clock.SYSTEM  # what `last_step` is read on (tests: fake)

    DEFAULT_CSS = """
    AnswerPane { width: 1fr; height: 1fr; border: round $panel-lighten-2; }
    AnswerPane:focus { border: round $accent; }
    AnswerPane > .pane-title { height: 1; padding: 0 1; text-style: bold; }
    AnswerPane > LoadingIndicator { height: 1; }
    /* the scrollbar's column is kept even when the answer fits: no re-wrap when it outgrows it */
    AnswerPane > _Body { height: 1fr; scrollbar-gutter: stable; scrollbar-size-vertical: 1; }
    AnswerPane Markdown { margin: 0; padding: 0 1; }
    AnswerPane .pane-scores { height: auto; padding: 0 1; }
    AnswerPane .pane-flags { height: auto; padding: 0 1; color: $warning; }
    AnswerPane > .pane-fault { height: auto; max-height: 6; padding: 0 1; color: $error; }
    AnswerPane > .pane-status { height: auto; max-height: 3; padding: 0 1; color: $text-muted; }
    AnswerPane.-failed > .pane-status { color: $error; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll('up')", show=False),
        Binding("down", "scroll('down')", show=False),
        Binding("pageup", "scroll('page_up')", show=False),
        Binding("pagedown", "scroll('page_down')", show=False),
        Binding("home", "scroll('home')", show=False),
        Binding("end", "scroll('end')", show=False),
    ]

    class StatusChanged(Message):
        """The pane's run moved on (started, streaming, ended): the screen's line follows."""

        def __init__(self, pane: AnswerPane) -> None:
            super().__init__()
            self.pane = pane

    class Focused(Message):
        """The pane took focus: the evidence panel follows it."""

        def __init__(self, pane: AnswerPane) -> None:
            super().__init__()
            self.pane = pane

    def __init__(
        self,
        condition: str,
        key: str,
        *,
        model: str = "",
        hide_timings: bool = False,
        threshold: int = 2,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.condition = condition
        self.key = key  # the condition, or a run id when replaying
        self.model = model
        self.hide_timings = hide_timings
        self.threshold = threshold  # judge vs human gap that is highlighted
        self.label = ""
        self.run_id: str | None = None
        self.status = "idle"
        self.error: str | None = None
        self.clock: Clock | None = None
        self.end: dict[str, Any] | None = None
        self.evidence: Any = None  # an Evidence object (live) or a stored evidence dict
        self.tool_calls: list[dict[str, Any]] | None = None  # None: those of `evidence`
        self.worker: Any = None
        self.judge: dict[str, Any] | None = None
        self.agreements: dict[str, dict[str, Any]] = {}  # judge model -> its measured agreement
        self.human: dict[str, Any] | None = None
        self.judging = False
        self.following = True  # keep the end of a streaming answer in view
        self.reserved = 0  # lines held below a streaming answer (see `_follow`)
        self.auto_y = 0.0  # where `_follow` last scrolled to: any other offset is the user's
        self.waited = False  # it let another pane move first (see `_follow`)
        self.streaming = False  # an answer is coming in (the Arena settles panes after all end)
        self.flags: list[dict[str, Any]] | None = None  # the run's latest fatal-flaw screening
        self.fault: faults.Fault | None = None  # why the run failed (shown above the status)
        self.retry_key: str | None = None  # the key that retries it (the screen sets it)
        self.checks: Any = None  # the answer checks (scoring/answer_checks.py), or their error
        self.coverage: dict[str, Any] | None = None  # golden coverage read from the answer

    def compose(self) -> ComposeResult:
        yield Static(classes="pane-title")
        yield LoadingIndicator()
        with _Body():
            yield StreamingMarkdown()
            yield Static(classes="pane-flags")
            yield Static(classes="pane-scores")
        # outside the scrolling body: a fault stays in view however far the answer scrolled
        yield Static(classes="pane-fault")
        yield Static(self.status, classes="pane-status")

    def on_mount(self) -> None:
        self.query_one(LoadingIndicator).display = False
        self.query_one(".pane-scores", Static).display = False
        self.query_one(".pane-flags", Static).display = False
        self.query_one(".pane-fault", Static).display = False

    @cached_property
    def markdown(self) -> Markdown:
        return self.query_one(Markdown)

    @cached_property
    def body(self) -> VerticalScroll:
        return self.query_one(_Body)

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.is_finished

    @property
    def finished(self) -> bool:
        return self.status in FINISHED and not self.running

    def on_focus(self) -> None:
        self.post_message(self.Focused(self))

    def action_scroll(self, how: str) -> None:
        if how == "end" and self.reserved:  # streaming: the end of the text, not the held lines
            self.following, self.auto_y = True, self.body.scroll_y
            self._follow()
            return
        getattr(self.body, f"scroll_{how}")(animate=False, immediate=True)
        self.following = how == "end"
        self.auto_y = self.body.scroll_y

    def set_label(self, label: str) -> None:
        self.label = label
        self.query_one(".pane-title", Static).update(Text(label))

    # -- the life of a run --
    async def reset(self) -> None:
        """Clear the answer and the scores for a new run."""
        self.run_id, self.end, self.evidence, self.tool_calls = None, None, None, None
        self.judge, self.human, self.error, self.checks = None, None, None, None
        self.coverage = None
        self.show_flags(None)
        self.show_fault(None)
        self.clock = Clock()
        self.remove_class("-failed")
        await self.markdown.update("")
        self.show_scores()
        self.following, self.reserved, self.auto_y, self.waited = True, 0, 0.0, False
        self.markdown.styles.min_height = None
        self.body.scroll_home(animate=False, immediate=True)

    def preparing(self, text: str = "preparing evidence…") -> None:
        self.query_one(LoadingIndicator).display = True
        self.set_status(text)

    def started(self, run_id: str, evidence: Any) -> None:
        self.run_id = run_id
        self.evidence = evidence
        self.clock = Clock()  # from when the model is asked, as the run records its timings
        self.query_one(LoadingIndicator).display = False
        self.set_status("streaming")

    def token(self) -> None:
        if self.clock is not None:
            self.clock.token()
        self._follow()

    def _follow(self) -> None:
        """Keep the end of a streaming answer in view, moving the text up half a pane at a time.

        Pinning the end to the bottom row would scroll the pane by a line every few tokens, and
        each scroll repaints the whole pane (three panes at 100 tokens/s kept frames at 30-40 ms).
        Instead blank lines are held below the text (the Markdown's min-height), so a token
        only repaints its own paragraph; when the text reaches the bottom, the pane moves
        up by half its height. Scrolling away stops following until the end is reached again."""
        body = self.body
        if body.scroll_y != self.auto_y:  # the analyst scrolled
            self.following = body.scroll_y >= body.max_scroll_y
        if not self.following:
            return
        height = body.scrollable_content_region.height
        blocks = self.markdown.children
        if height <= 2 or not blocks:
            return
        bottom = blocks[-1].virtual_region.bottom  # the text's last line + 1
        if self.reserved < bottom + height:  # held well ahead, so a move is never clamped
            self.reserved = bottom + 2 * height
            self.markdown.styles.min_height = self.reserved
        # a quarter pane early: the geometry seen here is a frame old, the text may have grown
        room = body.scroll_y + height - bottom
        if room < max(2, height // 4):
            now = AnswerPane.step_clock.monotonic()
            if room > 1 and now - AnswerPane.last_step < STEP_SPACING:
                self.waited = True  # another pane just moved: this one has room to wait
            else:
                # a pane that waited moves further, so panes in step drift apart
                keep = height // 3 if self.waited else height // 2
                AnswerPane.last_step, self.waited = now, False
                body.scroll_to(y=bottom - keep, animate=False, immediate=True)
                # a layout pass too: Textual's scroll-only pass repaints the whole screen when
                # it follows a layout pass; a layout pass repaints just what moved (this pane)
                body.refresh(layout=True)
        self.auto_y = body.scroll_y

    def settle(self) -> None:
        """The stream has ended: drop the held lines; a followed answer ends at the bottom."""
        self.markdown.styles.min_height = None
        self.reserved = 0
        if self.following:
            self.call_after_refresh(self.body.scroll_end, animate=False, immediate=True)

    def finish(self, end: dict[str, Any]) -> None:
        self.end = end
        if self.clock is not None:
            self.clock.stop()
        self._stopped(end.get("status") or "completed", end.get("error"))
        self.load_flags()

    def cancelled(self) -> None:
        if self.clock is not None:
            self.clock.stop()
        self._stopped("cancelled", None)

    def failed(self, error: str) -> None:
        if self.clock is not None:
            self.clock.stop()
        self._stopped("error", error)

    def _stopped(self, status: str, error: str | None) -> None:
        self.query_one(LoadingIndicator).display = False
        self.error = error
        self.set_class(status in ("error", "timeout"), "-failed")
        answer = self.end.get("answer") if self.end else self.markdown.source
        self.show_fault(faults.fault(status, error, answer))
        self.set_status(status)

    async def replay(self, run: dict[str, Any]) -> None:
        """Show a stored run: its answer, evidence, tool calls and recorded timings."""
        self.run_id = run["id"]
        self.end = run
        self.evidence = run.get("evidence") or {"items": [], "notes": []}
        self.tool_calls = run.get("tool_calls") or []
        self.error = run.get("error")
        await self.markdown.update(run.get("answer") or "")
        self.set_class(run.get("status") in ("error", "timeout"), "-failed")
        self.show_fault(faults.fault(run.get("status") or "", self.error, run.get("answer")))
        self.set_status(run.get("status") or "?")
        self.load_flags()

    def set_status(self, status: str) -> None:
        changed = status != self.status
        self.status = status
        self.refresh_status()
        if changed:
            self.post_message(self.StatusChanged(self))

    def refresh_status(self) -> None:
        """Redraw the status line (timings tick while running); a fault's reason is in its
        block above, the line names only its kind."""
        error = self.fault.label if self.fault else self.error
        if self.end is not None:
            run = self.end | {"status": self.status, "error": error}
            line = record_status(run, self.hide_timings)
        elif self.clock is not None:
            c = self.clock
            line = status_line(
                self.status, c.ttft(), c.rate(), c.elapsed(), error, self.hide_timings
            )
        else:
            line = status_line(self.status, error=error)
        update_steady(self.query_one(".pane-status", Static), Text(line))  # ticks while running

    def show_fault(self, fault: faults.Fault | None) -> None:
        """The fault block: the reason, a cut answer marked, the retry key (none in a replay)."""
        self.fault = fault
        view = self.query_one(".pane-fault", Static)
        view.display = fault is not None
        if fault is not None:
            view.update(Text("\n".join(faults.fault_lines(fault, self.retry_key))))

    # -- scores --
    def show_scores(self) -> None:
        """The answer checks and the golden coverage read from its text, the analyst's score,
        then the judge's (scores, justifications, the numeric audit), dimensions where they
        differ by the threshold or more highlighted; the judge's listed metrics sit beside the
        coverage."""
        view = self.query_one(".pane-scores", Static)
        if self.judge and not self.judging:
            self.load_flags()  # a judged answer: its screening may be new
        if not (self.human or self.judge or self.judging or self.checks is not None):
            view.display = False
            return
        view.display = True
        agreement = judge_agreement_line(self.judge, self.agreements)
        view.update(
            score_text(
                self.human,
                self.judge,
                self.judging,
                self.threshold,
                self.checks,
                agreement,
                coverage=self.coverage,
            )
        )

    def show_checks(self, checks: Any, coverage: dict[str, Any] | None = None) -> None:
        """The answer checks (match and traces) and the golden coverage read from the answer
        came back from their thread."""
        self.checks, self.coverage = checks, coverage
        self.show_scores()

    # -- fatal flaws --
    def show_flags(self, flags: list[dict[str, Any]] | None, note: str = "") -> None:
        """One line per flag under the answer (hidden when the screen found nothing)."""
        self.flags = flags
        view = self.query_one(".pane-flags", Static)
        view.display = bool(flags or note)
        view.update(flags_text(flags or [], note))

    def load_flags(self) -> None:
        """Read the run's latest screening in a thread; a completed run never screened gets
        the deterministic checks, saved (an earlier screening, maybe with the LLM's flags,
        is never replaced here)."""
        app = self.app
        run_id = self.run_id
        if not run_id or not hasattr(app, "workspace_connection"):
            return

        def work() -> None:
            try:
                flags = screened_flags(app, run_id)
            except Exception as exc:  # shown in place; the pane stays usable
                note = f"flags: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                app.call_from_thread(self._flags_loaded, run_id, None, note)
                return
            app.call_from_thread(self._flags_loaded, run_id, flags, "")

        self.run_worker(work, thread=True, group=f"flags-{id(self)}", exit_on_error=False)

    def _flags_loaded(self, run_id: str, flags: list[dict[str, Any]] | None, note: str) -> None:
        if run_id == self.run_id:  # not a pane reset for another run since
            self.show_flags(flags, note)
