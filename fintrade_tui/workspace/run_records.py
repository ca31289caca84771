"""Run records room: one row per model run in the workspace DuckDB (prompt, evidence, timings,
tokens, status, answer). A run is written when it starts and again when it ends, each in its
own committed transaction, so a killed process leaves `running` rows that the next start marks
`interrupted` and a batch re-runs. Every value written passes through `redact` (an API key a
provider echoed becomes `***`), Ray shards landed in bulk too.
"""

from __future__ import annotations

import builtins
import json
import os
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui import redact
from fintrade_tui.errors import UserError
from fintrade_tui.workspace.locked import LockedTable, insert_rows
from fintrade_tui.workspace.questions import json_default

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

RUNNING, COMPLETED, ERROR, CANCELLED, TIMEOUT, INTERRUPTED = (
    "running",
    "completed",
    "error",
    "cancelled",
    "timeout",
    "interrupted",
)
FINISHED = (COMPLETED, ERROR, CANCELLED, TIMEOUT, INTERRUPTED)

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id VARCHAR PRIMARY KEY, batch_key VARCHAR, batch VARCHAR, question_id VARCHAR,
    condition VARCHAR, model VARCHAR, model_string VARCHAR, params VARCHAR, level VARCHAR,
    best_of INTEGER, as_of DATE, prompt VARCHAR, prompt_hash VARCHAR, evidence_ids VARCHAR[],
    evidence VARCHAR, tool_calls VARCHAR, candidates VARCHAR, started_at TIMESTAMP,
    ttft DOUBLE, duration DOUBLE, tokens_in INTEGER, tokens_out INTEGER, cost DOUBLE,
    retries INTEGER, status VARCHAR, error VARCHAR, answer VARCHAR, pid INTEGER
);
"""
# Columns added after the first release (the provenance of runs `runs import` brings in,
# the question kind of the prompt); added to older workspaces in place.
ADDED_COLUMNS = {
    "origin": "VARCHAR DEFAULT 'local'",  # local | external
    "source_file": "VARCHAR",
    "source_format": "VARCHAR",
    "source_locator": "VARCHAR",  # line / sample / result index in the file
    "content_hash": "VARCHAR",
    "condition_label": "VARCHAR",  # the file's own condition name, verbatim
    "variant": "VARCHAR",
    "extra": "VARCHAR",
    "question_kind": "VARCHAR",  # the prompt's kind: fundamentals, trading, hybrid, document_qa
    "deployment": "VARCHAR",  # which of a model's deployments answered (models/deployments.py)
    "imported_at": "TIMESTAMP",  # `runs import`: its transaction's start (DuckDB's now())
}
MIGRATE = "".join(
    f"ALTER TABLE runs ADD COLUMN IF NOT EXISTS {k} {t};\n" for k, t in ADDED_COLUMNS.items()
)
_JSON = ("params", "evidence", "tool_calls", "candidates", "extra")
_COLUMNS = [
    "id",
    "batch_key",
    "batch",
    "question_id",
    "condition",
    "model",
    "model_string",
    "params",
    "level",
    "best_of",
    "as_of",
    "prompt",
    "prompt_hash",
    "evidence_ids",
    "evidence",
    "tool_calls",
    "candidates",
    "started_at",
    "ttft",
    "duration",
    "tokens_in",
    "tokens_out",
    "cost",
    "retries",
    "status",
    "error",
    "answer",
    "pid",
    *ADDED_COLUMNS,
]


def dumps(v: Any) -> str:
    return json.dumps(v, default=json_default, sort_keys=True)


class RunStore(LockedTable):
    """The `runs` table over one workspace connection, safe to use from several threads."""

    def __init__(self, con: Connection, read_only: bool = False) -> None:
        super().__init__(con)
        if not read_only:
            con.execute(SCHEMA + MIGRATE)
        elif not con.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = 'runs'"
        ).fetchone():
            raise UserError("workspace", "holds no runs yet", "run `fintrade-tui ask` first")

    def start(self, row: dict[str, Any]) -> str:
        """Insert a `running` row; a batch key's earlier unfinished attempts are replaced."""
        row = new_row(row)
        with self.transaction() as cur:
            if row.get("batch_key"):
                cur.execute(
                    "DELETE FROM runs WHERE batch_key = ? AND status <> ?",
                    [row["batch_key"], COMPLETED],
                )
            insert_runs(cur, [row])
        return str(row["id"])

    def ids(self, ids: list[str]) -> set[str]:
        """Which of these run ids the table already holds."""
        found = self.fetch("SELECT id FROM runs WHERE list_contains(?, id)", [ids])
        return {i for (i,) in found}

    def finish(self, run_id: str, **fields: Any) -> None:
        """Set the end state (status, answer, timings...) of a run in one transaction."""
        fields = end_fields(fields)
        with self.transaction() as cur:
            update_run(cur, run_id, fields)

    def mark_interrupted(self) -> int:
        """Runs left `running` by a process that no longer exists (killed) -> interrupted."""
        rows = self.fetch("SELECT id, pid FROM runs WHERE status = ?", [RUNNING])
        dead = [rid for rid, pid in rows if not _alive(pid)]
        for rid in dead:
            self.finish(rid, status=INTERRUPTED, error="the process running it ended")
        return len(dead)

    def completed_keys(self, keys: list[str]) -> set[str]:
        found = self.fetch(
            "SELECT DISTINCT batch_key FROM runs WHERE status = ? AND list_contains(?, batch_key)",
            [COMPLETED, keys],
        )
        return {k for (k,) in found}

    def measured(self, models: list[str]) -> dict[tuple[str, str | None], dict[str, Any]]:
        """What this workspace measured of these models' own completed runs (imported ones
        left out): per (model, condition), and per (model, None) over every condition — runs,
        mean tokens out and mean duration (s)."""
        rows = self.fetch(
            """SELECT model, condition, count(*), avg(tokens_out), avg(duration)
               FROM runs WHERE status = ? AND coalesce(origin, 'local') = 'local'
                 AND list_contains(?, model) AND tokens_out IS NOT NULL
               GROUP BY GROUPING SETS ((model, condition), (model))""",
            [COMPLETED, models],
        )
        keys = ("runs", "tokens_out", "duration")
        return {(m, c): dict(zip(keys, rest, strict=True)) for m, c, *rest in rows}

    def spend(self) -> list[dict[str, Any]]:
        """Every run's spending and its place in the tables: id, model, condition, question,
        status, tokens in and out, cost (None where no price was known or no usage came)."""
        keys = ("id", "model", "condition", "question_id", "status", "tokens_in", "tokens_out")
        rows = self.fetch(f"SELECT {', '.join(keys)}, cost FROM runs ORDER BY id", [])
        return [dict(zip((*keys, "cost"), r, strict=True)) for r in rows]

    def batch_cost(self, batch: str) -> dict[str, float]:
        """The cost recorded so far in a batch (every invocation under its label), by model."""
        rows = self.fetch(
            "SELECT model, sum(cost) FROM runs WHERE batch = ? AND cost IS NOT NULL GROUP BY model",
            [batch],
        )
        return {m: float(c) for m, c in rows}

    def load_shards(self, files: list[str]) -> tuple[int, int]:
        """Land finished runs from Parquet shards (a Ray batch) in one transaction, keyed by
        run key: a key already completed is left as it is, a key seen twice lands once (its
        completed attempt first), earlier unfinished attempts of a key are replaced. Returns
        (rows inserted, rows skipped); loading the same shards again inserts nothing."""
        if not files:
            return 0, 0
        with self.transaction() as cur:
            cur.execute(
                "CREATE OR REPLACE TEMP TABLE _shard AS"
                " SELECT * FROM read_parquet(?, union_by_name = true)",
                [files],
            )
            shard = cur.execute("SELECT count(*) FROM _shard").fetchone()
            assert shard is not None  # an aggregate without GROUP BY returns one row
            (total,) = shard
            cur.execute(
                """CREATE OR REPLACE TEMP TABLE _pick AS
                SELECT * EXCLUDE (rn) FROM (
                    SELECT *, row_number() OVER (PARTITION BY batch_key
                        ORDER BY (status = ?) DESC, started_at DESC, id) AS rn FROM _shard)
                WHERE rn = 1 AND batch_key IS NOT NULL AND batch_key NOT IN (
                    SELECT batch_key FROM runs WHERE status = ? AND batch_key IS NOT NULL)
                  AND id NOT IN (SELECT id FROM runs)""",
                [COMPLETED, COMPLETED],
            )
            _redact_table(cur, "_pick")  # workers redact too; this holds for any shard
            cur.execute("DELETE FROM runs WHERE batch_key IN (SELECT batch_key FROM _pick)")
            cur.execute("INSERT INTO runs BY NAME SELECT * FROM _pick")
            picked = cur.execute("SELECT count(*) FROM _pick").fetchone()
            assert picked is not None  # an aggregate without GROUP BY returns one row
            (n,) = picked
            cur.execute("DROP TABLE _shard; DROP TABLE _pick")
        return n, total - n

    def list(
        self,
        question: str | None = None,
        model: str | None = None,
        condition: str | None = None,
        status: str | None = None,
        batch: str | None = None,
        limit: int = 200,
        origin: str | None = None,
    ) -> list[dict[str, Any]]:
        sql = f"""SELECT {", ".join(_COLUMNS)} FROM runs
            WHERE (? IS NULL OR question_id = ?) AND (? IS NULL OR model = ?)
              AND (? IS NULL OR condition = ?) AND (? IS NULL OR status = ?)
              AND (? IS NULL OR batch = ?) AND (? IS NULL OR coalesce(origin, 'local') = ?)
            ORDER BY started_at DESC, id LIMIT ?"""
        args = [question, question, model, model, condition, condition, status, status]
        return self._select(sql, [*args, batch, batch, origin, origin, limit])

    def get(self, run_id: str) -> dict[str, Any]:
        found = self._select(
            f"SELECT {', '.join(_COLUMNS)} FROM runs WHERE id = ? OR id LIKE ? ORDER BY id",
            [run_id, run_id + "%"],
        )
        if len(found) != 1:
            why = "not found" if not found else f"matches {len(found)} runs"
            raise UserError(f"run {run_id!r}", why, "see `fintrade-tui runs list`")
        return found[0]

    def _select(self, sql: str, params: builtins.list[Any]) -> builtins.list[dict[str, Any]]:
        # (`builtins.list`: in this class `list` is the method above)
        out = []
        for r in self.fetch(sql, params):
            d = dict(zip(_COLUMNS, r, strict=True))
            for k in _JSON:
                d[k] = json.loads(d[k]) if d[k] else None
            d["evidence_ids"] = list(d["evidence_ids"] or [])
            out.append(d)
        return out


