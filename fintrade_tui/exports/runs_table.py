"""Run and score export room: every selected run with its latest scores, audit summary and
provenance, as the generic run JSONL (which `runs import` reads back to the same runs and
scores), or as flat CSV / Parquet tables (columns documented in the README). Files are written
next to their target and renamed into place, so a failure never leaves half an export.
Every export passes through `runs.redact` on its way out (records are redacted when written;
this covers what reached the workspace another way, e.g. an imported score's detail).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from fintrade_tui import redact
from fintrade_tui.reports.failures import latest_audits
from fintrade_tui.workspace.questions import load_questions
from fintrade_tui.workspace.run_records import RunStore, dumps
from fintrade_tui.workspace.score_reader import counted_scores
from fintrade_tui.workspace.scores import DIMENSIONS, ScoreStore

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

FILTERS = ("question", "model", "condition", "origin", "status", "batch", "source", "ids")
RUN_COLUMNS = [
    "run_id", "question_id", "question_source", "category", "question", "model", "condition",
    "condition_label", "variant", "level", "status", "error", "answer", "reference_answer",
    "as_of", "started_at", "latency_s", "ttft_s", "tokens_in", "tokens_out", "cost",
    "prompt_hash", "evidence_n", "origin", "source_file", "source_format", "source_locator",
    "content_hash", "human_label", "human_annotators",
    *(f"human_{d}" for d in DIMENSIONS), "llm_judge", *(f"llm_{d}" for d in DIMENSIONS),
    "audit_supported", "audit_contradicted", "audit_not_found",
]  # fmt: skip
SCORE_COLUMNS = [
    "score_id", "run_id", "question_id", "model", "condition", "kind", "annotator", "protocol",
    "version", "latest", "created_at", "label", *DIMENSIONS, "preference", "other_run", "note",
    "blind", "status", "detail",
]  # fmt: skip


def select_runs(ws: Connection, filters: dict[str, Any]) -> list[dict[str, Any]]:
    """Runs matching the filters (a question id may be a glob; `ids` a set of run ids),
    oldest first."""
    f = {k: filters.get(k) for k in FILTERS}
    exact_q = (
        f["question"] if f["question"] and not any(c in f["question"] for c in "*?[") else None
    )
    rows = RunStore(ws).list(exact_q, f["model"], f["condition"], f["status"], f["batch"], 10**9)
    qs = {q.id: q for q in load_questions(ws)}
    out = []
    for r in reversed(rows):
        if f["question"] and not fnmatch.fnmatchcase(r["question_id"] or "", f["question"]):
            continue
        if f["ids"] is not None and r["id"] not in f["ids"]:
            continue
        if f["origin"] and (r.get("origin") or "local") != f["origin"]:
            continue
        q = qs.get(r["question_id"])
        if f["source"] and (q is None or q.source != f["source"]):
            continue
        out.append(r | {"_question": q})
    return out


def _counted(rows: list[dict[str, Any]]) -> dict[str, float]:
    """One run's scores of one kind, dimension -> the value that counts (workspace/
    score_reader.py: an adjudicated dimension its settled score, any other the mean)."""
    counted = counted_scores(rows)
    return next(iter(counted.values())) if len(counted) == 1 else {}


def _flat(r: dict[str, Any], latest: list[dict[str, Any]], audit: dict | None) -> dict[str, Any]:
    q = r["_question"]
    human = [s for s in latest if s["kind"] == "human"]
    llm = [s for s in latest if s["kind"] == "llm"]
    summary = (audit or {}).get("summary") or {}
    labels = sorted({s["label"] for s in human if s.get("label")})
    human_by, llm_by = _counted(human), _counted(llm)
    return {
        "run_id": r["id"],
        "question_id": r["question_id"],
        "question_source": q.source if q else None,
        "category": q.category if q else None,
        "question": q.text if q else None,
        "model": r["model"],
        "condition": r["condition"],
        "condition_label": r.get("condition_label"),
        "variant": r.get("variant"),
        "level": r["level"],
        "status": r["status"],
        "error": r["error"],
        "answer": r["answer"],
        "reference_answer": q.reference_answer if q else None,
        "as_of": r["as_of"],
        "started_at": r["started_at"],
        "latency_s": r["duration"],
        "ttft_s": r["ttft"],
        "tokens_in": r["tokens_in"],
        "tokens_out": r["tokens_out"],
        "cost": r["cost"],
        "prompt_hash": r["prompt_hash"],
        "evidence_n": len(r["evidence_ids"]),
        "origin": r.get("origin") or "local",
        "source_file": r.get("source_file"),
        "source_format": r.get("source_format"),
        "source_locator": r.get("source_locator"),
        "content_hash": r.get("content_hash"),
        "human_label": "|".join(labels) or None,
        "human_annotators": "|".join(sorted({s["annotator"] for s in human})) or None,
        **{f"human_{d}": human_by.get(d) for d in DIMENSIONS},
        "llm_judge": "|".join(sorted({s["annotator"] for s in llm})) or None,
        **{f"llm_{d}": llm_by.get(d) for d in DIMENSIONS},
        "audit_supported": summary.get("SUPPORTED") if audit else None,
        "audit_contradicted": summary.get("CONTRADICTED") if audit else None,
        "audit_not_found": summary.get("NOT_FOUND") if audit else None,
    }


def _judgment(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": s["kind"],
        "annotator": s["annotator"],
        "label": s.get("label"),
        "scores": {d: s[d] for d in DIMENSIONS if s[d] is not None},
        "note": s["note"],
        "created_at": s["created_at"],
        "detail": s["detail"] or {},
    }


def _line(r: dict[str, Any], latest: list[dict[str, Any]], audit: dict | None) -> dict[str, Any]:
    """A run as one generic-JSONL object (the import format; see imports/generic.py)."""
    q = r["_question"]
    items = (r["evidence"] or {}).get("items") or []
    keep = ("origin", "source_file", "source_format", "source_locator", "content_hash")
    return {
        "run_id": r["id"],
        "question_id": r["question_id"],
        "question": q.text if q else None,
        "benchmark": q.source if q else None,
        "category": q.category if q else None,
        "ticker": q.tickers[0] if q and len(q.tickers) == 1 else None,
        "as_of": r["as_of"],
        "reference_answer": q.reference_answer if q else None,
        "model": r["model"],
        "condition": r.get("condition_label") or r["condition"],
        "variant": r.get("variant"),
        "answer": r["answer"] or "",
        "status": r["status"],
        "error": r["error"],
        "prompt": r["prompt"],
        "evidence": [
            {"text": i.get("text", ""), "source": i.get("title") or i.get("id")}
            | ({"page": i["meta"]["page"]} if (i.get("meta") or {}).get("page") else {})
            for i in items
        ],
        "tokens_in": r["tokens_in"],
        "tokens_out": r["tokens_out"],
        "latency_s": r["duration"],
        "cost": r["cost"],
        "started_at": r["started_at"],
        "judgments": [_judgment(s) for s in latest],
        "extra": {
            **(r.get("extra") or {}),
            "exported": {k: r.get(k) for k in keep}
            | {"level": r["level"], "model_string": r["model_string"], "ttft_s": r["ttft"]}
            | ({"audit": audit.get("summary")} if audit else {}),
        },
    }


def _replace_into(path: Path, write: Callable[[Path], object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_table(rows: list[dict[str, Any]], columns: list[str], path: Path, fmt: str) -> None:
    """CSV (header, RFC 4180 quoting) or Parquet via an in-memory DuckDB, typed columns."""
    import pandas as pd

    df = pd.DataFrame(redact.scrub(rows), columns=columns)
    option = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"

    def write(tmp: Path) -> None:
        with duckdb.connect() as con:
            con.register("export_rows", df)
            con.execute(f"COPY export_rows TO '{_sql_path(tmp)}' ({option})")

    _replace_into(path, write)


def _sql_path(p: Path) -> str:
    return str(p).replace("'", "''")  # COPY takes no parameter for its target


def export_runs(ws: Connection, path: Path, fmt: str, filters: dict) -> int:
    """Write the selected runs; returns how many."""
    runs = select_runs(ws, filters)
    store = ScoreStore(ws)
    ids = [r["id"] for r in runs]
    by_run: dict[str, list[dict[str, Any]]] = {}
    for s in store.latest(run_ids=ids):
        by_run.setdefault(s["run_id"], []).append(s)
    audits = latest_audits(store)
    if fmt == "jsonl":
        lines = [dumps(_line(r, by_run.get(r["id"], []), audits.get(r["id"]))) for r in runs]
        text = redact.text("".join(line + "\n" for line in lines))
        _replace_into(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    else:
        rows = [_flat(r, by_run.get(r["id"], []), audits.get(r["id"])) for r in runs]
        write_table(rows, RUN_COLUMNS, path, fmt)
    return len(runs)


def export_scores(ws: Connection, path: Path, fmt: str, kind: str | None, history: bool) -> int:
    """Scores (latest versions, or all with `history`) with their run's question and model."""
    store = ScoreStore(ws)
    # the latest version per protocol: a common-evidence score never hides a per-condition one
    latest = {s["id"] for s in store.latest(kind=kind, status=None, protocol=None)}
    runs = {r["id"]: r for r in RunStore(ws).list(limit=10**9)}
    rows = []
    for s in store.history():  # one query: every version, by run
        r = runs.get(s["run_id"])
        if r is None or (kind and s["kind"] != kind) or (not history and s["id"] not in latest):
            continue
        rows.append(
            {
                "score_id": s["id"],
                "run_id": s["run_id"],
                "question_id": r["question_id"],
                "model": r["model"],
                "condition": r["condition"],
                "latest": s["id"] in latest,
                **{k: s[k] for k in SCORE_COLUMNS if k in s and k != "detail"},
                "detail": json.dumps(s["detail"], sort_keys=True, default=str),
            }
        )
    if fmt == "jsonl":
        text = redact.text("".join(dumps(r) + "\n" for r in rows))
        _replace_into(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    else:
        write_table(rows, SCORE_COLUMNS, path, fmt)
    return len(rows)


REPORT_COLUMNS = [
    "model", "condition", "category", "is_baseline", "n", "accuracy", "baseline_accuracy",
    "delta_pct", "n_paired", "mean_diff", "ci_low", "ci_high", "t_stat", "t_p",
    "wilcoxon_stat", "wilcoxon_p", "wilcoxon_p_holm", "stars", "reason",
]  # fmt: skip


def write_report(cells: list[dict[str, Any]], path: Path, fmt: str) -> None:
    """The accuracy table's cells (stats.tables.flatten) as CSV or Parquet."""
    write_table(cells, REPORT_COLUMNS, path, fmt)


def write_view(folder: Path, ws: Connection, run_ids: list[str], table: dict | None) -> Path:
    """The Results screen's filtered view: its runs as JSONL and CSV, and the accuracy matrix
    as CSV, under `folder` as view-<time>-runs.jsonl / -runs.csv / -accuracy.csv."""
    from datetime import datetime

    from fintrade_tui.stats.tables import flatten

    stem = folder / f"view-{datetime.now():%Y%m%d-%H%M%S}"
    ids = set(run_ids)
    export_runs(ws, stem.with_name(stem.name + "-runs.jsonl"), "jsonl", {"ids": ids})
    export_runs(ws, stem.with_name(stem.name + "-runs.csv"), "csv", {"ids": ids})
    write_report(
        flatten(table) if table else [], stem.with_name(stem.name + "-accuracy.csv"), "csv"
    )
    return stem.with_name(stem.name + "-runs.jsonl")
