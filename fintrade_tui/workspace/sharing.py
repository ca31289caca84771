"""Workspace-sharing room: several processes (the explorer, `ask`, `run`, imports, `judge`...)
use one workspace file at once. DuckDB lets one process write a file and then nobody else may
even read it, so no process keeps it open: each statement or transaction opens it (read-only to
read, read-write to write) behind a lock file beside it, and it is closed again once idle
(`IDLE`) or held too long (`MAX_HOLD`), so a waiting process gets its turn within a few
milliseconds. Waiting is retried with backoff up to `wait` seconds, then one clear line.

`SharedConnection` looks like the DuckDB connection callers always had (execute, executemany,
cursor, register, fetch*, description, transactions by BEGIN/COMMIT), so stores built on a
connection (RunStore, ScoreStore...) need no change; rows are fetched before the file is let
go, so a result never outlives its connection."""

from __future__ import annotations

import atexit
import fcntl
import os
import random
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb

from fintrade_tui.clock import SYSTEM, Clock
from fintrade_tui.errors import UserError
from fintrade_tui.kill_points import stop_at

IDLE = 0.05  # seconds without a statement before the file is let go
MAX_HOLD = 0.25  # seconds a busy process keeps the file before it lets others in
YIELD = 0.03  # how long it then stays away (a waiter polls at most every 10 ms)
DEFAULT_WAIT = 60.0  # seconds a statement waits for the file (config: workspace_wait)

Prepare = Callable[[duckdb.DuckDBPyConnection], None]  # the schema, on the first write open
_READS = ("SELECT", "WITH", "FROM", "DESCRIBE", "SHOW", "PRAGMA", "EXPLAIN", "SUMMARIZE")
_BEGINS = ("BEGIN", "START")
_ENDS = ("COMMIT", "ROLLBACK", "END", "ABORT")


def _verb(sql: str) -> str:
    head = sql.lstrip(" \t\r\n(").split(None, 1)
    return head[0].upper().rstrip(";") if head else ""


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
            self._hold(write)
            try:
                yield self.con  # type: ignore[misc]
            finally:
                self._used()

    def pin(self) -> duckdb.DuckDBPyConnection:
        """Hold the file read-write until `unpin` (a transaction, a registration)."""
        self.lock.acquire()
        try:
            self._hold(True)
        except BaseException:
            self.lock.release()
            raise
        self.pins += 1
        return self.con  # type: ignore[return-value]

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

    def _hold(self, write: bool) -> None:
        if self.con is not None and (self.writing or not write):
            return
        if self.con is not None:  # open to read, a write comes: reopen read-write
            self.release()
        pause = self.away_until - self.clock.monotonic()
        if pause > 0:
            self.clock.sleep(pause)
        if not self.prepared or not self.path.exists():
            write = True  # the first open brings the schema up to date
        began = self.clock.monotonic()
        deadline = began + self.wait
        self._fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            self._lock_file(write, deadline)
            self.waited += self.clock.monotonic() - began
            if write and (before := file_stamp(self.path)) != self.own_stamp:
                self.own_run.clear()  # another process wrote since our last write
                self.own_run.append(before)
            self.writing = write  # before the connection: a watch never sees it mislabelled
            self.con = self._connect(write, deadline)
        except BaseException:
            self.release()
            raise
        self.opened_at = self.clock.monotonic()
        if write and not self.prepared:
            self.prepare(self.con)
            self.prepared = True
        self._start_reaper()

    def _lock_file(self, write: bool, deadline: float) -> None:
        mode = (fcntl.LOCK_EX if write else fcntl.LOCK_SH) | fcntl.LOCK_NB
        delay = 0.001
        while True:
            try:
                fcntl.flock(self._fd, mode)  # type: ignore[arg-type]
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


