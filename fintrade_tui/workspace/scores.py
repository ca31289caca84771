"""Score records room (annotations): human and LLM scores in one append-only record shape.

A score is never overwritten: an edit appends a new version of the same (run, kind, annotator)
with its own timestamp, so the history stays and aggregates read the latest version. Each save
is one committed transaction (DuckDB's write-ahead log), so a saved score survives a kill -9.

A judge's score records its judging protocol: `per_condition` (against the evidence that run's
condition was given) or `common` (against the question's canonical evidence, the same for every
condition). The latest version is per (run, kind, annotator, protocol), so the two never
replace each other, and every read keeps one protocol (`per_condition` unless asked).
Human scores have no protocol (None).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError
from fintrade_tui.workspace.locked import LockedTable, insert_rows

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

DIMENSIONS = ("accuracy", "completeness", "relevance", "clarity")
KINDS = ("human", "llm", "panel", "match")  # match: the answer matcher (judging/rescore.py)
PROTOCOLS = ("per_condition", "common")  # how a judge score was produced
PREFERENCES = ("this", "other", "tie")  # A/B/Tie with A = the scored run, B = `prefer_run`
# what a label is worth in the label accuracy (share correct); other labels are not counted
LABEL_CREDIT = {"correct": 1.0, "partial": 0.5, "incorrect": 0.0, "refusal": 0.0}
LABEL_RUBRIC = {"correct": 5, "partial": 3, "incorrect": 1, "refusal": 1}  # vs the judge


def credit(label: str | None) -> float | None:
    """1 correct, 0.5 partial, 0 incorrect or refusal; None for a free label or none."""
    return LABEL_CREDIT.get((label or "").strip().lower())


SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, kind VARCHAR NOT NULL,
    annotator VARCHAR NOT NULL, version INTEGER NOT NULL, created_at TIMESTAMP NOT NULL,
    accuracy INTEGER, completeness INTEGER, relevance INTEGER, clarity INTEGER,
    other_run VARCHAR, preference VARCHAR, note VARCHAR, blind BOOLEAN,
    status VARCHAR NOT NULL, detail VARCHAR,
    UNIQUE (run_id, kind, annotator, version)
);
ALTER TABLE scores ADD COLUMN IF NOT EXISTS label VARCHAR;
ALTER TABLE scores ADD COLUMN IF NOT EXISTS protocol VARCHAR;
"""
_COLUMNS = [
    "id",
    "run_id",
    "kind",
    "annotator",
    "version",
    "created_at",
    "accuracy",
    "completeness",
    "relevance",
    "clarity",
    "other_run",
    "preference",
    "note",
    "blind",
    "status",
    "detail",
    "label",
    "protocol",
]


def _protocol_sql(column: str) -> str:
    """A row's protocol as read: rows saved before protocols existed were per-condition
    judgements; a human score has none."""
    return f"CASE WHEN kind = 'human' THEN NULL ELSE coalesce({column}, 'per_condition') END"


@dataclass
class Score:
    """One annotation of one run: a person's scores, or an LLM judge's (`kind = llm`)."""

    run_id: str
    kind: str = "human"
    annotator: str = "analyst"
    accuracy: int | None = None
    completeness: int | None = None
    relevance: int | None = None
    clarity: int | None = None
    other_run: str | None = None  # the run a preference compares with
    preference: str | None = None  # this | other | tie
    note: str | None = None
    blind: bool = False  # conditions were hidden when scored
    status: str = "ok"  # ok | failure (a judge that never gave valid output)
    detail: dict[str, Any] = field(default_factory=dict)  # judge output, audit, metrics...
    label: str | None = None  # a verdict: correct | partial | incorrect | refusal | free text
    created_at: datetime | None = None  # when it was given (imports keep the file's time)
    protocol: str | None = None  # judges: per_condition (None saves as that) | common

    def __post_init__(self) -> None:
        if self.protocol is None and self.kind != "human":
            self.protocol = "per_condition"

    def check(self) -> None:
        if self.kind not in KINDS:
            raise UserError(f"kind {self.kind!r}", "is unknown", f"use {', '.join(KINDS)}")
        for d in DIMENSIONS:
            v = getattr(self, d)
            if v is not None and (isinstance(v, bool) or v not in (1, 2, 3, 4, 5)):
                raise UserError(f"--{d} {v!r}", "is not a score", "give a whole number 1 to 5")
        if self.preference is not None:
            if self.preference not in PREFERENCES:
                raise UserError(
                    f"preference {self.preference!r}", "is unknown", "use this, other or tie"
                )
            if self.preference != "tie" and not self.other_run:
                raise UserError("preference", "names no other run", "give the run compared with")
        if self.kind == "human" and self.protocol is not None:
            raise UserError("protocol", "is for judge scores only", "leave it out for a person")
        if self.protocol is not None and self.protocol not in PROTOCOLS:
            raise UserError(
                f"protocol {self.protocol!r}", "is unknown", f"use {' or '.join(PROTOCOLS)}"
            )


