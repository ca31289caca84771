"""Shared-connection room: a DuckDB connection used from several threads (the TUI's workers,
the event loop) behind one lock, each statement on its own cursor, each write its own
committed transaction — the base of the workspace's run and score tables."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection


class LockedTable:
    def __init__(self, con: Connection) -> None:
        self.con = con
        self.lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A cursor inside BEGIN ... COMMIT (ROLLBACK on any failure, kill included)."""
        with self.lock:
            cur = self.con.cursor()
            cur.execute("BEGIN")
            try:
                yield cur
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            finally:
                cur.close()

    def fetch(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        with self.lock:
            cur = self.con.cursor()
            try:
                return cur.execute(sql, params).fetchall()
            finally:
                cur.close()


def insert_rows(
    cur: Connection,
    table: str,
    columns: list[str],
    rows: list[list[Any]],
    replace: bool = False,
) -> None:
    """Insert many rows at once through an Arrow table (DuckDB's executemany binds row by row,
    about 1 ms a row); the target table's types decide the casts."""
    if not rows:
        return
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    cols = ", ".join(columns)
    if len(rows) < 20:  # a run starting, a score saved: no Arrow import on that path
        marks = ", ".join("?" for _ in columns)
        cur.executemany(f"{verb} INTO {table} ({cols}) VALUES ({marks})", rows)
        return
    import pyarrow as pa

    data = pa.table({c: pa.array([r[i] for r in rows]) for i, c in enumerate(columns)})
    name = f"_insert_{table}"
    cur.register(name, data)
    try:
        cur.execute(f"{verb} INTO {table} ({cols}) SELECT {cols} FROM {name}")
    finally:
        cur.unregister(name)
