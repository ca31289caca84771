"""The Arena when another process scores its runs (`judge` or `score` in another terminal):
on the app's `WorkspaceChanged`, the latest human and judge scores of the panes' runs are read
again in a thread and shown in place; a pane being judged here keeps its own state."""

from __future__ import annotations

from typing import Any

from textual import work

from fintrade_tui.ui.workspace_refresh import WorkspaceChanged


class ArenaRefresh:
    """Mixed into ArenaScreen (it provides panes() and the ScoreStore `scores`)."""

    def on_workspace_changed(self: Any, event: WorkspaceChanged) -> None:
        ids = [p.run_id for p in self.panes() if p.run_id and not p.streaming]
        if ids and self.scores is not None and event.change.scores:
            self._reread_scores(ids)

    @work(thread=True, group="arena-rescores", exclusive=True, exit_on_error=False)
    def _reread_scores(self: Any, ids: list[str]) -> None:
        human = {s["run_id"]: s for s in self.scores.latest(kind="human", run_ids=ids)}
        judged = {s["run_id"]: s for s in self.scores.latest(kind="llm", run_ids=ids, status=None)}
        self.app.call_from_thread(self._show_reread, human, judged)

    def _show_reread(self: Any, human: dict[str, Any], judged: dict[str, Any]) -> None:
        for pane in self.panes():
            if pane.run_id in human or pane.run_id in judged:
                if pane.judging:
                    continue
                pane.human = human.get(pane.run_id, pane.human)
                pane.judge = judged.get(pane.run_id, pane.judge)
                pane.show_scores()