class SharedConnection:
    """A DuckDB-connection look-alike over a `Gate` (see the module docstring). A cursor is
    another SharedConnection on the same gate; a transaction (BEGIN ... COMMIT) holds the
    file read-write on a real cursor until it ends."""

    def __init__(self, g: Gate, read_only: bool = False, top: bool = True) -> None:
        self._gate = g
        self._read_only = read_only
        self._top = top
        self._real: duckdb.DuckDBPyConnection | None = None  # a transaction or registration
        self._in_transaction = False
        self._registered: set[str] = set()
        self._holds = 0
        self._rows: list[tuple] = []
        self._at = 0
        self._description: Any = None
        self._closed = False
        if top:
            with g.lock:
                g.users += 1

    # -- statements --
    def execute(self, sql: str, params: Any = None) -> SharedConnection:
        verb = _verb(sql)
        if verb in _BEGINS:
            self._pin()
            self._in_transaction = True
        if self._real is not None:
            if verb == "COMMIT":
                stop_at("workspace.before-commit")  # the transaction's rows in, uncommitted
            try:
                self._real.execute(sql, params)
                self._take(self._real)
                if verb == "COMMIT":
                    self._gate.committed = True
                    stop_at("workspace.committed")  # in the WAL, not yet in the file
            finally:
                if verb in _ENDS:
                    self._in_transaction = False
                    self._unpin()
            return self
        if verb in _ENDS:  # no transaction of this cursor is open (a failed COMMIT ended it)
            self._rows, self._description = [], None
            return self
        write = verb not in _READS and not self._read_only
        with self._gate.use(write) as con:
            cur = con.cursor()
            try:
                cur.execute(sql, params)
                self._take(cur)
            finally:
                cur.close()
        return self

    def executemany(self, sql: str, params: Any = None) -> SharedConnection:
        if self._real is not None:
            self._real.executemany(sql, params)
            return self
        with self._gate.use(True) as con:
            cur = con.cursor()
            try:
                cur.executemany(sql, params)
            finally:
                cur.close()
        return self

    def register(self, name: str, data: Any) -> SharedConnection:
        self._pin()
        self._real.register(name, data)  # type: ignore[union-attr]
        self._registered.add(name)
        return self

    def unregister(self, name: str) -> SharedConnection:
        if self._real is not None and name in self._registered:
            self._real.unregister(name)
            self._registered.discard(name)
            self._unpin()
        return self

    def cursor(self) -> SharedConnection:
        return SharedConnection(self._gate, self._read_only, top=False)

    def _take(self, cur: duckdb.DuckDBPyConnection) -> None:
        self._description = cur.description
        self._rows = cur.fetchall() if cur.description else []
        self._at = 0

    def _pin(self) -> None:
        """One more reason to keep this cursor's real connection (and the file) held."""
        if self._real is None:
            self._real = self._gate.pin().cursor()
            self._holds = 0
        self._holds += 1

    def _unpin(self) -> None:
        self._holds -= 1
        if self._holds <= 0 and self._real is not None:
            real, self._real = self._real, None
            real.close()
            self._gate.unpin()

    # -- results --
    @property
    def description(self) -> Any:
        return self._description

    def fetchone(self) -> tuple | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchmany(self, size: int = 1) -> list[tuple]:
        out = self._rows[self._at : self._at + size]
        self._at += len(out)
        return out

    def fetchall(self) -> list[tuple]:
        out = self._rows[self._at :]
        self._at = len(self._rows)
        return out

    def df(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.fetchall(), columns=[d[0] for d in self._description or []])

    fetchdf = df

    # -- lifetime --
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._real is not None:
            if self._in_transaction:  # a transaction left open: nothing of it is kept
                with suppress(duckdb.Error):
                    self._real.execute("ROLLBACK")
            self._holds = 1
            self._unpin()
        if self._top:
            g = self._gate
            with g.lock:
                g.users -= 1
                if g.users <= 0 and not g.pins:
                    g.release()

    def __enter__(self) -> SharedConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
