"""Workspace-sharing room: several processes (the explorer, `ask`, `run`, imports, `judge`...)
use one workspace file at once. DuckDB lets one process write a file and then nobody else may
even read it, so no process keeps it open: each statement or transaction opens it (read-only to
read, read-write to write) behind a lock file beside it, and it is closed again once idle
(`IDLE`) or held too long (`MAX_HOLD`), so a waiting process gets its turn within a few
milliseconds. Waiting is retried with backoff up to `wait` seconds, then one clear line.

This module is the `Gate`: one process's hold on one file (the lock file, the open connection,
when to let it go). Statements reach it through `shared_connection.py`, the DuckDB-connection
look-alike every record store is given (`connection.open_workspace` pairs the two)."""

from __future__ import annotations

import atexit
import fcntl
import os
import random
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from fintrade_tui.clock import SYSTEM, Clock
from fintrade_tui.errors import UserError
from fintrade_tui.kill_points import stop_at

IDLE = 0.05  # seconds without a statement before the file is let go
MAX_HOLD = 0.25  # seconds a busy process keeps the file before it lets others in
YIELD = 0.03  # how long it then stays away (a waiter polls at most every 10 ms)
DEFAULT_WAIT = 60.0  # seconds a statement waits for the file (config: workspace_wait)

Prepare = Callable[[duckdb.DuckDBPyConnection], None]  # the schema, on the first write open


def file_stamp(path: Path) -> tuple[int, ...]:
    """The workspace file and its WAL as they are now (size, mtime): any commit changes it."""
    out: list[int] = []
    for p in (path, Path(f"{path}.wal")):
        try:
            st = p.stat()
            out += [st.st_size, st.st_mtime_ns]
        except FileNotFoundError:
            out += [0, 0]
    return tuple(out)


