"""The explorer's eye on the shared workspace: every quarter second a stat of the file (on the UI
thread, microseconds); when another process changed it, a worker counts what is new, a one-line
notice says so, and every open screen gets a `WorkspaceChanged` message (Results reloads, the
Arena re-reads its panes' scores); while a batch keeps writing, once per SETTLE seconds."""

from __future__ import annotations

import time
from typing import Any

from textual import work
from textual.message import Message

from fintrade_tui.workspace.watch import WorkspaceChange, WorkspaceWatch

TICK = 0.25  # seconds between looks (a stat): a change shows within TICK plus the reload
SETTLE = 2.0  # at most one notice (and one refresh) per SETTLE s while another process writes


class WorkspaceChanged(Message):
    """Runs or scores were added by another process."""

    def __init__(self, change: WorkspaceChange) -> None:
        super().__init__()
        self.change = change


class WorkspaceRefresh:
    """Mixed into the app (it provides workspace_connection, notify, screen_stack)."""

    _watch: WorkspaceWatch | None = None
    _watch_busy = False
    _announced = 0.0  # when the last notice went out
    _held: WorkspaceChange | None = None  # changes waiting for the next notice

    def start_watching(self: Any) -> None:
        self._watch_busy = True
        self._look()
        self.set_interval(TICK, self._watch_tick)

    def _watch_tick(self: Any) -> None:
        if self._watch_busy:
            return
        if self._watch is None or self._watch.changed():
            self._watch_busy = True
            self._look()

    @work(thread=True, group="workspace-watch", exit_on_error=False)
    def _look(self: Any) -> None:
        try:
            if self._watch is None:  # the first look: what is there now is not news
                self._watch = WorkspaceWatch(self.workspace_connection())
                return
            change = self._watch.poll()
            if change.runs or change.scores:
                self.call_from_thread(self.workspace_changed, change)
        except Exception:  # a busy or missing workspace: look again on the next change
            pass
        finally:
            self._watch_busy = False

    def workspace_changed(self: Any, change: WorkspaceChange) -> None:
        """A batch writing all the while gives one notice and one refresh per SETTLE s, the
        counts added up, rather than one per group it writes."""
        held = self._held
        self._held = (
            change
            if held is None
            else WorkspaceChange(held.runs + change.runs, held.scores + change.scores)
        )
        wait = self._announced + SETTLE - time.monotonic()
        if held is None:  # none waiting yet: announce now, or when the last notice has settled
            if wait > 0:
                self.set_timer(wait, self._announce)
            else:
                self._announce()

    def _announce(self: Any) -> None:
        change, self._held = self._held, None
        if change is None:
            return
        self._announced = time.monotonic()
        self.notify(change.line(), title="Workspace", timeout=5)
        for screen in self.screen_stack:
            screen.post_message(WorkspaceChanged(change))
