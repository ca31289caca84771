"""Batch shards room: the files a Ray batch leaves in its batch folder — pending run specs as
Parquet (what workers read) and finished runs as Parquet shards (what workers write and the
driver loads into the workspace, exactly once, keyed by run key).

    <workspace dir>/batches/<batch>/specs/<invocation>/part-N.parquet   pending specs
    <workspace dir>/batches/<batch>/runs/*.parquet                      finished, not loaded
    <workspace dir>/batches/<batch>/loaded/*.parquet                    finished and loaded

The shards are the record of what finished: a killed driver's shards are loaded by the next
invocation before it plans, an unreadable shard (cut mid-write by a kill) is left and ignored,
and its runs, never landed, are planned again.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from datetime import date
from pathlib import Path
from typing import Any

from fintrade_tui.runs.runner import RunSpec
from fintrade_tui.workspace.questions import Question, json_default

_DATES = ("as_of", "window_start", "window_end")
SPEC_COLUMNS = ["key", "batch", "question", "condition", "model", "level", "best_of"]


def batch_dir(workspace: Path, batch: str) -> Path:
    """The batch's folder beside the workspace (on shared storage for a cluster)."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", batch).strip("._") or "batch"
    return workspace.resolve().parent / "batches" / safe


def question_json(q: Question) -> str:
    """A question as the workspace stores it (nested dates as ISO strings)."""
    return json.dumps(q.to_dict(), default=json_default, sort_keys=True)


def question_from_json(text: str) -> Question:
    d = json.loads(text)
    for k in _DATES:
        d[k] = date.fromisoformat(d[k]) if d.get(k) else None
    return Question(**d)


def spec_row(key: str, s: RunSpec) -> dict[str, Any]:
    return {
        "key": key,
        "batch": s.batch,
        "question": question_json(s.question),
        "condition": s.condition,
        "model": s.model,
        "level": s.level,
        "best_of": s.best_of,
    }


def spec_from_row(row: dict[str, Any]) -> RunSpec:
    return RunSpec(
        question_from_json(row["question"]),
        row["condition"],
        row["model"],
        row["level"],
        int(row["best_of"]),
        row["batch"],
    )


def write_specs(folder: Path, keyed: list[tuple[str, RunSpec]], shards: int) -> Path:
    """The pending specs as `shards` Parquet files in a fresh folder of this invocation."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = folder / "specs" / uuid.uuid4().hex[:8]
    out.mkdir(parents=True)
    shards = max(1, min(shards, len(keyed)))
    for i in range(shards):
        part = [spec_row(k, s) for k, s in keyed[i::shards]]
        table = pa.Table.from_pylist(part, schema=_spec_schema())
        tmp = out / f".part-{i:05d}.parquet"
        pq.write_table(table, tmp)
        tmp.rename(out / f"part-{i:05d}.parquet")  # readers never see half a file
    return out


def _spec_schema() -> Any:
    import pyarrow as pa

    return pa.schema([(c, pa.int32() if c == "best_of" else pa.string()) for c in SPEC_COLUMNS])


def readable(files: list[Path]) -> tuple[list[Path], list[Path]]:
    """Shards whose footer reads (whole files) and those that do not (cut by a kill, or still
    being written)."""
    import pyarrow.parquet as pq

    good, bad = [], []
    for f in files:
        try:
            pq.read_metadata(f)
            good.append(f)
        except Exception:  # a partial file: not a record of anything
            bad.append(f)
    return good, bad


def pending_shards(folder: Path) -> list[Path]:
    return sorted((folder / "runs").glob("*.parquet"))


def archive(folder: Path, files: list[Path]) -> None:
    """Move loaded shards aside (after their rows committed: a kill between commit and move
    only means loading them again, which inserts nothing)."""
    dest = folder / "loaded"
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.move(str(f), dest / f.name)


def clear_specs(folder: Path, specs: Path) -> None:
    shutil.rmtree(specs, ignore_errors=True)