class Gate:
    """One process's access to one workspace file: the lock file, the open connection (if any),
    and when to let it go, in `clock` time. Statements of all threads pass here one at a time."""

    def __init__(self, path: Path, prepare: Prepare, clock: Clock = SYSTEM) -> None:
        self.path = path
        self.clock = clock
        self.prepare = prepare  # schema and migrations, run on the first read-write open
        self.prepared = False
        self.wait = DEFAULT_WAIT
        self.lock = threading.RLock()
        self.con: duckdb.DuckDBPyConnection | None = None
        self.writing = False
        self.committed = False  # a transaction committed since the file was opened
        self.pins = 0  # open transactions and registrations: the file stays held
        self.users = 0  # open SharedConnections; the last one closing lets the file go
        self.opened_at = 0.0
        self.last_used = 0.0
        self.away_until = 0.0
        self.own_stamp: tuple[int, ...] | None = None  # the file as this process left it
        # the file's stamps along this process's latest run of writes, from what others left
        # before it began: a look that saw one of these missed no other process's write
        self.own_run: deque[tuple[int, ...]] = deque(maxlen=64)
        self.waited = 0.0  # seconds spent waiting for other processes (benchmarks read it)
        self._fd: int | None = None
        self._reaper: threading.Thread | None = None

    # -- holding and letting go --
    @contextmanager
    def use(self, write: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            con = self._hold(write)
            try:
                yield con
            finally:
                self._used()

    def pin(self) -> duckdb.DuckDBPyConnection:
        """Hold the file read-write until `unpin` (a transaction, a registration)."""
        self.lock.acquire()
        try:
            con = self._hold(True)
        except BaseException:
            self.lock.release()
            raise
        self.pins += 1
        return con

    def unpin(self) -> None:
        self.pins -= 1
        self._used()
        self.lock.release()

    def _used(self) -> None:
        """After a statement: a file held past MAX_HOLD is let go for others (YIELD s)."""
        self.last_used = self.clock.monotonic()
        if not self.pins and self.last_used - self.opened_at > MAX_HOLD:
            self.release(away=YIELD)

    def release(self, away: float = 0.0) -> None:
        with self.lock:
            if self.pins:
                return
            if self.con is not None:
                self.con.close()
                if self.writing:  # still under the lock: this stamp is our own writing's
                    self.own_stamp = file_stamp(self.path)
                    self.own_run.append(self.own_stamp)
                # after the stamp: a watch that sees no connection sees our last stamp too
                self.con = None
                if self.committed:  # the close checkpointed the commit into the file
                    self.committed = False
                    stop_at("workspace.checkpointed")  # the lock file still held
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
                self._fd = None
            self.away_until = self.clock.monotonic() + away if away else 0.0

    def _hold(self, write: bool) -> duckdb.DuckDBPyConnection:
        """The connection, opened (or reopened read-write) as `write` needs."""
        if self.con is not None and (self.writing or not write):
            return self.con
        if self.con is not None:  # open to read, a write comes: reopen read-write
            self.release()
        pause = self.away_until - self.clock.monotonic()
        if pause > 0:
            self.clock.sleep(pause)
        if not self.prepared or not self.path.exists():
            write = True  # the first open brings the schema up to date
        began = self.clock.monotonic()
        deadline = began + self.wait
        self._fd = fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self._lock_file(fd, write, deadline)
            self.waited += self.clock.monotonic() - began
            if write and (before := file_stamp(self.path)) != self.own_stamp:
                self.own_run.clear()  # another process wrote since our last write
                self.own_run.append(before)
            self.writing = write  # before the connection: a watch never sees it mislabelled
            self.con = con = self._connect(write, deadline)
        except BaseException:
            self.release()
            raise
        self.opened_at = self.clock.monotonic()
        if write and not self.prepared:
            self.prepare(con)
            self.prepared = True
        self._start_reaper()
        return con

    def _lock_file(self, fd: int, write: bool, deadline: float) -> None:
        mode = (fcntl.LOCK_EX if write else fcntl.LOCK_SH) | fcntl.LOCK_NB
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, mode)
                return
            except BlockingIOError:
                self._busy(deadline, "another fintrade-tui process is using it")
            self.clock.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, 0.01)

    def _connect(self, write: bool, deadline: float) -> duckdb.DuckDBPyConnection:
        delay = 0.005
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=not write)
            except duckdb.IOException as exc:
                first = str(exc).splitlines()[0]
                if "lock" not in first.lower():  # not a DuckDB file, no permission...
                    raise UserError(
                        str(self.path), f"cannot open the workspace ({first})", "check the file"
                    ) from None
                self._busy(deadline, f"another program holds it: {first}")
            self.clock.sleep(delay)
            delay = min(delay * 2, 0.2)

    def _busy(self, deadline: float, why: str) -> None:
        if self.clock.monotonic() >= deadline:
            raise UserError(
                str(self.path),
                f"the workspace stayed busy for {self.wait:g} s ({why})",
                "wait for the other command to finish, or raise `workspace_wait` in config.yaml",
            )

    # -- a thread that lets an idle file go --
    def _start_reaper(self) -> None:
        if self._reaper is None or not self._reaper.is_alive():
            self._reaper = threading.Thread(target=self._reap, name="workspace-idle", daemon=True)
            self._reaper.start()

    def _reap(self) -> None:
        while True:
            self.clock.sleep(IDLE / 2)
            if not self.lock.acquire(blocking=False):
                continue
            try:
                if self.con is None:
                    return
                if not self.pins and self.clock.monotonic() - self.last_used >= IDLE:
                    self.release()
                    return
            finally:
                self.lock.release()


_gates: dict[tuple[int, str], Gate] = {}
_gates_lock = threading.Lock()


def gate(path: Path, prepare: Prepare) -> Gate:
    """This process's gate to `path` (one per file, so its threads queue in one place)."""
    key = (os.getpid(), str(path.resolve()))
    with _gates_lock:
        if key not in _gates:
            _gates[key] = Gate(path, prepare)
        return _gates[key]


def set_wait(seconds: float) -> None:
    """How long statements wait for a busy workspace from now on (config: workspace_wait)."""
    global DEFAULT_WAIT
    DEFAULT_WAIT = seconds
    for g in _gates.values():
        g.wait = seconds


@atexit.register
def _close_all() -> None:
    for g in list(_gates.values()):
        if g.con is not None and not g.pins:
            g.release()