class ScoreStore(LockedTable):
    """The `scores` table over one workspace connection, safe across threads."""

    def __init__(self, con: Connection, read_only: bool = False) -> None:
        super().__init__(con)
        if not read_only:
            from fintrade_tui.workspace.run_records import SCHEMA as RUNS

            con.execute(RUNS)  # scores point at runs
            con.execute(SCHEMA)
        self.ready = bool(
            con.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_name = 'scores'"
            ).fetchone()
        )
        # a workspace opened read-only may predate the column: its rows read as before
        has = con.execute(
            "SELECT 1 FROM information_schema.columns"
            " WHERE table_name = 'scores' AND column_name = 'protocol'"
        ).fetchone()
        self._protocol = _protocol_sql("protocol" if has else "NULL")
        self._select_list = ", ".join(
            f"{self._protocol} AS protocol" if c == "protocol" else c for c in _COLUMNS
        )

    def save(self, s: Score) -> dict[str, Any]:
        """Append a new version; returns the stored row."""
        with self.transaction() as cur:
            counted = cur.execute("SELECT count(*) FROM runs WHERE id = ?", [s.run_id]).fetchone()
            assert counted is not None  # an aggregate without GROUP BY returns one row
            (found,) = counted
            if not found:
                raise UserError(f"run {s.run_id!r}", "not found", "see `fintrade-tui runs list`")
            (row,) = append_scores(cur, [s])
        return row

    def latest(
        self,
        kind: str | None = None,
        run_ids: list[str] | None = None,
        status: str | None = "ok",
        protocol: str | None = "per_condition",
    ) -> list[dict[str, Any]]:
        """The newest version of every (run, kind, annotator, protocol). `protocol` keeps the
        judge scores of that protocol (human scores always pass: they have none); None keeps
        both, each its own latest."""
        if not self.ready:
            return []
        if protocol is not None and protocol not in PROTOCOLS:
            raise UserError(f"protocol {protocol!r}", "is unknown", f"use {' or '.join(PROTOCOLS)}")
        p = self._protocol
        return self._select(
            f"""SELECT {self._select_list} FROM scores
            WHERE (? IS NULL OR kind = ?) AND (? IS NULL OR list_contains(?, run_id))
                AND (? IS NULL OR kind = 'human' OR {p} = ?)
            QUALIFY row_number() OVER (
                PARTITION BY run_id, kind, annotator, {p} ORDER BY version DESC) = 1
                AND (? IS NULL OR status = ?)
            ORDER BY run_id, kind, annotator, protocol""",
            [kind, kind, run_ids, run_ids, protocol, protocol, status, status],
        )

    def history(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """Every version of one run's scores (or of every run's, `run_id` None)."""
        if not self.ready:
            return []
        return self._select(
            f"SELECT {self._select_list} FROM scores WHERE ? IS NULL OR run_id = ?"
            " ORDER BY run_id, kind, annotator, version",
            [run_id, run_id],
        )

    def _select(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        out = []
        for r in self.fetch(sql, params):
            d = dict(zip(_COLUMNS, r, strict=True))
            d["detail"] = json.loads(d["detail"]) if d["detail"] else {}
            out.append(d)
        return out


def append_scores(cur: Connection, scores: list[Score]) -> list[dict[str, Any]]:
    """Append scores as new versions on a cursor inside the caller's transaction; returns the
    rows as `latest()` returns them."""
    for s in scores:
        s.check()
    runs = sorted({s.run_id for s in scores})
    last = {
        (r, k, a): v
        for r, k, a, v in cur.execute(
            "SELECT run_id, kind, annotator, max(version) FROM scores"
            " WHERE list_contains(?, run_id) GROUP BY ALL",
            [runs],
        ).fetchall()
    }
    rows, values = [], []
    for s in scores:
        key = (s.run_id, s.kind, s.annotator)
        last[key] = last.get(key, 0) + 1
        row = asdict(s) | {"id": uuid.uuid4().hex[:12], "version": last[key]}
        row["created_at"] = s.created_at or datetime.now()
        rows.append(row | {"detail": s.detail or {}})
        row["detail"] = json.dumps(s.detail, default=str, sort_keys=True) if s.detail else None
        values.append([row[c] for c in _COLUMNS])
    insert_rows(cur, "scores", _COLUMNS, values)
    return rows