def new_row(row: dict[str, Any]) -> dict[str, Any]:
    """A run's first record: redacted, with its id, `running`, this process and its start."""
    scrubbed: dict[str, Any] = redact.scrub(row)
    return scrubbed | {
        "id": row.get("id") or uuid.uuid4().hex[:12],
        "status": RUNNING,
        "pid": os.getpid(),
        "started_at": row.get("started_at") or datetime.now(),
    }


def end_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A run's end fields, checked against the table's columns and scrubbed of keys."""
    bad = set(fields) - set(_COLUMNS)
    if bad:
        raise ValueError(f"unknown run fields {sorted(bad)}")
    scrubbed: dict[str, Any] = redact.scrub(fields)
    return scrubbed


def update_run(cur: Connection, run_id: str, fields: dict[str, Any]) -> None:
    """Set `end_fields` of one run on a cursor inside the caller's transaction."""
    values = [dumps(v) if k in _JSON and v is not None else v for k, v in fields.items()]
    sets = ", ".join(f"{k} = ?" for k in fields)
    cur.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*values, run_id])


def insert_runs(cur: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert whole run rows on a cursor inside the caller's transaction (JSON fields as
    objects; a missing origin is `local`)."""
    values = []
    for row in redact.scrub(rows):
        row = {c: row.get(c) for c in _COLUMNS} | {"origin": row.get("origin") or "local"}
        for k in _JSON:
            row[k] = dumps(row[k]) if row[k] is not None else None
        values.append([row[c] for c in _COLUMNS])
    insert_rows(cur, "runs", _COLUMNS, values)


def _redact_table(cur: Connection, table: str) -> None:
    """Blank every secret in the VARCHAR columns of a staging table of run rows."""
    cols = [n for n, t, *_ in cur.execute(f"DESCRIBE {table}").fetchall() if t == "VARCHAR"]
    for key in redact.secrets() if cols else ():
        try:
            key.encode()
        except UnicodeEncodeError:  # non-UTF-8 bytes: no stored text can hold them
            continue
        sets = ", ".join(f'"{c}" = replace("{c}", $k, $m)' for c in cols)
        cur.execute(f"UPDATE {table} SET {sets}", {"k": key, "m": redact.MARK})


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    if pid == os.getpid():
        return True  # this process: its own runs are live
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
