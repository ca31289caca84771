"""The Arena's one state: what the question is, what runs and how, what is stored and shown.

`ArenaScreen` creates it once (from its arguments and the config) and hands it to the parts
(opening, layout, running, scoring, checks, refresh), which read and change it; nothing else of
the Arena is shared between them. Typed, so a misspelt field fails the type check, not the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fintrade_tui.runs.runner import Runner
    from fintrade_tui.ui.panes import AnswerPane
    from fintrade_tui.workspace.questions import Question
    from fintrade_tui.workspace.run_records import RunStore
    from fintrade_tui.workspace.scores import ScoreStore


@dataclass
class ArenaState:
    """One Arena's question, settings, stores and view state."""

    # what was asked for: a question, or stored runs to replay (read-only: nothing runs)
    question_id: str | None = None
    run_ids: list[str] = field(default_factory=list)
    read_only: bool = False
    hide_timings: bool = False  # volatile numbers left out of status lines (snapshots)
    blind_seed: str = "arena"  # seeds the blind order, with the question id
    annotator: str = "analyst"
    # what runs: models, conditions and TELeR level (the settings line)
    model: str = ""
    compare: str | None = None  # a second model answering beside the first
    level: str = ""
    conditions: list[str] = field(default_factory=list)
    # what was opened, off the event loop
    question: Question | None = None
    records: list[dict[str, Any]] = field(default_factory=list)  # replayed runs
    causes: dict[str, str] = field(default_factory=dict)  # replayed run -> failure cause
    agreements: dict[str, dict[str, Any]] = field(default_factory=dict)  # judge -> measured
    runs: RunStore | None = None
    scores: ScoreStore | None = None
    runner: Runner | None = None
    # the view: blind labels and the focused pane
    blind: bool = False
    revealed: bool = False
    current: AnswerPane | None = None

    @property
    def hidden(self) -> bool:
        """Blind and not yet revealed: conditions, evidence and marks are not shown."""
        return self.blind and not self.revealed
