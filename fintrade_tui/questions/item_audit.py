"""Item-audit room: the benchmark items themselves audited on five criteria (clarity, reference
answer, evidence, golden indicators, entity-time alignment), stored append-only like scores.

An audit is never overwritten: a re-audit appends a new version of the same (question,
annotator), each save one committed transaction. A question's audit is the latest version of
any annotator (the last reviewer's word stands, so an adjudicator can settle a disagreement by
re-auditing); `annotator=` restricts everything to one annotator's latest versions. A "Core"
item is audited and its audit passes all five criteria (see PASSING).
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError

if TYPE_CHECKING:  # the CLI imports CRITERIA for its options: no DuckDB on `--help`
    import duckdb

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
_COLUMNS = ["id", "question_id", "annotator", "version", "created_at", *CRITERIA, "note"]


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


def failed(audit: dict[str, Any]) -> dict[str, str]:
    """criterion -> value for every criterion this audit fails (empty: the item passes)."""
    return {c: audit[c] for c in CRITERIA if audit[c] not in PASSING[c]}


def is_core(audit: dict[str, Any]) -> bool:
    return not failed(audit)


class ItemAuditStore:
    """The `item_audits` table over one workspace connection, safe across threads (a
    LockedTable: one lock, a cursor per statement, a committed transaction per save)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, read_only: bool = False) -> None:
        from fintrade_tui.store.locked import LockedTable

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
        from fintrade_tui.store.locked import insert_rows

        with self.table.transaction() as cur:
            (found,) = cur.execute(
                "SELECT count(*) FROM questions WHERE id = ?", [question_id]
            ).fetchone()
            if not found:
                raise UserError(
                    f"question {question_id!r}", "not found", "see `fintrade-tui questions list`"
                )
            prev = cur.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM item_audits"
                " WHERE question_id = ? AND annotator = ? ORDER BY version DESC LIMIT 1",
                [question_id, annotator],
            ).fetchone()
            last = dict(zip(_COLUMNS, prev, strict=True)) if prev else {}
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
            insert_rows(cur, "item_audits", _COLUMNS, [[row[c] for c in _COLUMNS]])
        return row

    def history(self, question_id: str | None = None) -> list[dict[str, Any]]:
        """Every version, oldest first (of one question, or of all)."""
        if not self.ready:
            return []
        return self._select(
            f"SELECT {', '.join(_COLUMNS)} FROM item_audits WHERE ? IS NULL OR question_id = ?"
            " ORDER BY question_id, created_at, annotator, version",
            [question_id, question_id],
        )

    def latest(self, annotator: str | None = None) -> dict[str, dict[str, Any]]:
        """question id -> its audit: the newest version of any annotator (of `annotator`'s
        only, when given)."""
        if not self.ready:
            return {}
        rows = self._select(
            f"""SELECT {", ".join(_COLUMNS)} FROM item_audits
            WHERE ? IS NULL OR annotator = ?
            QUALIFY row_number() OVER (
                PARTITION BY question_id ORDER BY created_at DESC, version DESC) = 1
            ORDER BY question_id""",
            [annotator, annotator],
        )
        return {r["question_id"]: r for r in rows}

    def _select(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        return [dict(zip(_COLUMNS, r, strict=True)) for r in self.table.fetch(sql, params)]


def _pct(n: int, d: int) -> float | None:
    return round(100 * n / d, 1) if d else None


def pass_rates(audits: dict[str, dict[str, Any]], questions: int | None = None) -> dict[str, Any]:
    """The pass-rate table over the latest audits: per criterion and overall (all five)."""
    rows = list(audits.values())
    crit = {}
    for c, values in CRITERIA.items():
        counts = {v: sum(r[c] == v for r in rows) for v in values}
        ok = sum(n for v, n in counts.items() if v in PASSING[c])
        crit[c] = {
            "audited": len(rows),
            "passing": ok,
            "pct": _pct(ok, len(rows)),
            "passing_values": sorted(PASSING[c], key=values.index),
            "counts": counts,
        }
    core = sum(is_core(r) for r in rows)
    return {
        "questions": questions,
        "audited": len(rows),
        "passing": core,
        "pct": _pct(core, len(rows)),
        "criteria": crit,
    }


def failing(audits: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The audited items failing any criterion, with which (criterion -> value)."""
    return [
        {
            "question_id": q,
            "annotator": a["annotator"],
            "version": a["version"],
            "failed": failed(a),
            "note": a["note"],
        }
        for q, a in sorted(audits.items())
        if failed(a)
    ]


def audit_record(audit: dict[str, Any]) -> dict[str, Any]:
    """An audit as exported: its fields, which criteria fail, whether the item is Core."""
    out = {k: audit[k] for k in _COLUMNS if k != "question_id"}
    out["created_at"] = audit["created_at"].isoformat()
    return out | {"failed": failed(audit), "core": is_core(audit)}


def export_jsonl(
    con: duckdb.DuckDBPyConnection, path: Path, core_only: bool = True, annotator: str | None = None
) -> int:
    """Write the audited questions (Core only, or all audited) as `questions export` rows plus
    an `audit` field; temp file then rename, so no half-written export. Returns the count."""
    from fintrade_tui.questions.importers import _iso
    from fintrade_tui.store.workspace import load_questions

    audits = ItemAuditStore(con, read_only=True).latest(annotator)
    keep = [q for q, a in audits.items() if is_core(a) or not core_only]
    items = load_questions(con, ids=keep) if keep else []
    lines = [
        json.dumps(
            q.to_dict() | {"audit": audit_record(audits[q.id])}, ensure_ascii=False, default=_iso
        )
        + "\n"
        for q in items
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    os.replace(tmp, path)
    return len(items)
