"""Workspace-watching room: notices runs and scores another process wrote into the workspace
(an import, a batch, `judge` or `score` in another terminal) so the explorer can refresh
without a restart. Cheap by design: a stat of the file and its WAL each tick, and two counts
only when they changed and the change was not this process's own writing."""

from __future__ import annotations

import os
from dataclasses import dataclass

from fintrade_tui.workspace.shared_connection import SharedConnection
from fintrade_tui.workspace.sharing import file_stamp


@dataclass(frozen=True)
class WorkspaceChange:
    """What another process added since the last look."""

    runs: int  # runs by other processes (imported runs have no process of ours)
    scores: int

    def line(self) -> str:
        parts = [f"{self.runs:,} run{'s' * (self.runs != 1)}"] if self.runs else []
        if self.scores:
            parts.append(f"{self.scores:,} score{'s' * (self.scores != 1)}")
        what = " and ".join(parts) or "changes"
        return f"Workspace updated by another process: {what} new"


class WorkspaceWatch:
    def __init__(self, con: SharedConnection) -> None:
        self.con = con
        self.gate = con.gate
        self.stamp, self.counts = self._look()

    def changed(self) -> bool:
        """Has the file changed since the last look, by someone other than this process?
        (A stat only: safe on the UI thread.) Our own open write is waited out first."""
        if self.gate.con is not None and self.gate.writing:
            return False
        now = file_stamp(self.gate.path)
        if now == self.stamp:
            return False
        if now == self.gate.own_stamp and self.stamp in self.gate.own_run:
            self.stamp = now  # only we wrote since the last look
            return False
        # another process wrote, maybe followed by our own writes (then our own scores are
        # counted with its change: a foreign write is never hidden by one of ours)
        return True

    def poll(self) -> WorkspaceChange | None:
        """After `changed()`: what is new (runs a thread; it reads the workspace)."""
        stamp, counts = self._look()
        before = self.counts
        self.stamp, self.counts = stamp, counts
        runs, scores = counts[0] - before[0], counts[1] - before[1]
        return WorkspaceChange(max(runs, 0), max(scores, 0))

    def _look(self) -> tuple[tuple[int, ...], tuple[int, int]]:
        """The file's stamp and the counts it holds, with no statement of ours between them.
        A look while our own write connection is open sees a state of our own writing (the
        lock file keeps every other process out), so that stamp joins our run of writes."""
        with self.gate.lock:
            stamp = file_stamp(self.gate.path)
            if self.gate.con is not None and self.gate.writing:
                self.gate.own_run.append(stamp)
            return stamp, self._counts()

    def _counts(self) -> tuple[int, int]:
        cur = self.con.cursor()
        try:
            tables = {
                t
                for (t,) in cur.execute(
                    "SELECT table_name FROM information_schema.tables"
                    " WHERE table_name IN ('runs', 'scores')"
                ).fetchall()
            }
            runs = scores = 0
            if "runs" in tables:
                counted = cur.execute(
                    "SELECT count(*) FROM runs WHERE pid IS DISTINCT FROM ?", [os.getpid()]
                ).fetchone()
                assert counted is not None  # an aggregate without GROUP BY returns one row
                (runs,) = counted
            if "scores" in tables:
                counted = cur.execute("SELECT count(*) FROM scores").fetchone()
                assert counted is not None  # an aggregate without GROUP BY returns one row
                (scores,) = counted
            return int(runs), int(scores)
        finally:
            cur.close()
