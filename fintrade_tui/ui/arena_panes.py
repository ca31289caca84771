"""The Arena's panes and settings: which models, conditions and TELeR level run, and the panes
they imply - each condition, for each model when a second one is compared - kept, added or
removed as the settings change, and ordered (canonically, or seeded-shuffled while blind)."""

from __future__ import annotations

import re
from typing import Any

from fintrade_tui.ui.arena_model import (
    LEVELS,
    blind_order,
    cycle,
    look_ahead_note,
    pane_label,
    progress_line,
    toggle,
)
from fintrade_tui.ui.panes import AnswerPane


class ArenaPanes:
    """Mixed into the Arena screen (which provides `panes()`, `query_one` and the settings)."""

    model: str
    compare: str | None
    conditions: list[str]
    level: str
    records: list[dict[str, Any]]
    current: AnswerPane | None

    def show_progress(self) -> None:
        """The status line follows the panes: running n of m, done, judged."""
        if line := progress_line([(p.label, p.status, p.judge is not None) for p in self.panes()]):
            self.say(line)  # type: ignore[attr-defined]

    def on_answer_pane_status_changed(self, event: AnswerPane.StatusChanged) -> None:
        self.show_progress()

    async def _build_panes(self) -> None:
        box = self.query_one("#panes")
        for p in self.panes():
            if p.running:
                p.worker.cancel()
        await box.remove_children()
        keys = self._live_keys()
        if self.records:
            models = {r["model"] for r in self.records}
            keys = [(r["condition"], r["id"], r["model"] * (len(models) > 1)) for r in self.records]
        new = [self._new_pane(cond, key, model) for cond, key, model in keys]
        await box.mount_all(new)
        self._arrange()
        if new:
            self.panes()[0].focus()
        else:
            self.evidence_for(None)

    def _new_pane(self, condition: str, key: str, model: str = "") -> AnswerPane:
        pane = AnswerPane(
            condition,
            key,
            model=model,
            hide_timings=self.hide_timings,
            threshold=self.cfg.judging.disagreement,
        )
        pane.retry_key = None if self.records else self.retry_key()  # a replay retries nothing
        pane.agreements = self.agreements  # each judge's measured agreement with people
        return pane

    def _live_keys(self) -> list[tuple[str, str, str]]:
        """(condition, pane key, model) of the live panes: each condition, for each model (the
        model is named only when two are compared)."""
        if not self.compare:
            return [(c, c, "") for c in self.conditions]
        models = [self.model, self.compare]
        return [(c, f"{c}-{_slug(m)}", m) for m in models for c in self.conditions]

    async def _sync_panes(self) -> None:
        """Match the panes to the conditions and models: a pane keeps its answer while its
        condition and model are still wanted (turning a comparison on or off keeps the first
        model's answers); the others are cancelled and removed, the missing ones added."""
        box = self.query_one("#panes")
        want = {(c, m or self.model): (c, key, m) for c, key, m in self._live_keys()}
        kept: dict[tuple[str, str], AnswerPane] = {}
        for pane in self.panes():
            ident = (pane.condition, pane.model or self.model)
            if ident in want and ident not in kept:
                kept[ident] = pane
                _, pane.key, pane.model = want[ident]
                continue
            if pane.running:
                pane.worker.cancel()
            if pane is self.current:
                self.current = None
            await pane.remove()
        add = [w for ident, w in want.items() if ident not in kept]
        if add and self.question is not None:
            await box.mount_all(self._new_pane(*w) for w in add)
        self._arrange()

    def _arrange(self) -> None:
        """Order panes (canonical, or seeded-shuffled while blind) and label them."""
        box = self.query_one("#panes")
        panes = {p.key: p for p in self.panes()}
        if self.records:
            keys = [r["id"] for r in self.records]
        else:
            keys = [key for _, key, _ in self._live_keys() if key in panes]
        if self.blind:
            seed = f"{self.blind_seed}|{self.question.id if self.question else ''}"
            keys = blind_order(keys, seed)
        for i, key in enumerate(keys):
            pane = panes[key]
            if box.children[-1] is not pane:
                box.move_child(pane, after=box.children[-1])
            label = pane_label(pane.condition, self.blind, self.revealed, i, pane.model)
            pane.set_label(label + self._marks(pane))
        self._settings()
        self.evidence_for(self.current)

    def _marks(self, pane: AnswerPane) -> str:
        """A replayed run's failure cause and the pane's "may know" mark; none while blind (a
        cutoff hints at the model, a cause at the condition)."""
        if self.question is None or (self.blind and not self.revealed):
            return ""
        record = next((r for r in self.records or () if r["id"] == pane.key), None)
        if record is not None:
            model, model_string = record["model"], record.get("model_string")
        else:
            model, model_string = pane.model or self.model, None
        why = ""
        if record is not None and (cause := self.causes.get(pane.key)):
            from fintrade_tui.reports.causes import CAUSE_LABELS

            why = f" · {CAUSE_LABELS[cause]}"
        return why + look_ahead_note(self.question.as_of, self.cfg.models, model, model_string)

    # -- settings: what runs --
    async def action_model(self) -> None:
        self.model = cycle(list(self.cfg.models), self.model)
        self.app.model = self.model
        if self.compare == self.model:
            self.compare = None
        await self._sync_panes()  # compared panes are keyed by model

    async def action_compare(self) -> None:
        """Cycle the second model: none, then each other model in the registry."""
        options = [None, *[m for m in self.cfg.models if m != self.model]]
        if len(options) == 1:
            self.say("one model in the registry: add another under models: to compare", True)
            return
        self.compare = cycle(options, self.compare)
        await self._sync_panes()

    def action_level(self) -> None:
        self.level = cycle(LEVELS, self.level)
        self._settings()

    async def action_toggle(self, condition: str) -> None:
        self.conditions = toggle(self.conditions, condition)
        await self._sync_panes()


def _slug(model: str) -> str:
    """A registry name as it may appear in a widget id."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", model)
