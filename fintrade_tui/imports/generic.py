"""Generic run JSONL room: the documented one-run-per-line format that `runs export` writes and
`runs import` reads (README, "Bring your own results"). Streamed line by line.

Keys: question_id, model, answer (required); question, condition, variant, reference_answer,
evidence [{text, source, page}], prompt, tokens_in, tokens_out, latency_s, cost, started_at,
label, scores {dimension: 1-5}, annotator, note, company, ticker, as_of, category, benchmark,
status, error, run_id, judgments [{kind, annotator, label, scores, note, created_at, detail}],
extra. Unknown keys are kept in extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.imports.common import as_text, decode, lines, loads
from fintrade_tui.imports.record import ExternalRun, Judgment

FORMAT = "jsonl"
REQUIRED = ("question_id", "model", "answer")
_TEXT: tuple[str, ...]
_TEXT = ("question", "variant", "reference_answer", "prompt", "note", "company", "ticker")
_TEXT += ("as_of", "category", "benchmark", "error", "run_id", "annotator", "label")
_KNOWN = {*REQUIRED, *_TEXT, "condition", "evidence", "tokens_in", "tokens_out", "latency_s"}
_KNOWN |= {"cost", "started_at", "scores", "status", "judgments", "extra"}
DIMENSIONS = ("accuracy", "completeness", "relevance", "clarity")


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object per line whose first one has question_id, model and answer."""
    first = next((ln for ln in head.split(b"\n") if ln.strip()), b"")
    try:
        obj = loads(first.decode("utf-8-sig", errors="replace"))
    except ValueError:
        return False
    return isinstance(obj, dict) and all(k in obj for k in REQUIRED)


def _number(obj: dict[str, Any], key: str, where: str, integer: bool = False) -> Any:
    v = obj.get(key)
    if v is None or v == "":
        return None
    try:
        num = float(v)
    except (TypeError, ValueError):
        raise UserError(where, f"{key} {v!r} is not a number", f"write {key} as a number") from None
    if integer:
        if num != int(num) or num < 0:
            raise UserError(where, f"{key} {v!r} is not a count", f"write {key} as 0, 1, 2...")
        return int(num)
    return num


def _when(v: Any, where: str, key: str = "started_at") -> datetime | None:
    if v in (None, ""):
        return None
    try:
        return datetime.fromisoformat(str(v).replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        raise UserError(where, f"{key} {v!r} is not a time", "write ISO 8601") from None


def _scores(v: Any, where: str) -> dict[str, int]:
    if v in (None, {}):
        return {}
    if not isinstance(v, dict):
        raise UserError(where, "scores must be an object", 'write {"accuracy": 4, ...}')
    out = {}
    for k, s in v.items():
        if k not in DIMENSIONS:
            raise UserError(
                where, f"score dimension {k!r} is unknown", f"use {', '.join(DIMENSIONS)}"
            )
        if isinstance(s, bool) or s not in (1, 2, 3, 4, 5):
            raise UserError(where, f"score {k} = {s!r} is not 1-5", "give a whole number 1 to 5")
        out[k] = int(s)
    return out


def _evidence(v: Any, where: str) -> list[dict[str, Any]]:
    if v in (None, []):
        return []
    if not isinstance(v, list):
        raise UserError(where, "evidence must be a list", 'write [{"text": ..., "source": ...}]')
    out = []
    for i, e in enumerate(v, start=1):
        if isinstance(e, str):
            e = {"text": e}
        if not isinstance(e, dict) or not isinstance(e.get("text"), str):
            raise UserError(where, f"evidence item {i} has no text", 'give each item a "text"')
        out.append(e)
    return out


def _judgment(j: dict[str, Any], where: str) -> Judgment:
    if not isinstance(j, dict) or not j.get("annotator"):
        raise UserError(where, "a judgment names no annotator", 'give each one an "annotator"')
    return Judgment(
        annotator=str(j["annotator"]),
        label=as_text(j.get("label")),
        scores=_scores(j.get("scores"), where),
        note=as_text(j.get("note")),
        kind=str(j.get("kind") or "human"),
        created_at=_when(j.get("created_at"), where, "created_at"),
        detail=detail if isinstance(detail := j.get("detail"), dict) else {},
    )


def parse(obj: dict[str, Any], where: str, locator: str, default_annotator: str) -> ExternalRun:
    """One line's object -> an ExternalRun (UserError naming `where` on bad fields)."""
    failed = str(obj.get("status") or "completed") != "completed"
    for k in REQUIRED:
        blank = isinstance(obj.get(k), str) and not obj[k].strip()
        if obj.get(k) is None or (blank and not (k == "answer" and failed)):
            # a run that ended in an error may have no answer; every other one has one
            raise UserError(where, f"missing {k}", f'add "{k}" to every line')
    text = {k: as_text(obj.get(k)) for k in _TEXT}
    judgments = [_judgment(j, where) for j in obj.get("judgments") or []]
    scores = _scores(obj.get("scores"), where)
    if text["label"] is not None or scores:
        judgments.insert(
            0,
            Judgment(
                annotator=text["annotator"] or default_annotator,
                label=text["label"],
                scores=scores,
                note=text["note"],
            ),
        )
    given_extra = obj.get("extra")
    extra: dict[str, Any] = given_extra if isinstance(given_extra, dict) else {}
    extra = {**extra, **{k: v for k, v in obj.items() if k not in _KNOWN}}
    status = str(obj.get("status") or "completed")
    return ExternalRun(
        question_id=str(as_text(obj["question_id"])).strip(),
        model=str(as_text(obj["model"])).strip(),
        answer=str(as_text(obj["answer"])),
        locator=locator,
        question=text["question"],
        condition_label=as_text(obj.get("condition")),
        variant=text["variant"],
        reference_answer=text["reference_answer"],
        evidence=_evidence(obj.get("evidence"), where),
        prompt=text["prompt"],
        tokens_in=_number(obj, "tokens_in", where, integer=True),
        tokens_out=_number(obj, "tokens_out", where, integer=True),
        latency_s=_number(obj, "latency_s", where),
        cost=_number(obj, "cost", where),
        started_at=_when(obj.get("started_at"), where),
        status=status,
        error=text["error"],
        judgments=judgments,
        company=text["company"],
        ticker=text["ticker"],
        as_of=text["as_of"],
        category=text["category"],
        benchmark=text["benchmark"],
        run_id=text["run_id"],
        extra=extra,
    )


def read(path: Path) -> Iterator[ExternalRun]:
    """Every line of a generic run JSONL, one at a time."""
    for n, raw in lines(path):
        warnings: list[str] = []
        where = f"{path} line {n}"
        try:
            obj = loads(decode(raw, warnings))
        except json.JSONDecodeError as exc:
            problem = f"is not valid JSON ({exc.msg} at column {exc.colno})"
            raise UserError(where, problem, "fix or remove that line") from None
        if not isinstance(obj, dict):
            raise UserError(where, "is not a JSON object", "write one {...} per line")
        run = parse(obj, where, f"line {n}", f"file:{path.name}")
        if warnings:
            run.extra.setdefault("warnings", []).extend(warnings)
        yield run
