"""Workspace room: the analyst's own records (questions now; runs and scores later) in a DuckDB
file of their own, so rebuilding the market-data store never touches them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.questions.model import Question
from fintrade_tui.store.locked import insert_rows
from fintrade_tui.store.sharing import SharedConnection, gate

SCHEMA = """
CREATE TABLE IF NOT EXISTS questions (
    id VARCHAR PRIMARY KEY, source VARCHAR, category VARCHAR, text VARCHAR,
    reference_answer VARCHAR, tickers VARCHAR[], scope VARCHAR, as_of DATE,
    window_start DATE, window_end DATE, golden_raw VARCHAR[], golden VARCHAR[],
    status VARCHAR, reasons VARCHAR[], coverage VARCHAR, coverage_missing VARCHAR[],
    oracle VARCHAR, parent_id VARCHAR, extra VARCHAR, imported_at TIMESTAMP DEFAULT now()
);
"""
_JSON_FIELDS = ("oracle", "extra")
_FIELDS = list(Question.__dataclass_fields__)


def open_workspace(path: Path, read_only: bool = False) -> SharedConnection:
    """The workspace as a connection other processes can share (see `store/sharing.py`):
    the file is opened per statement or transaction, never held while a command waits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if read_only and not path.exists():
        raise UserError(str(path), "workspace not found", "import questions first")
    return SharedConnection(gate(path, _prepare), read_only=read_only)


def _prepare(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(SCHEMA)
    migrate(con)


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    """Columns later versions added to the run and score tables (no-op when present)."""
    from fintrade_tui.judging.annotations import SCHEMA as SCORES
    from fintrade_tui.runs.records import MIGRATE
    from fintrade_tui.runs.records import SCHEMA as RUNS

    if con.execute("SELECT 1 FROM information_schema.tables WHERE table_name = 'runs'").fetchone():
        con.execute(RUNS + MIGRATE)
    if con.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'scores'"
    ).fetchone():
        con.execute(SCORES)


def _default(v: Any) -> Any:
    if isinstance(v, date):
        return v.isoformat()
    raise TypeError(type(v).__name__)


def insert_questions(cur: duckdb.DuckDBPyConnection, questions: Iterable[Question]) -> int:
    """Insert or replace questions on a cursor inside the caller's transaction."""
    rows = []
    for q in questions:
        d = q.to_dict()
        for k in _JSON_FIELDS:
            d[k] = json.dumps(d[k], default=_default, sort_keys=True)
        rows.append([d[f] for f in _FIELDS])
    insert_rows(cur, "questions", _FIELDS, rows, replace=True)
    return len(rows)


def save_questions(con: duckdb.DuckDBPyConnection, questions: Iterable[Question]) -> int:
    """Insert or replace questions in one transaction: all of them, or none."""
    con.execute("BEGIN")
    try:
        n = insert_questions(con, questions)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return n


def question_ids(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {i for (i,) in con.execute("SELECT id FROM questions").fetchall()}


def _to_question(row: dict[str, Any]) -> Question:
    for k in _JSON_FIELDS:
        row[k] = json.loads(row[k]) if row[k] else {}
    for k in ("tickers", "golden_raw", "golden", "reasons", "coverage_missing"):
        row[k] = list(row[k] or [])
    return Question(**{k: row[k] for k in _FIELDS})


def load_questions(
    con: duckdb.DuckDBPyConnection,
    category: str | None = None,
    ticker: str | None = None,
    status: str | None = None,
    source: str | None = None,
    ids: list[str] | None = None,
) -> list[Question]:
    cur = con.execute(
        f"""SELECT {", ".join(_FIELDS)} FROM questions
        WHERE (? IS NULL OR category = ?) AND (? IS NULL OR list_contains(tickers, ?))
          AND (? IS NULL OR status = ? OR coverage = ?) AND (? IS NULL OR source = ?)
          AND (? IS NULL OR list_contains(?, id))
        ORDER BY source, regexp_extract(id, '^[A-Za-z_-]*'),
                 try_cast(regexp_extract(id, '(\\d+)$') AS INT), id""",
        [category, category, ticker, ticker, status, status, status, source, source, ids, ids],
    )
    names = [d[0] for d in cur.description]
    return [_to_question(dict(zip(names, r, strict=True))) for r in cur.fetchall()]


def get_question(con: duckdb.DuckDBPyConnection, qid: str) -> Question:
    found = load_questions(con, ids=[qid])
    if not found:
        raise UserError(f"question {qid!r}", "not found", "see `fintrade-tui questions list`")
    return found[0]
