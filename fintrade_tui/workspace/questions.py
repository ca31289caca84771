"""Question records room: the `Question` record every benchmark set is imported into (shared by
importers, resolution and scaling), and the workspace's `questions` table: insert or replace,
load with filters, get one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError
from fintrade_tui.workspace.locked import insert_rows

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

# resolution status
RESOLVED = "resolved"
UNRESOLVED = "unresolved"
# coverage status
FULL, PARTIAL, NONE, UNKNOWN = "full", "partial", "none", "unknown"


@dataclass
class Question:
    """One benchmark item. Dates are `date` objects; lists are never None."""

    id: str
    source: str  # fintradebench | jsonl | secque | finar | scaled | finar_generated
    category: str  # F, T, FT for FinTradeBench; other sets keep their own labels
    text: str
    reference_answer: str | None = None
    tickers: list[str] = field(default_factory=list)
    scope: str | None = None  # company | compare | market_scan
    as_of: date | None = None
    window_start: date | None = None
    window_end: date | None = None
    golden_raw: list[str] = field(default_factory=list)  # indicators as written in the source
    golden: list[str] = field(default_factory=list)  # canonical names the store computes
    status: str = UNRESOLVED
    reasons: list[str] = field(default_factory=list)  # why unresolved, or notes
    coverage: str = UNKNOWN
    coverage_missing: list[str] = field(default_factory=list)  # "TICKER:indicator: why"
    oracle: dict[str, Any] = field(default_factory=dict)  # ticker -> indicator -> evidence
    parent_id: str | None = None  # the seed a scaled variant came from
    extra: dict[str, Any] = field(default_factory=dict)  # format-specific fields (context, ...)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def extra_date(q: Question, keys: tuple[str, ...]) -> date | None:
    """The first of these `extra` fields that holds a date ("2024-11-01", or a longer stamp)."""
    found = extra_date_field(q, keys)
    return found[1] if found else None


def extra_date_field(q: Question, keys: tuple[str, ...]) -> tuple[str, date] | None:
    """The first of these `extra` fields that holds a date, with its name."""
    for key in keys:
        try:
            return key, date.fromisoformat(str(q.extra[key])[:10])
        except (KeyError, ValueError):
            continue
    return None


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


def json_default(v: Any) -> Any:
    """`json.dumps`'s `default`: a date (or datetime) as its ISO string; anything else fails."""
    if isinstance(v, date):
        return v.isoformat()
    raise TypeError(type(v).__name__)


def insert_questions(cur: Connection, questions: Iterable[Question]) -> int:
    """Insert or replace questions on a cursor inside the caller's transaction."""
    rows = []
    for q in questions:
        d = q.to_dict()
        for k in _JSON_FIELDS:
            d[k] = json.dumps(d[k], default=json_default, sort_keys=True)
        rows.append([d[f] for f in _FIELDS])
    insert_rows(cur, "questions", _FIELDS, rows, replace=True)
    return len(rows)


def save_questions(con: Connection, questions: Iterable[Question]) -> int:
    """Insert or replace questions in one transaction: all of them, or none."""
    con.execute("BEGIN")
    try:
        n = insert_questions(con, questions)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return n


def question_ids(con: Connection) -> set[str]:
    return {i for (i,) in con.execute("SELECT id FROM questions").fetchall()}


def _to_question(row: dict[str, Any]) -> Question:
    for k in _JSON_FIELDS:
        row[k] = json.loads(row[k]) if row[k] else {}
    for k in ("tickers", "golden_raw", "golden", "reasons", "coverage_missing"):
        row[k] = list(row[k] or [])
    return Question(**{k: row[k] for k in _FIELDS})


def load_questions(
    con: Connection,
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


def get_question(con: Connection, qid: str) -> Question:
    found = load_questions(con, ids=[qid])
    if not found:
        raise UserError(f"question {qid!r}", "not found", "see `fintrade-tui questions list`")
    return found[0]


def natural_key(text: str) -> tuple[Any, ...]:
    """ "F2" before "F10": digit runs compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))
