"""Connections to the DuckDB store, and the atomic build-then-swap used by ingest."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.kill_points import stop_at

# The store's format: a store another version built is rebuilt, not misread.
STORE_VERSION = "3"  # 2: sec_pit rows, quality findings, reconciliation, ranked sources;
# 3: filing section text


def schema_sql() -> str:
    return resources.files("fintrade_tui.store").joinpath("schema.sql").read_text()


def connect(path: Path, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the store; a missing store is a user error that says how to build it."""
    if read_only and not path.exists():
        raise UserError(str(path), "store not found", "run `fintrade-tui ingest` first")
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        # e.g. another process holds the write lock, or the file is not a DuckDB database
        first = str(exc).splitlines()[0]
        raise UserError(
            str(path), f"cannot open the store ({first})", "close other writers or re-run ingest"
        ) from None
    found = store_version(con)
    if found != STORE_VERSION:
        con.close()
        raise UserError(
            str(path),
            f"store format {found or 1} was built by another fintrade-tui (this one reads "
            f"format {STORE_VERSION})",
            "run `fintrade-tui ingest` to rebuild it",
        )
    return con


def current(path: Path) -> bool:
    """Is there a store at `path` in this version's format?"""
    if not path.exists():
        return False
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            return store_version(con) == STORE_VERSION
    except duckdb.Error:
        return False


def store_version(con: duckdb.DuckDBPyConnection) -> str | None:
    """The format a store says it has; None for a store from before formats were recorded."""
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone()
    except duckdb.CatalogException:
        return None
    return row[0] if row else None


@contextlib.contextmanager
def building(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """Build a new store next to `path`; it replaces `path` only if the block succeeds.

    A failure (or a kill) leaves the previous store exactly as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.building-{os.getpid()}")
    for stale in (tmp, Path(f"{tmp}.wal"), *_orphans(path)):
        stale.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        con.execute("SET enable_progress_bar = false")
        con.execute(schema_sql())
        yield con
        con.execute("CHECKPOINT")
        con.close()
        stop_at("ingest.store-built")  # complete and closed, not yet swapped in
        os.replace(tmp, path)
        Path(f"{path}.wal").unlink(missing_ok=True)
    except BaseException:
        con.close()
        for stale in (tmp, Path(f"{tmp}.wal")):
            stale.unlink(missing_ok=True)
        raise


def _orphans(path: Path) -> list[Path]:
    """Half-built stores a killed ingest left (its pid is gone): a kill runs no cleanup."""
    out = []
    for p in path.parent.glob(f".{path.name}.building-*"):
        pid = p.name.rsplit("-", 1)[1].removesuffix(".wal")
        if pid.isdigit() and not _running(int(pid)):
            out.append(p)
    return out


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


class Anchor:
    """One read-only connection held open to a store, so the many short ones a batch opens (one
    a run, on its preparing thread) join its open database instead of opening the file again:
    ~0.6 ms each instead of ~21 ms of CPU. Held again when the file is replaced (an ingest
    renames a new store in): DuckDB hands a new connection the instance open for the path,
    which would be the old file's while this one held it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int] | None = None
        self._con: duckdb.DuckDBPyConnection | None = None
        self._lock = threading.Lock()

    def hold(self) -> None:
        """Hold the store as it is on disk now (a stat a call; nothing when it is missing)."""
        try:
            st = self.path.stat()
            seen: tuple[int, int] | None = (st.st_ino, st.st_mtime_ns)
        except OSError:
            seen = None
        with self._lock:
            if seen == self._seen and (self._con is not None or seen is None):
                return
            self._release()
            self._seen = seen
            if seen is not None:
                with contextlib.suppress(UserError, duckdb.Error):
                    self._con = connect(self.path)

    def _release(self) -> None:
        if self._con is not None:
            with contextlib.suppress(duckdb.Error):
                self._con.close()
            self._con = None
