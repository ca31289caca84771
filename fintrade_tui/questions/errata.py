"""Errata room: the disputes of benchmark references as a small file that carries them between
workspaces — `questions errata export` writes every version of every dispute (JSONL or CSV),
`questions errata import` appends the ones a workspace lacks in one transaction.

One row per dispute version: question_id, source (the question's set), kind (wrong,
ambiguous, withdrawn), reason, corrected (the corrected reference, or empty), who, at (ISO
time), reference (the question's reference when it was exported, to tell whether the file was
made against the same published answer). Text in it is data: stored and shown, never obeyed.
"""

from __future__ import annotations

import csv
import io
import json
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError
from fintrade_tui.workspace.disputes import DisputeStore, check, fresh
from fintrade_tui.workspace.questions import load_questions

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

FIELDS = ["question_id", "source", "kind", "reason", "corrected", "who", "at", "reference"]
FORMATS = ("jsonl", "csv")


def _format(path: Path, fmt: str | None) -> str:
    fmt = fmt or path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise UserError(str(path), f"is not one of {', '.join(FORMATS)}", "name it .jsonl or .csv")
    return fmt


def errata_rows(ws: Connection) -> list[dict[str, Any]]:
    """Every dispute version in the workspace as an errata row, oldest first per question."""
    questions = {q.id: q for q in load_questions(ws)}
    rows = []
    for d in DisputeStore(ws, read_only=True).history():
        q = questions.get(d["question_id"])
        rows.append(
            {
                "question_id": d["question_id"],
                "source": q.source if q else "",
                "kind": d["kind"],
                "reason": d["reason"],
                "corrected": d["corrected"] or "",
                "who": d["who"],
                "at": d["created_at"].isoformat(timespec="microseconds"),
                "reference": (q.reference_answer or "") if q else "",
            }
        )
    return rows


def write_errata(ws: Connection, path: Path, fmt: str | None = None) -> int:
    """Write the errata file whole (aside, then renamed); returns the number of rows."""
    fmt = _format(path, fmt)
    rows = errata_rows(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            if fmt == "jsonl":
                fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            else:
                writer = csv.DictWriter(fh, FIELDS)
                writer.writeheader()
                writer.writerows(rows)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return len(rows)


def read_errata(path: Path, fmt: str | None = None) -> list[dict[str, Any]]:
    """The rows of an errata file, each checked; a bad row is a UserError naming it."""
    fmt = _format(path, fmt)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(str(path), f"cannot be read ({exc.strerror})", "check the path") from None
    if fmt == "jsonl":
        raw = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw.append((n, json.loads(line)))
            except json.JSONDecodeError as exc:
                where = f"{path}:{n}"
                raise UserError(where, f"is not JSON ({exc.msg})", "one object per line") from None
    else:
        raw = list(enumerate(csv.DictReader(io.StringIO(text, newline="")), 2))
    rows = []
    for n, r in raw:
        if not isinstance(r, dict):
            raise UserError(f"{path}:{n}", "is not an object", "one object per line")
        row: dict[str, Any] = {
            k: ("" if r.get(k) is None else str(r.get(k))).strip() for k in FIELDS
        }
        try:  # the time makes an import idempotent: the same dispute twice is one
            row["created_at"] = datetime.fromisoformat(row["at"])
        except ValueError:
            fix = "give when it was disputed, e.g. 2026-12-05T10:00:00"
            raise UserError(f"{path}:{n}: at {row['at']!r}", "is not an ISO time", fix) from None
        try:
            check(row)
        except UserError as exc:
            raise UserError(f"{path}:{n}", str(exc)) from None
        rows.append(row)
    return rows


def import_errata(
    ws: Connection, path: Path, fmt: str | None = None, dry_run: bool = False
) -> dict[str, Any]:
    """Append the file's disputes this workspace lacks (all in one transaction); rows naming
    questions not in the workspace are skipped and counted. Returns what it did:
    rows, appended, already (present before), skipped (unknown questions, their ids),
    reference_differs (question ids whose reference is not the one the file recorded)."""
    rows = read_errata(path, fmt)
    questions = {q.id: q for q in load_questions(ws)}
    known = [r for r in rows if r["question_id"] in questions]
    skipped = sorted({r["question_id"] for r in rows} - set(questions))
    differs = sorted(
        {
            r["question_id"]
            for r in known
            if r["reference"]
            and r["reference"] != (questions[r["question_id"]].reference_answer or "")
        }
    )
    origin = f"errata:{path.name}"
    store = DisputeStore(ws, read_only=dry_run)
    if dry_run:  # what an import would append, from the history as it stands
        appended = len(fresh(store.history(), known))
    else:
        appended = len(store.save_many([r | {"origin": origin} for r in known]))
    return {
        "file": str(path),
        "rows": len(rows),
        "appended": appended,
        "already": len(known) - appended,
        "skipped": skipped,
        "reference_differs": differs,
        "dry_run": dry_run,
    }
