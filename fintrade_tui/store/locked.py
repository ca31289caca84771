"""Shared-connection room: a DuckDB connection used from several threads (the TUI's workers,
the event loop) behind one lock, each statement on its own cursor, each write its own
committed transaction — the base of the workspace's run and score tables."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb


class LockedTable:
    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
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

    def fetch(self, sql: str, params: list[Any]) -> list[tuple]:
        with self.lock:
            cur = self.con.cursor()
            try:
                return cur.execute(sql, params).fetchall()
            finally:
                cur.close()
