"""Screenings room: the fatal-flaw screen's records — one `flag_screenings` row per screening and
its `flags` — append-only in the workspace; a run's newest screening counts (judging/flaws.py
finds the flags)."""

from __future__ import annotations

import threading
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui.workspace.locked import LockedTable, insert_rows

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

LLM_FLAGS = ("unsupported_claims", "inconsistent_conclusion")
# the paper's order, then text that addresses the grader (audits/manipulation.py)
FLAGS = (
    "wrong_entity", "wrong_period", *LLM_FLAGS, "incomplete", "truncated", "judge_manipulation",
)  # fmt: skip
DETERMINISTIC = "deterministic"


@dataclass(frozen=True)
class Flag:
    """One fatal flaw found in one answer, and which check found it."""

    flag: str  # one of FLAGS
    reason: str  # one line
    span: str = ""  # the offending text, verbatim from the answer
    start: int | None = None  # where `span` starts in the answer
    check: str = DETERMINISTIC  # "deterministic" or the LLM check's model name

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --- the record ----------------------------------------------------------------------------------

SCHEMA = """
CREATE TABLE IF NOT EXISTS flag_screenings (
    id VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, version INTEGER NOT NULL,
    created_at TIMESTAMP NOT NULL, checks VARCHAR[] NOT NULL, llm_model VARCHAR,
    llm_error VARCHAR, UNIQUE (run_id, version)
);
CREATE TABLE IF NOT EXISTS flags (
    id VARCHAR PRIMARY KEY, screening VARCHAR NOT NULL, run_id VARCHAR NOT NULL,
    flag VARCHAR NOT NULL, reason VARCHAR NOT NULL, span VARCHAR, span_start INTEGER,
    checker VARCHAR NOT NULL
);
"""
_SCREENING = ["id", "run_id", "version", "created_at", "checks", "llm_model", "llm_error"]
_DDL = threading.Lock()
_FLAG = ["id", "screening", "run_id", "flag", "reason", "span", "span_start", "checker"]


class FlagStore(LockedTable):
    """The `flags` table (and its screenings) over one workspace connection: append-only,
    one transaction per screening, a run's newest screening counts."""

    def __init__(self, con: Connection, read_only: bool = False) -> None:
        super().__init__(con)
        # a cursor (the TUI's threads share one connection), and one creator at a time:
        # two panes ending together would both create the tables and one would conflict
        with _DDL, con.cursor() as cur:
            if not read_only:
                from fintrade_tui.workspace.run_records import SCHEMA as RUNS

                cur.execute(RUNS + SCHEMA)  # flags point at runs
            self.ready = bool(
                cur.execute(
                    "SELECT 1 FROM information_schema.tables WHERE table_name = 'flag_screenings'"
                ).fetchone()
            )

    def save(
        self,
        run_id: str,
        flags: list[Flag],
        checks: list[str],
        llm_model: str | None = None,
        llm_error: str | None = None,
    ) -> dict[str, Any]:
        """Append one screening of one run with its flags; returns it as `latest` does."""
        from fintrade_tui.errors import UserError

        with self.transaction() as cur:
            counted = cur.execute("SELECT count(*) FROM runs WHERE id = ?", [run_id]).fetchone()
            assert counted is not None  # an aggregate without GROUP BY returns one row
            (found,) = counted
            if not found:
                raise UserError(f"run {run_id!r}", "not found", "see `fintrade-tui runs list`")
            newest = cur.execute(
                "SELECT coalesce(max(version), 0) FROM flag_screenings WHERE run_id = ?", [run_id]
            ).fetchone()
            assert newest is not None  # an aggregate without GROUP BY returns one row
            (last,) = newest
            row = {
                "id": uuid.uuid4().hex[:12],
                "run_id": run_id,
                "version": last + 1,
                "created_at": datetime.now(),
                "checks": list(checks),
                "llm_model": llm_model,
                "llm_error": llm_error,
            }
            insert_rows(cur, "flag_screenings", _SCREENING, [[row[c] for c in _SCREENING]])
            values = [
                [
                    uuid.uuid4().hex[:12],
                    row["id"],
                    run_id,
                    f.flag,
                    f.reason,
                    f.span,
                    f.start,
                    f.check,
                ]
                for f in flags
            ]
            insert_rows(cur, "flags", _FLAG, values)
        return row | {"flags": [f.to_dict() for f in flags]}

    def latest(self, run_ids: list[str] | None = None) -> dict[str, dict[str, Any]]:
        """run id -> its newest screening: the _SCREENING fields and `flags` (Flag dicts)."""
        if not self.ready:
            return {}
        rows = self.fetch(
            f"""SELECT {", ".join(_SCREENING)} FROM flag_screenings
            WHERE ? IS NULL OR list_contains(?, run_id)
            QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY version DESC) = 1""",
            [run_ids, run_ids],
        )
        out = {r[1]: dict(zip(_SCREENING, r, strict=True)) | {"flags": []} for r in rows}
        by_id = {s["id"]: s for s in out.values()}
        if not by_id:
            return out
        for _fid, sid, _run, flag, reason, span, start, checker in self.fetch(
            f"SELECT {', '.join(_FLAG)} FROM flags WHERE list_contains(?, screening)"
            " ORDER BY screening, span_start NULLS LAST, flag, id",
            [list(by_id)],
        ):
            by_id[sid]["flags"].append(Flag(flag, reason, span or "", start, checker).to_dict())
        for s in out.values():
            s["checks"] = list(s["checks"])
        return out
