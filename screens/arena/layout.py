"""The Arena's panes and settings: which models, conditions and TELeR level run, and the panes
they imply - each condition, for each model when a second one is compared - kept, added or
removed as the settings change, and ordered (canonically, or seeded-shuffled while blind).
Plain functions over the screen's state; the screen's setting keys call them."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.containers import Horizontal

from fintrade_tui.ui.arena_model import (
    LEVELS,
    blind_order,
    cycle,
    look_ahead_note,
    pane_label,
    toggle,
)
from fintrade_tui.ui.panes import AnswerPane

if TYPE_CHECKING:
    from .screen import ArenaScreen
    from .state import ArenaState


def live_keys(state: ArenaState) -> list[tuple[str, str, str]]:
    """(condition, pane key, model) of the live panes: each condition, for each model (the
    model is named only when two are compared)."""
    if not state.compare:
        return [(c, c, "") for c in state.conditions]
    models = [state.model, state.compare]
    return [(c, f"{c}-{slug(m)}", m) for m in models for c in state.conditions]


def slug(model: str) -> str:
    """A registry name as it may appear in a widget id."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", model)


def new_pane(screen: ArenaScreen, condition: str, key: str, model: str = "") -> AnswerPane:
    state = screen.state
    pane = AnswerPane(
        condition,
        key,
        model=model,
        hide_timings=state.hide_timings,
        threshold=screen.fintrade.cfg.judging.disagreement,
    )
    pane.retry_key = None if state.records else screen.retry_key()  # a replay retries nothing
    pane.agreements = state.agreements  # each judge's measured agreement with people
    return pane


async def build_panes(screen: ArenaScreen) -> None:
    """The panes of the question (or of the replayed runs), the first focused."""
    state = screen.state
    box = screen.query_one("#panes", Horizontal)
    for p in screen.panes():
        if p.running:
            p.worker.cancel()
    await box.remove_children()
    keys = live_keys(state)
    if state.records:
        models = {r["model"] for r in state.records}
        keys = [(r["condition"], r["id"], r["model"] * (len(models) > 1)) for r in state.records]
    new = [new_pane(screen, cond, key, model) for cond, key, model in keys]
    await box.mount_all(new)
    arrange(screen)
    if new:
        screen.panes()[0].focus()
    else:
        screen.evidence_for(None)


async def sync_panes(screen: ArenaScreen) -> None:
    """Match the panes to the conditions and models: a pane keeps its answer while its
    condition and model are still wanted (turning a comparison on or off keeps the first
    model's answers); the others are cancelled and removed, the missing ones added."""
    state = screen.state
    box = screen.query_one("#panes", Horizontal)
    want = {(c, m or state.model): (c, key, m) for c, key, m in live_keys(state)}
    kept: dict[tuple[str, str], AnswerPane] = {}
    for pane in screen.panes():
        ident = (pane.condition, pane.model or state.model)
        if ident in want and ident not in kept:
            kept[ident] = pane
            _, pane.key, pane.model = want[ident]
            continue
        if pane.running:
            pane.worker.cancel()
        if pane is state.current:
            state.current = None
        await pane.remove()
    add = [w for ident, w in want.items() if ident not in kept]
    if add and state.question is not None:
        await box.mount_all(new_pane(screen, *w) for w in add)
    arrange(screen)


def arrange(screen: ArenaScreen) -> None:
    """Order panes (canonical, or seeded-shuffled while blind) and label them."""
    state = screen.state
    box = screen.query_one("#panes", Horizontal)
    panes = {p.key: p for p in screen.panes()}
    if state.records:
        keys = [r["id"] for r in state.records]
    else:
        keys = [key for _, key, _ in live_keys(state) if key in panes]
    if state.blind:
        seed = f"{state.blind_seed}|{state.question.id if state.question else ''}"
        keys = blind_order(keys, seed)
    for i, key in enumerate(keys):
        pane = panes[key]
        if box.children[-1] is not pane:
            box.move_child(pane, after=box.children[-1])
        label = pane_label(pane.condition, state.blind, state.revealed, i, pane.model)
        pane.set_label(label + marks(screen, pane))
    screen.show_settings()
    screen.evidence_for(state.current)


def marks(screen: ArenaScreen, pane: AnswerPane) -> str:
    """A replayed run's failure cause and the pane's "may know" mark; none while blind (a
    cutoff hints at the model, a cause at the condition)."""
    state = screen.state
    if state.question is None or state.hidden:
        return ""
    record = next((r for r in state.records if r["id"] == pane.key), None)
    if record is not None:
        model, model_string = record["model"], record.get("model_string")
    else:
        model, model_string = pane.model or state.model, None
    why = ""
    if record is not None and (cause := state.causes.get(pane.key)):
        from fintrade_tui.reports.causes import CAUSE_LABELS

        why = f" · {CAUSE_LABELS[cause]}"
    cfg = screen.fintrade.cfg
    return why + look_ahead_note(state.question.as_of, cfg.models, model, model_string)


# -- settings: what runs --
async def next_model(screen: ArenaScreen) -> None:
    """`m`: the next model of the registry answers every pane."""
    state, app = screen.state, screen.fintrade
    state.model = cycle(list(app.cfg.models), state.model)
    app.model = state.model
    if state.compare == state.model:
        state.compare = None
    await sync_panes(screen)  # compared panes are keyed by model


async def next_compared(screen: ArenaScreen) -> None:
    """`M`: cycle the second model: none, then each other model in the registry."""
    state = screen.state
    options = [None, *[m for m in screen.fintrade.cfg.models if m != state.model]]
    if len(options) == 1:
        screen.say("one model in the registry: add another under models: to compare", True)
        return
    state.compare = cycle(options, state.compare)
    await sync_panes(screen)


def next_level(screen: ArenaScreen) -> None:
    """`l`: the next TELeR level."""
    screen.state.level = cycle(LEVELS, screen.state.level)
    screen.show_settings()


async def toggle_condition(screen: ArenaScreen, condition: str) -> None:
    """`i`, `t`, `c`, `f`: a condition's pane on or off."""
    screen.state.conditions = toggle(screen.state.conditions, condition)
    await sync_panes(screen)
