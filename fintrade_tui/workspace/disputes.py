"""Disputes room: analysts' objections to a benchmark's own reference answer — wrong or
ambiguous, with a reason and optionally a corrected reference — append-only in the workspace
with who and when, like scores; a question's newest dispute counts, and a `withdrawn` one
ends it. Errata files carry them between workspaces (questions/errata.py)."""

from __future__ import annotations

import threading
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui.workspace.locked import LockedTable, insert_rows

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

WRONG, AMBIGUOUS, WITHDRAWN = "wrong", "ambiguous", "withdrawn"
KINDS = (WRONG, AMBIGUOUS, WITHDRAWN)
LOCAL = "local"  # disputed here; an imported one names its errata file

SCHEMA = """
CREATE TABLE IF NOT EXISTS reference_disputes (
    id VARCHAR PRIMARY KEY, question_id VARCHAR NOT NULL, version INTEGER NOT NULL,
    kind VARCHAR NOT NULL, reason VARCHAR NOT NULL, corrected VARCHAR,
    who VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL, origin VARCHAR NOT NULL,
    UNIQUE (question_id, version)
);
"""
COLUMNS = ["id", "question_id", "version", "kind", "reason", "corrected", "who", "created_at"]
COLUMNS += ["origin"]
_DDL = threading.Lock()


class DisputeStore(LockedTable):
    """The `reference_disputes` table over one workspace connection: append-only, a
    question's newest version counts."""

    def __init__(self, con: Connection, read_only: bool = False) -> None:
        super().__init__(con)
        with _DDL, con.cursor() as cur:
            if not read_only:
                cur.execute(SCHEMA)
            self.ready = bool(
                cur.execute(
                    "SELECT 1 FROM information_schema.tables"
                    " WHERE table_name = 'reference_disputes'"
                ).fetchone()
            )

    def save(
        self,
        question_id: str,
        kind: str,
        reason: str,
        who: str,
        corrected: str | None = None,
        origin: str = LOCAL,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """Append one dispute of a question in the workspace; returns the row (the one already
        there when it is the same dispute at the same time)."""
        d: dict[str, Any] = {"question_id": question_id, "kind": kind, "reason": reason, "who": who}
        d |= {"corrected": corrected, "origin": origin, "created_at": at}
        added = self.save_many([d])
        if added:
            return added[0]
        same = fresh([], [d])[0]
        return next(h for h in self.history(question_id) if not fresh([h], [same]))

    def save_many(self, disputes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Append disputes in one transaction (all or none); each names an existing question.
        A dispute equal to one its question already has (kind, reason, correction, who and
        when) is not appended again: an errata file imported twice adds nothing. Returns the
        rows appended."""
        from fintrade_tui.errors import UserError

        for d in disputes:
            check(d)
        out = []
        with self.transaction() as cur:
            ids = {d["question_id"] for d in disputes}
            known = {
                r[0]
                for r in cur.execute(
                    "SELECT id FROM questions WHERE list_contains(?, id)", [sorted(ids)]
                ).fetchall()
            }
            if missing := sorted(ids - known):
                raise UserError(
                    f"question {missing[0]!r}", "is not in this workspace", "import it first"
                )
            had = [
                dict(zip(COLUMNS, r, strict=True))
                for r in cur.execute(
                    f"SELECT {', '.join(COLUMNS)} FROM reference_disputes"
                    " WHERE list_contains(?, question_id) ORDER BY version",
                    [sorted(ids)],
                ).fetchall()
            ]
            versions = {}
            for d in had:
                versions[d["question_id"]] = d["version"]
            for d in fresh(had, disputes):
                version = versions.get(d["question_id"], 0) + 1
                versions[d["question_id"]] = version
                row = {"id": uuid.uuid4().hex[:12], "version": version} | d
                insert_rows(cur, "reference_disputes", COLUMNS, [[row[c] for c in COLUMNS]])
                out.append(row)
        return out

    def history(self, question_id: str | None = None) -> list[dict[str, Any]]:
        """Every version, oldest first (one question's, or all)."""
        if not self.ready:
            return []
        rows = self.fetch(
            f"SELECT {', '.join(COLUMNS)} FROM reference_disputes"
            " WHERE ? IS NULL OR question_id = ? ORDER BY question_id, version",
            [question_id, question_id],
        )
        return [dict(zip(COLUMNS, r, strict=True)) for r in rows]

    def latest(self, question_ids: list[str] | None = None) -> dict[str, dict[str, Any]]:
        """question id -> its newest dispute, unless that one withdrew it."""
        if not self.ready:
            return {}
        rows = self.fetch(_LATEST, [question_ids, question_ids])
        out = (dict(zip(COLUMNS, r, strict=True)) for r in rows)
        return {d["question_id"]: d for d in out if d["kind"] != WITHDRAWN}


_LATEST = f"""SELECT {", ".join(COLUMNS)} FROM reference_disputes
    WHERE ? IS NULL OR list_contains(?, question_id)
    QUALIFY row_number() OVER (PARTITION BY question_id ORDER BY version DESC) = 1"""


def check(d: dict[str, Any]) -> None:
    """A dispute's fields, or a UserError naming the one to fix."""
    from fintrade_tui.errors import UserError

    where = f"dispute of {d.get('question_id')!r}"
    if not str(d.get("question_id") or "").strip():
        raise UserError("dispute", "names no question", "give question_id")
    if d.get("kind") not in KINDS:
        raise UserError(f"{where}: kind {d.get('kind')!r}", "is unknown", f"use {', '.join(KINDS)}")
    if not str(d.get("reason") or "").strip():
        raise UserError(where, "gives no reason", "say why the reference is wrong or ambiguous")
    if not str(d.get("who") or "").strip():
        raise UserError(where, "names no one", "give who disputes it (--who)")
    if d["kind"] == AMBIGUOUS and (d.get("corrected") or "").strip():
        raise UserError(where, "is ambiguous yet corrects it", "use kind wrong to correct it")


def fresh(history: list[dict[str, Any]], disputes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The disputes not already in `history` (nor earlier in `disputes`), each as the row it
    would be (reason, correction and who trimmed; created now when it gives no time). Equal
    means the same question, kind, reason, correction, who and time."""

    def key(d: dict[str, Any]) -> tuple[Any, ...]:
        return (
            d["question_id"],
            d["kind"],
            d["reason"].strip(),
            (d.get("corrected") or "").strip() or None,
            d["who"].strip(),
            d["created_at"],
        )

    seen = {key(d) for d in history}
    out = []
    for d in disputes:
        row = {
            "question_id": d["question_id"],
            "kind": d["kind"],
            "reason": d["reason"].strip(),
            "corrected": (d.get("corrected") or "").strip() or None,
            "who": d["who"].strip(),
            "created_at": d.get("created_at") or datetime.now(),
            "origin": d.get("origin") or LOCAL,
        }
        if key(row) not in seen:
            seen.add(key(row))
            out.append(row)
    return out
