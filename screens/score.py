"""Scoring in the Arena. `ScoreScreen` is a keyboard-first modal for one pane: 1-5 sets the
focused dimension (accuracy, completeness, relevance, clarity), Tab moves on, A/B/T records a
preference against another pane (A = this one, B = the other, T = tie; o picks the other pane),
n writes a note, Enter saves a human `Score` (appended: an edit is a new version) and returns
the stored row. The Arena opens it pane after pane (screens/arena/scoring.py)."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from fintrade_tui.workspace.scores import DIMENSIONS, Score, ScoreStore

PREFERENCE_TEXT = {"this": "this one is better", "other": "the other is better", "tie": "tie"}


class DimRow(Static, can_focus=True):
    """One rubric dimension: focus it and press 1-5."""

    DEFAULT_CSS = """
    DimRow { height: 1; padding: 0 1; }
    DimRow:focus { background: $accent 40%; text-style: bold; }
    """
    value: reactive[int | None] = reactive(None)

    def __init__(self, dimension: str, value: int | None = None) -> None:
        super().__init__(id=f"dim-{dimension}")
        self.dimension = dimension
        self.set_reactive(DimRow.value, value)

    def render(self) -> Text:
        v = self.value
        bar = "■" * (v or 0) + "□" * (5 - (v or 0))
        return Text(f"{self.dimension:<13} {bar}  {v if v is not None else '—'}")


class ScoreScreen(ModalScreen[dict[str, Any] | None]):
    """Score one run; dismisses with the saved score row, or None when cancelled."""

    DEFAULT_CSS = """
    ScoreScreen { align: center middle; }
    ScoreScreen > Vertical {
        width: 72; height: auto; border: thick $accent; background: $surface; padding: 0 1;
    }
    ScoreScreen .score-title { text-style: bold; padding: 0 1; }
    ScoreScreen .score-pref { padding: 0 1; height: auto; }
    ScoreScreen .score-help { color: $text-muted; padding: 0 1; height: auto; }
    ScoreScreen .score-error { color: $error; padding: 0 1; height: auto; }
    ScoreScreen Input { margin: 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        *[Binding(str(n), f"set({n})", show=False, id=f"score.{n}") for n in range(1, 6)],
        Binding("down", "app.focus_next", show=False),
        Binding("up", "app.focus_previous", show=False),
        Binding("a", "prefer('this')", "A: this", id="score.prefer_this"),
        Binding("b", "prefer('other')", "B: other", id="score.prefer_other"),
        Binding("t", "prefer('tie')", "Tie", id="score.tie"),
        Binding("o", "other", "Compare with", id="score.other"),
        Binding("n", "note", "Note", id="score.note"),
        Binding("enter", "save", "Save", id="score.save"),
        Binding("escape", "cancel", "Cancel", id="score.cancel"),
    ]

    def __init__(
        self,
        store: ScoreStore,
        run_id: str,
        label: str,
        others: list[tuple[str, str]] | None = None,
        blind: bool = False,
        annotator: str = "analyst",
        previous: dict[str, Any] | None = None,
    ) -> None:
        """`others`: (label, run id) of the panes a preference can compare with, the first
        being the default; `previous`: a saved score to start from (editing appends)."""
        super().__init__()
        self.store = store
        self.run_id = run_id
        self.label = label
        self.others = others or []
        self.blind = blind
        self.annotator = annotator
        prev = previous or {}
        self.values: dict[str, int | None] = {d: prev.get(d) for d in DIMENSIONS}
        self.preference: str | None = prev.get("preference")
        self.other = 0
        if prev.get("other_run"):
            ids = [rid for _, rid in self.others]
            self.other = ids.index(prev["other_run"]) if prev["other_run"] in ids else 0
        self.note = prev.get("note") or ""

    def compose(self) -> ComposeResult:
        with Vertical():
            blind = " (blind)" if self.blind else ""
            yield Static(Text(f"Score {self.label}{blind}"), classes="score-title")
            for d in DIMENSIONS:
                yield DimRow(d, self.values[d])
            yield Static(classes="score-pref")
            yield Input(self.note, placeholder="note (n, or Tab here); Enter saves")
            yield Static(
                "1-5 score · Tab next · a this better · b the other · t tie · o other pane"
                " · n note · Enter save · Esc cancel",
                classes="score-help",
            )
            yield Static(classes="score-error")

    def on_mount(self) -> None:
        self._show_preference()
        self.query_one(DimRow).focus()

    def _show_preference(self) -> None:
        if not self.others:
            text = "preference: no other pane to compare with"
        else:
            other = self.others[self.other][0]
            chosen = PREFERENCE_TEXT.get(self.preference or "", "—")
            text = f"vs {other} (o changes): {chosen}"
        self.query_one(".score-pref", Static).update(Text(text))

    def _error(self, text: str) -> None:
        self.query_one(".score-error", Static).update(Text(text))

    def action_set(self, n: int) -> None:
        row = self.focused
        if isinstance(row, DimRow):
            row.value = n
            self.values[row.dimension] = n

    def action_prefer(self, which: str) -> None:
        if not self.others:
            self._error("no other pane has a run to compare with")
            return
        self.preference = None if self.preference == which else which
        self._show_preference()

    def action_other(self) -> None:
        if self.others:
            self.other = (self.other + 1) % len(self.others)
            self._show_preference()

    def action_note(self) -> None:
        self.query_one(Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_save(self) -> None:
        if all(v is None for v in self.values.values()) and not self.preference:
            self._error("give at least one score (1-5) or a preference")
            return
        other = self.others[self.other][1] if self.others and self.preference else None
        note = self.query_one(Input).value.strip() or None
        score = Score(
            self.run_id,
            "human",
            self.annotator,
            accuracy=self.values["accuracy"],
            completeness=self.values["completeness"],
            relevance=self.values["relevance"],
            clarity=self.values["clarity"],
            other_run=other,
            preference=self.preference,
            note=note,
            blind=self.blind,
        )
        self._error("saving…")
        self._save(score)

    @work(exclusive=True, exit_on_error=False)
    async def _save(self, score: Score) -> None:
        try:
            row = await asyncio.to_thread(self.store.save, score)
        except Exception as exc:  # shown in place; the modal stays open
            self._error(str(exc).splitlines()[0][:200])
            return
        self.dismiss(row)
