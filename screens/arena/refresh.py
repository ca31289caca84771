"""The Arena when another process scores its runs (`judge` or `score` in another terminal): on
the app's `WorkspaceChanged`, the latest human and judge scores of the panes' runs are read
again in a thread and shown in place; a pane being judged here keeps its own state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .screen import ArenaScreen


def reread_scores(screen: ArenaScreen) -> None:
    """Read the panes' latest scores again in a thread (not those still streaming)."""
    ids = [p.run_id for p in screen.panes() if p.run_id and not p.streaming]
    scores, app = screen.state.scores, screen.fintrade
    if not ids or scores is None:
        return

    def read() -> None:
        human = {s["run_id"]: s for s in scores.latest(kind="human", run_ids=ids)}
        judged = {s["run_id"]: s for s in scores.latest(kind="llm", run_ids=ids, status=None)}
        app.call_from_thread(show_reread, screen, human, judged)

    screen.run_worker(
        read, thread=True, group="arena-rescores", exclusive=True, exit_on_error=False
    )


def show_reread(
    screen: ArenaScreen, human: dict[str, dict[str, Any]], judged: dict[str, dict[str, Any]]
) -> None:
    for pane in screen.panes():
        if pane.run_id in human or pane.run_id in judged:
            if pane.judging:
                continue
            pane.human = human.get(pane.run_id or "", pane.human)
            pane.judge = judged.get(pane.run_id or "", pane.judge)
            pane.show_scores()
