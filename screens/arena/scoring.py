"""Blind mode, scoring and judging in the Arena. Blind hides the conditions behind A/B/C in a
seeded order until every pane is scored (or `v`); `s` opens the score modal (screens/score.py)
pane after pane; `j` runs the LLM judge with the numeric audit on every completed pane, `J`
against the question's common evidence, and the scores show inline. Plain functions over the
screen's state."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fintrade_tui.models import llm

from ..score import ScoreScreen
from .layout import arrange

if TYPE_CHECKING:
    from fintrade_tui.ui.panes import AnswerPane

    from .screen import ArenaScreen


def set_blind(screen: ArenaScreen) -> None:
    state = screen.state
    state.blind, state.revealed = not state.blind, False
    arrange(screen)
    hint = "blind: conditions hidden until every pane is scored (v reveals)"
    screen.say(hint if state.blind else "blind off")


def reveal(screen: ArenaScreen) -> None:
    if screen.state.blind:
        screen.state.revealed = True
        arrange(screen)


def score_current(screen: ArenaScreen) -> None:
    pane = screen.state.current
    if pane is None or not pane.run_id or pane.running:
        screen.say("score a pane once its run has finished", error=True)
        return
    open_score(screen, pane)


def open_score(screen: ArenaScreen, pane: AnswerPane) -> None:
    """The score modal for `pane`, with the other finished panes to prefer against (the next
    pane first)."""
    state = screen.state
    panes = screen.panes()
    i = panes.index(pane)
    around = panes[i + 1 :] + panes[:i]
    others = [(p.label, p.run_id) for p in around if p.run_id and not p.running]
    if state.scores is None or pane.run_id is None:
        return
    modal = ScoreScreen(
        state.scores,
        pane.run_id,
        pane.label,
        others,
        blind=state.hidden,
        annotator=state.annotator,
        previous=pane.human,
    )
    screen.app.push_screen(modal, callback=lambda row: scored(screen, pane, row))


def scored(screen: ArenaScreen, pane: AnswerPane, row: dict[str, Any] | None) -> None:
    """A saved score: shown in its pane; blind labels lift once every pane is scored; the next
    unscored pane's modal opens."""
    if row is None:
        return
    state = screen.state
    pane.human = row
    pane.show_scores()
    panes = screen.panes()
    ready = [p for p in panes if p.run_id and not p.running]
    screen.say(f"saved score v{row['version']} for {pane.label}")
    if state.hidden and all(p.human for p in ready):
        state.revealed = True
        arrange(screen)
        screen.say("every pane is scored: conditions revealed")
    i = panes.index(pane)
    after = [p for p in panes[i + 1 :] + panes[:i] if p in ready and not p.human]
    if after:
        after[0].focus()
        state.current = after[0]
        open_score(screen, after[0])


def judge(screen: ArenaScreen, protocol: str = "per_condition") -> None:
    """`j` (each pane against its own evidence) or `J` (`protocol` "common": against the
    question's common evidence, the same for every condition) on the completed panes."""
    done = [p for p in screen.panes() if p.run_id and p.finished and p.status == "completed"]
    if not done:
        screen.say("no completed answer to judge yet", error=True)
        return
    screen.run_worker(
        judge_panes(screen, done, protocol),
        group="arena-judge",
        exclusive=True,
        exit_on_error=False,
    )


async def judge_panes(screen: ArenaScreen, panes: list[AnswerPane], protocol: str) -> None:
    """Judge `panes` in the workspace; each pane shows its score as it arrives."""
    from fintrade_tui.judging.session import judge_runs

    state, app = screen.state, screen.fintrade
    by_id = {p.run_id: p for p in panes if p.run_id}
    common = protocol == "common"
    count = [0]
    for p in panes:
        p.judging = True
        p.show_scores()
    against = " against the common evidence" if common else f" with {app.cfg.judging.model}"
    screen.say(f"judging {len(panes)} answers{against}…")

    def on_done(row: dict[str, Any]) -> None:
        count[0] += 1
        if (p := by_id.get(row["run_id"])) is not None:
            # a display copy labelled with its protocol; the stored row is unchanged
            label = {"annotator": f"{row['annotator']} · common"} if common else {}
            p.judge, p.judging = row | label, False
            p.show_scores()
        if not common:
            screen.say(f"judged {count[0]}/{len(panes)}")

    runs_store = state.runs
    try:
        if runs_store is None:
            raise RuntimeError("the workspace is still opening")
        await asyncio.to_thread(llm.litellm)
        runs = await asyncio.to_thread(lambda: [runs_store.get(rid) for rid in by_id])
        con = app.workspace_connection()
        saved = await judge_runs(app.cfg, con, runs, on_done=on_done, protocol=protocol)
    except Exception as exc:
        screen.say(f"judge{' (common)' * common}: {llm.error_text(exc)}", error=True)
    else:
        if common:
            screen.say(f"judged {len(saved)} answers against the common evidence")
        else:
            screen.show_progress()  # judged: n of m answers scored
    finally:
        for p in panes:
            p.judging = False
            p.show_scores()
