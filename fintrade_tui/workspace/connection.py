"""Workspace connection room: the analyst's own records (questions, runs, scores, preferences,
screenings, audits) live in a DuckDB file of their own, so rebuilding the market-data store
never touches them. `open_workspace` hands out the connection every record store is given,
creating the questions table and migrating the run and score tables on first write."""

from __future__ import annotations

from pathlib import Path

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.workspace.questions import SCHEMA
from fintrade_tui.workspace.run_records import MIGRATE
from fintrade_tui.workspace.run_records import SCHEMA as RUNS
from fintrade_tui.workspace.scores import SCHEMA as SCORES
from fintrade_tui.workspace.shared_connection import SharedConnection
from fintrade_tui.workspace.sharing import gate


def open_workspace(path: Path, read_only: bool = False) -> SharedConnection:
    """The workspace as a connection other processes can share (see `workspace/sharing.py`
    and `workspace/shared_connection.py`): the file is opened per statement or transaction,
    never held while a command waits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if read_only and not path.exists():
        raise UserError(str(path), "workspace not found", "import questions first")
    return SharedConnection(gate(path, _prepare), read_only=read_only)


def _prepare(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(SCHEMA)
    migrate(con)


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    """Columns later versions added to the run and score tables (no-op when present)."""
    if con.execute("SELECT 1 FROM information_schema.tables WHERE table_name = 'runs'").fetchone():
        con.execute(RUNS + MIGRATE)
    if con.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'scores'"
    ).fetchone():
        con.execute(SCORES)
