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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fintrade_tui.workspace.audits import AUDIT_COLUMNS, CRITERIA, PASSING, ItemAuditStore

if TYPE_CHECKING:  # the CLI imports CRITERIA for its options: no DuckDB on `--help`
    from fintrade_tui.workspace.connection_api import Connection


def failed(audit: dict[str, Any]) -> dict[str, str]:
    """criterion -> value for every criterion this audit fails (empty: the item passes)."""
    return {c: audit[c] for c in CRITERIA if audit[c] not in PASSING[c]}


def is_core(audit: dict[str, Any]) -> bool:
    return not failed(audit)


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
    out = {k: audit[k] for k in AUDIT_COLUMNS if k != "question_id"}
    out["created_at"] = audit["created_at"].isoformat()
    return out | {"failed": failed(audit), "core": is_core(audit)}


def export_jsonl(
    con: Connection, path: Path, core_only: bool = True, annotator: str | None = None
) -> int:
    """Write the audited questions (Core only, or all audited) as `questions export` rows plus
    an `audit` field; temp file then rename, so no half-written export. Returns the count."""
    from fintrade_tui.workspace.questions import json_default, load_questions

    audits = ItemAuditStore(con, read_only=True).latest(annotator)
    keep = [q for q, a in audits.items() if is_core(a) or not core_only]
    items = load_questions(con, ids=keep) if keep else []
    lines = [
        json.dumps(
            q.to_dict() | {"audit": audit_record(audits[q.id])},
            ensure_ascii=False,
            default=json_default,
        )
        + "\n"
        for q in items
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(lines), encoding="utf-8")
    os.replace(tmp, path)
    return len(items)
