"""Write-behind run records for batches: a batch of thousands of runs writes its records in
grouped transactions (every `DELAY` seconds or `ROWS` rows) instead of three per run, so the
workspace it shares with the explorer is free most of the time and each run costs one row of a
bulk insert. A run started and finished within one group is inserted once, finished.

Kills: what was not yet written is lost as a whole (no half rows): those runs have no completed
record, so resuming the batch runs them again (at most `DELAY` seconds of work)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from fintrade_tui.clock import SYSTEM, Clock
from fintrade_tui.kill_points import stop_at
from fintrade_tui.workspace.run_records import (
    COMPLETED,
    RUNNING,
    RunStore,
    end_fields,
    insert_runs,
    new_row,
    update_run,
)

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

DELAY = 0.5  # seconds a record may wait
ROWS = 200  # records that make a group write at once


class BufferedRunStore(RunStore):
    """RunStore whose `start` and `finish` are grouped (reads go to the table as written so
    far; call `flush()` or use it as a context manager so the last group lands)."""

    def __init__(
        self,
        con: Connection,
        delay: float = DELAY,
        on_written: Callable[[list[str]], None] | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        """`on_written(run_ids)` is called after each group commits, with the runs whose end it
        stored (progress that never runs ahead of what is stored). `clock` times the groups."""
        super().__init__(con)
        self.delay = delay
        self.clock = clock
        self.on_written = on_written
        self._buffer = threading.Lock()
        self._flushing = threading.Lock()  # one group at a time, in order (an update after
        # its insert)
        self._new: dict[str, dict[str, Any]] = {}  # started, not yet written
        self._updates: list[tuple[str, dict[str, Any]]] = []  # of runs already written
        self._since = 0.0
        self._closing = threading.Event()
        self._flusher = threading.Thread(target=self._tick, name="runs-write-behind", daemon=True)
        self._flusher.start()

    def start(self, row: dict[str, Any]) -> str:
        row = new_row(row)
        with self._buffer:
            self._mark()
            self._new[row["id"]] = row
            full = len(self._new) + len(self._updates) >= ROWS
        if full:
            self.flush()
        return str(row["id"])

    def finish(self, run_id: str, **fields: Any) -> None:
        fields = end_fields(fields)
        with self._buffer:
            self._mark()
            if run_id in self._new:
                self._new[run_id] |= fields
            else:
                self._updates.append((run_id, fields))

    def _mark(self) -> None:
        if not self._new and not self._updates:
            self._since = self.clock.monotonic()

    def flush(self) -> None:
        """Write everything waiting, in one transaction (kept waiting if that fails)."""
        with self._flushing:
            with self._buffer:
                new, self._new = self._new, {}
                updates, self._updates = self._updates, []
            if not new and not updates:
                return
            try:
                self._write(list(new.values()), updates)
            except BaseException:
                with self._buffer:
                    self._new, self._updates = new | self._new, updates + self._updates
                raise
            # the runs whose end (not just their start) is now stored
            ended = [rid for rid, row in new.items() if row.get("status") != RUNNING]
            ended += [rid for rid, f in updates if f.get("status", RUNNING) != RUNNING]
            stop_at("runs.ended-stored", count=len(ended))
            if self.on_written:
                self.on_written(ended)

    def _write(self, new: list[dict[str, Any]], updates: list[tuple[str, dict[str, Any]]]) -> None:
        keys = [r["batch_key"] for r in new if r.get("batch_key")]
        with self.transaction() as cur:
            if keys:  # earlier unfinished attempts of these keys are replaced, as `start` does
                cur.execute(
                    "DELETE FROM runs WHERE list_contains(?, batch_key) AND status <> ?",
                    [keys, COMPLETED],
                )
            insert_runs(cur, new)
            for run_id, fields in updates:
                update_run(cur, run_id, fields)

    def _tick(self) -> None:
        while not self.clock.wait(self._closing, self.delay / 4):
            with self._buffer:
                waited = self.clock.monotonic() - self._since
                due = (self._new or self._updates) and waited >= self.delay
            if due:  # a failure keeps the rows waiting: the next flush (or close) raises it
                with suppress(Exception):
                    self.flush()

    def close(self) -> None:
        """Stop the timer and write what is left."""
        self._closing.set()
        self._flusher.join()
        self.flush()

    def __enter__(self) -> BufferedRunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
