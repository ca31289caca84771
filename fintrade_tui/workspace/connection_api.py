"""Workspace room, the connection type: what the record stores and reports use of a
connection, as a `Protocol`. DuckDB's own connection has it, and so has the workspace's
`SharedConnection` (shared_connection.py), which opens the file only while a statement runs:
functions that take the workspace are typed with `Connection`, so the type check holds them to
what both offer (a DuckDB-only method on the workspace fails the check, not the run)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd


class Connection(Protocol):
    """execute / executemany / register / unregister / cursor, the fetches, `description`,
    `df`, close, and use as a context manager (positional arguments: the two spell them
    differently)."""

    def execute(self, sql: str, params: Any = None, /) -> Connection: ...

    def executemany(self, sql: str, params: Any = None, /) -> Connection: ...

    def register(self, name: str, data: Any, /) -> Connection: ...

    def unregister(self, name: str, /) -> Connection: ...

    def cursor(self) -> Connection: ...

    @property
    def description(self) -> Any: ...

    def fetchone(self) -> tuple[Any, ...] | None: ...

    def fetchmany(self, size: int = 1, /) -> list[tuple[Any, ...]]: ...

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def df(self) -> pd.DataFrame: ...

    def close(self) -> None: ...

    def __enter__(self) -> Connection: ...

    def __exit__(self, exc_type: object, exc: object, tb: object, /) -> None: ...
