"""The Arena: one question answered under several evidence conditions side by side, streamed.

The screen holds the layout, the keys and the one `ArenaState`; what each key does lives in the
parts beside it (opening, layout, running, scoring, checks, refresh), plain functions over that
state. A pane's failure stays in that pane, with its reason and the retry key (`R`,
`ui/faults.py`). `read_only` with `run_ids` replays stored runs: answers, evidence and scores,
no running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from fintrade_tui.ui.app_access import fintrade_app
from fintrade_tui.ui.arena_model import evidence_rows, ordered, progress_line
from fintrade_tui.ui.evidence import EvidencePanel
from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.panes import AnswerPane
from fintrade_tui.ui.workspace_refresh import WorkspaceChanged
from fintrade_tui.workspace.evidence import LABELS

from . import layout, opening, running, scoring
from .checks import trace_rows
from .picker import QuestionPicker
from .refresh import reread_scores
from .state import ArenaState

if TYPE_CHECKING:
    from fintrade_tui.ui.app import FinTradeApp

READ_ONLY_BLOCKED = {"run_all", "rerun", "cancel", "cancel_all", "model", "compare", "level"}
READ_ONLY_BLOCKED |= {"toggle", "pick", "retry"}
RETRY = "arena.retry"  # the binding id of the retry key (remappable in `ui.keymap`)


class ArenaScreen(FramePaced, Screen[None]):
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
        self.state = ArenaState(
            question_id=question_id,
            run_ids=list(run_ids or []),
            read_only=read_only,
            hide_timings=hide_timings,
            blind_seed=blind_seed,
            annotator=annotator,
        )

    @property
    def fintrade(self) -> FinTradeApp:
        """The app, as the explorer's own class (its config, workspace and indexer)."""
        return fintrade_app(self)

    @property
    def question_id(self) -> str | None:
        """The question shown (or being opened); the registry and tests ask it."""
        return self.state.question_id

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

    def on_mount(self) -> None:
        app, state = self.fintrade, self.state
        cfg = app.cfg
        state.model = getattr(app, "model", None) or cfg.runs.default_model
        state.level = cfg.ui.ask_level or cfg.runs.level
        state.conditions = ordered(cfg.runs.conditions)
        self.query_one(QuestionPicker).display = False
        self.show_settings()
        self.set_interval(0.5, self.tick)
        self.run_worker(opening.load(self), group="arena-load", exclusive=True, exit_on_error=False)

    def panes(self) -> list[AnswerPane]:
        """Panes in display order."""
        return list(self.query_one("#panes").query_children(AnswerPane))

    def say(self, text: str, error: bool = False) -> None:
        status = self.query_one("#arena-status", Static)
        status.update(Text(text))
        status.set_class(error, "-error")

    def show_progress(self) -> None:
        """The status line follows the panes: running n of m, done, judged."""
        if line := progress_line([(p.label, p.status, p.judge is not None) for p in self.panes()]):
            self.say(line)

    def show_settings(self) -> None:
        state = self.state
        if state.records:
            n = len(state.records)
            text = f"replay of {n} stored runs" + " (read-only)" * state.read_only
        else:
            conds = ", ".join(LABELS[c] for c in state.conditions) or "none"
            models = f"model {state.model} (m)" + (
                f" vs {state.compare} (M)" if state.compare else " · compare (M)"
            )
            text = f"{models} · level {state.level} (l) · {conds} (i/t)"
        blind = "on" + (", revealed" if state.revealed else "") if state.blind else "off"
        self.query_one("#settings", Static).update(Text(f"{text} · blind {blind} (b)"))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (self.state.read_only and action in READ_ONLY_BLOCKED)

    def retry_key(self) -> str:
        """The retry key as the analyst has it (remapped in `ui.keymap` or the default)."""
        keys = self.fintrade.cfg.ui.keymap.get(RETRY) or next(
            b.key for b in self.BINDINGS if isinstance(b, Binding) and b.id == RETRY
        )
        return keys.split(",")[0].strip()

    # -- what the panes and the app say --
    def on_answer_pane_focused(self, event: AnswerPane.Focused) -> None:
        self.state.current = event.pane
        self.evidence_for(event.pane)

    def on_answer_pane_status_changed(self, event: AnswerPane.StatusChanged) -> None:
        self.show_progress()

    def on_question_picker_picked(self, event: QuestionPicker.Picked) -> None:
        self.state.question_id = event.question_id
        self.say(f"opening {event.question_id}…")
        work = opening.open_question(self, event.question_id)
        self.run_worker(work, group="arena-load", exclusive=True, exit_on_error=False)

    def on_workspace_changed(self, event: WorkspaceChanged) -> None:
        if event.change.scores:
            reread_scores(self)

    def evidence_for(self, pane: AnswerPane | None) -> None:
        """Show the evidence of `pane` (hidden while blind: it would name the condition)."""
        panel = self.query_one(EvidencePanel)
        if pane is None:
            panel.show("Evidence", [], "no pane")
            return
        if self.state.hidden:
            panel.show(f"Evidence — {pane.label}", [], "hidden while blind (v reveals)")
            return
        end = pane.end if self.state.records else None
        rows = trace_rows(pane.checks) + evidence_rows(pane.evidence, pane.tool_calls, end)
        empty = "preparing evidence…" if pane.status.startswith("prep") else "no evidence"
        items = sum(r.kind == "item" for r in rows)
        calls = sum(r.kind == "tool" for r in rows)
        title = f"Evidence — {pane.label}: {items} items" + (
            f", {calls} tool calls" if calls else ""
        )
        panel.show(title + " (Enter opens)", rows, empty)

    def refresh_evidence(self, pane: AnswerPane) -> None:
        if pane is self.state.current:
            self.evidence_for(pane)

    def tick(self) -> None:
        for p in self.panes():
            if p.running:
                p.refresh_status()

    # -- keys --
    def action_move(self, step: int) -> None:
        panes = self.panes()
        if panes:
            current = self.state.current
            i = panes.index(current) if current in panes and current is not None else -step
            panes[(i + step) % len(panes)].focus()

    def action_run_all(self) -> None:
        running.run_all(self)

    def action_rerun(self) -> None:
        running.rerun(self)

    def action_retry(self) -> None:
        running.retry(self)

    def action_cancel(self) -> None:
        if self.state.current is not None:
            running.cancel([self.state.current])

    def action_cancel_all(self) -> None:
        running.cancel(self.panes())

    async def action_model(self) -> None:
        await layout.next_model(self)

    async def action_compare(self) -> None:
        await layout.next_compared(self)

    def action_level(self) -> None:
        layout.next_level(self)

    async def action_toggle(self, condition: str) -> None:
        await layout.toggle_condition(self, condition)

    def action_blind(self) -> None:
        scoring.set_blind(self)

    def action_reveal(self) -> None:
        scoring.reveal(self)

    def action_score(self) -> None:
        scoring.score_current(self)

    def action_judge(self) -> None:
        scoring.judge(self)

    def action_judge_common(self) -> None:
        scoring.judge(self, protocol="common")

    def action_prefer(self) -> None:
        from ..prefer import open_prefer

        open_prefer(self)  # a blind A/B/Tie between the focused pane and another

    def action_pick(self) -> None:
        if self.query_one(QuestionPicker).questions:
            opening.open_picker(self, [])
        else:
            self.say("loading the question list…")
            work = opening.load_questions(self)
            self.run_worker(work, group="arena-load", exclusive=True, exit_on_error=False)

    def action_variant(self) -> None:
        """`V`: this question asked of another ticker and/or quarter (the own-question form)."""
        from ..own_question import open_variant

        open_variant(self.app, self.state.question)
