"""Workspace-sharing room, the connection: `SharedConnection` looks like the DuckDB connection
callers always had (execute, executemany, cursor, register, fetch*, description, transactions by
BEGIN/COMMIT), so stores built on a connection (RunStore, ScoreStore...) need no change.

Underneath, every statement goes through this process's `Gate` (`sharing.py`), which opens the
workspace file only while it is used: a read opens it read-only, anything else read-write, and a
transaction or a registration pins it on a real cursor until it ends. Rows are fetched before
the file is let go, so a result never outlives its connection.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import duckdb

from fintrade_tui.kill_points import stop_at
from fintrade_tui.workspace.sharing import Gate

# statement verbs: a read may share the file; a transaction holds it read-write until it ends
_READS = ("SELECT", "WITH", "FROM", "DESCRIBE", "SHOW", "PRAGMA", "EXPLAIN", "SUMMARIZE")
_BEGINS = ("BEGIN", "START")
_ENDS = ("COMMIT", "ROLLBACK", "END", "ABORT")


def _verb(sql: str) -> str:
    head = sql.lstrip(" \t\r\n(").split(None, 1)
    return head[0].upper().rstrip(";") if head else ""


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
        self._rows: list[tuple[Any, ...]] = []
        self._at = 0
        self._description: Any = None
        self._closed = False
        if top:
            with g.lock:
                g.users += 1

    @property
    def gate(self) -> Gate:
        """This process's gate of the workspace file (the watcher reads its file stamp)."""
        return self._gate

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
        self._pin().register(name, data)
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

    def _pin(self) -> duckdb.DuckDBPyConnection:
        """One more reason to keep this cursor's real connection (and the file) held."""
        if self._real is None:
            self._real = self._gate.pin().cursor()
            self._holds = 0
        self._holds += 1
        return self._real

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

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchmany(self, size: int = 1) -> list[tuple[Any, ...]]:
        out = self._rows[self._at : self._at + size]
        self._at += len(out)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
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
