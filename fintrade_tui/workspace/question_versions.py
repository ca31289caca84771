"""Question-versions room (workspace): the analyst's own questions are edited by appending a
version, as disputes are: every saved version of an `own` question is kept, whole, in
`question_versions` (append-only, who and when), while the `questions` table holds the newest
one that runs, Results and exports read. `save_version` writes both in one transaction."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui.workspace.questions import Question, insert_questions, json_default

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

SCHEMA = """
CREATE TABLE IF NOT EXISTS question_versions (
    question_id VARCHAR NOT NULL, version INTEGER NOT NULL, record VARCHAR NOT NULL,
    who VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL, PRIMARY KEY (question_id, version)
);
"""


def save_version(con: Connection, q: Question, who: str = "analyst") -> int:
    """Store `q` as the question's newest version and as its current record, in one
    transaction (all or nothing); returns the version number (1 for a new question)."""
    con.execute(SCHEMA)
    con.execute("BEGIN")
    try:
        newest = con.execute(
            "SELECT coalesce(max(version), 0) FROM question_versions WHERE question_id = ?",
            [q.id],
        ).fetchone()
        assert newest is not None  # an aggregate without GROUP BY returns one row
        (last,) = newest
        version = int(last) + 1
        record = json.dumps(q.to_dict(), default=json_default, sort_keys=True)
        con.execute(
            "INSERT INTO question_versions VALUES (?, ?, ?, ?, ?)",
            [q.id, version, record, who, datetime.now()],
        )
        insert_questions(con, [q])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return version


def versions(con: Connection, question_id: str) -> list[dict[str, Any]]:
    """Every stored version of a question, oldest first (none for imported questions)."""
    if not con.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_name = 'question_versions'"
    ).fetchone():
        return []
    rows = con.execute(
        "SELECT version, record, who, created_at FROM question_versions"
        " WHERE question_id = ? ORDER BY version",
        [question_id],
    ).fetchall()
    return [
        {"version": v, "record": json.loads(r), "who": w, "created_at": at} for v, r, w, at in rows
    ]
