"""Item-audit records room: the `item_audits` table — five criteria per benchmark item,
append-only: a re-audit appends a new version of (question, annotator), each save one committed
transaction; a question's audit is the newest version of any annotator. Pass rates and the Core
set: questions/item_audit.py. DuckDB is imported only when a store opens (the CLI reads
CRITERIA for its options)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

CRITERIA: dict[str, tuple[str, ...]] = {
    "clarity": ("pass", "minor", "major"),
    "reference": ("correct", "minor_correction", "major_incorrect", "unverifiable"),
    "evidence": ("full", "partial", "unsupported", "missing"),
    "indicators": ("adequate", "minor", "missing_critical", "incorrect", "na"),
    "alignment": ("pass", "unclear", "fail"),
}
# the values a criterion passes with: small defects stay in Core, anything that would make a
# model's correct answer be marked wrong (or unmarkable) drops the item
PASSING: dict[str, frozenset[str]] = {
    "clarity": frozenset({"pass", "minor"}),
    "reference": frozenset({"correct", "minor_correction"}),
    "evidence": frozenset({"full", "partial"}),
    "indicators": frozenset({"adequate", "minor", "na"}),
    "alignment": frozenset({"pass"}),
}

SCHEMA = """
CREATE TABLE IF NOT EXISTS item_audits (
    id VARCHAR PRIMARY KEY, question_id VARCHAR NOT NULL, annotator VARCHAR NOT NULL,
    version INTEGER NOT NULL, created_at TIMESTAMP NOT NULL,
    clarity VARCHAR NOT NULL, reference VARCHAR NOT NULL, evidence VARCHAR NOT NULL,
    indicators VARCHAR NOT NULL, alignment VARCHAR NOT NULL, note VARCHAR,
    UNIQUE (question_id, annotator, version)
);
"""
AUDIT_COLUMNS = ["id", "question_id", "annotator", "version", "created_at", *CRITERIA, "note"]


def check_value(criterion: str, value: str) -> str:
    """The value, lower-cased, if the criterion allows it; else a UserError naming both."""
    if criterion not in CRITERIA:
        raise UserError(f"criterion {criterion!r}", "is unknown", f"use {', '.join(CRITERIA)}")
    v = str(value).strip().lower()
    if v not in CRITERIA[criterion]:
        raise UserError(
            f"--{criterion} {value!r}",
            "is not an allowed value",
            f"use one of {', '.join(CRITERIA[criterion])}",
        )
    return v


class ItemAuditStore:
    """The `item_audits` table over one workspace connection, safe across threads (a
    LockedTable: one lock, a cursor per statement, a committed transaction per save)."""

    def __init__(self, con: Connection, read_only: bool = False) -> None:
        from fintrade_tui.workspace.locked import LockedTable

        self.table = LockedTable(con)
        if not read_only:
            con.execute(SCHEMA)
        self.ready = bool(
            con.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_name = 'item_audits'"
            ).fetchone()
        )

    def save(
        self,
        question_id: str,
        annotator: str = "analyst",
        note: str | None = None,
        created_at: datetime | None = None,
        **values: str | None,
    ) -> dict[str, Any]:
        """Append a new version of (question, annotator). Criteria left None keep that
        annotator's previous value; on their first audit all five are required. A note left
        None keeps the previous note ("" clears it). Returns the stored row."""
        unknown = set(values) - set(CRITERIA)
        if unknown:
            raise UserError(f"criterion {sorted(unknown)[0]!r}", "is unknown", ", ".join(CRITERIA))
        given = {c: check_value(c, v) for c, v in values.items() if v is not None}
        annotator = (annotator or "").strip()
        if not annotator:
            raise UserError("--annotator", "is empty", "give the annotator's name")
        from fintrade_tui.workspace.locked import insert_rows

        with self.table.transaction() as cur:
            counted = cur.execute(
                "SELECT count(*) FROM questions WHERE id = ?", [question_id]
            ).fetchone()
            assert counted is not None  # an aggregate without GROUP BY returns one row
            (found,) = counted
            if not found:
                raise UserError(
                    f"question {question_id!r}", "not found", "see `fintrade-tui questions list`"
                )
            prev = cur.execute(
                f"SELECT {', '.join(AUDIT_COLUMNS)} FROM item_audits"
                " WHERE question_id = ? AND annotator = ? ORDER BY version DESC LIMIT 1",
                [question_id, annotator],
            ).fetchone()
            last = dict(zip(AUDIT_COLUMNS, prev, strict=True)) if prev else {}
            missing = [c for c in CRITERIA if c not in given and c not in last]
            if missing:
                raise UserError(
                    f"audit of {question_id!r} by {annotator!r}",
                    f"is a first audit and lacks {', '.join('--' + c for c in missing)}",
                    "give all five criteria the first time",
                )
            row = {
                "id": uuid.uuid4().hex[:12],
                "question_id": question_id,
                "annotator": annotator,
                "version": last.get("version", 0) + 1,
                "created_at": created_at or datetime.now(),
                **{c: given.get(c, last.get(c)) for c in CRITERIA},
                "note": last.get("note") if note is None else (note or None),
            }
            insert_rows(cur, "item_audits", AUDIT_COLUMNS, [[row[c] for c in AUDIT_COLUMNS]])
        return row

    def history(self, question_id: str | None = None) -> list[dict[str, Any]]:
        """Every version, oldest first (of one question, or of all)."""
        if not self.ready:
            return []
        return self._select(
            f"SELECT {', '.join(AUDIT_COLUMNS)} FROM item_audits WHERE ? IS NULL OR question_id = ?"
            " ORDER BY question_id, created_at, annotator, version",
            [question_id, question_id],
        )

    def latest(self, annotator: str | None = None) -> dict[str, dict[str, Any]]:
        """question id -> its audit: the newest version of any annotator (of `annotator`'s
        only, when given)."""
        if not self.ready:
            return {}
        rows = self._select(
            f"""SELECT {", ".join(AUDIT_COLUMNS)} FROM item_audits
            WHERE ? IS NULL OR annotator = ?
            QUALIFY row_number() OVER (
                PARTITION BY question_id ORDER BY created_at DESC, version DESC) = 1
            ORDER BY question_id""",
            [annotator, annotator],
        )
        return {r["question_id"]: r for r in rows}

    def _select(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        return [dict(zip(AUDIT_COLUMNS, r, strict=True)) for r in self.table.fetch(sql, params)]
