"""inspect sample room: one inspect_ai sample, with what its log's header says, as an
ExternalRun (inspect_log.py finds the header and the samples in a .eval or .json).

Header: eval.task -> benchmark, eval.model -> model, eval ids, task_args and
model_generate_config + plan.config -> extra. Sample: id/epoch -> locator, metadata
question_id (else id) -> question_id, input -> prompt and question (last user message),
output.completion (else the last assistant message) -> answer, target -> reference_answer,
scores -> Judgment "inspect:<scorer>", model_usage -> tokens/cost, total_time -> latency_s,
started_at, error.message -> status "error", metadata condition/ticker/... -> fields + extra.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.imports.common import (
    META,
    compact,
    int_or_none,
    label_of,
    number_or_none,
    run_texts,
)
from fintrade_tui.imports.record import ExternalRun, Judgment

_SPEC_KEYS = ("run_id", "eval_set_id", "task_id", "created")
_PLACEHOLDER = "88F74D2C"  # inspect's key for the single `score` of pre-`scores` logs
_REPLACED = "non-UTF-8 bytes were replaced with U+FFFD"
_INCOMPLETE = "the log is incomplete: export it again with inspect"


def log_context(where: str, header: dict) -> dict[str, Any]:
    """What every sample of the log shares: task, model, first scorer, extra."""
    spec = header.get("eval")
    if not isinstance(spec, dict) or not spec.get("task") or not spec.get("model"):
        raise UserError(where, "the header has no eval.task or eval.model", _INCOMPLETE)
    plan = header.get("plan") or {}
    config = {**(spec.get("model_generate_config") or {}), **(plan.get("config") or {})}
    scorers = [s.get("scorer") for s in (header.get("results") or {}).get("scores") or []]
    scorers += [s.get("name") for s in spec.get("scorers") or []]
    extra = {f"eval_{k}" if k in ("run_id", "created") else k: spec.get(k) for k in _SPEC_KEYS}
    extra |= {
        "eval_id": spec.get("eval_id"),
        "task_version": spec.get("task_version") or None,  # 0 is inspect's default
        "log_status": header.get("status"),
        "log_version": header.get("version"),
        "dataset": (spec.get("dataset") or {}).get("name"),
        "inspect_version": (spec.get("packages") or {}).get("inspect_ai"),
        "task_args": spec.get("task_args"),
        "generate_config": compact(config),
        "solvers": [s.get("solver") for s in plan.get("steps") or [] if isinstance(s, dict)],
    }
    first = next((s for s in scorers if s), "score")
    task, model = str(spec["task"]), str(spec["model"])
    return {"task": task, "model": model, "first_scorer": first, "extra": compact(extra)}


def sample_run(ctx: dict[str, Any], s: dict, where: str, n: int, bad_utf8: bool) -> ExternalRun:
    """One sample (a dict as inspect logs it) and epoch; `n` counts samples from 1."""
    given_output = s.get("output")
    output: dict[str, Any] = given_output if isinstance(given_output, dict) else {}
    if not output and not s.get("messages") and not s.get("error"):
        raise UserError(where, "the sample has no output, messages or error", _INCOMPLETE)
    att = s.get("attachments") or {}
    warnings: list[str] = []
    answer = _answer(s, output, att, warnings)
    inp = s.get("input")
    question, prompt = _question(inp, att)
    given_meta = s.get("metadata")
    meta: dict[str, Any] = given_meta if isinstance(given_meta, dict) else {}
    sid, epoch = s.get("id"), int_or_none(s.get("epoch")) or 1
    qid = meta.get("question_id") or meta.get("id") or sid or f"{ctx['task']}#{n}"
    target = s.get("target")
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    usage_map = s.get("model_usage") or {}
    usage = usage_map.get(ctx["model"]) or output.get("usage") or {}
    error = s.get("error")
    choices = output.get("choices") or [{}]
    extra = {k: s.get(k) for k in ("completed_at", "total_time", "working_time", "limit")}
    extra |= {
        "sample_id": sid,
        "epoch": epoch,
        "sample_uuid": s.get("uuid"),
        "stop_reason": choices[0].get("stop_reason") if isinstance(choices[0], dict) else None,
        "output_model": output.get("model") if output.get("model") != ctx["model"] else None,
        "model_usage": usage_map if len(usage_map) > 1 else None,
        "error_retries": len(s.get("error_retries") or []) or None,
        "choices": s.get("choices"),
        "metadata": {k: v for k, v in meta.items() if k not in (*META, "question_id", "id")},
    }
    run = ExternalRun(
        question_id=str(qid),
        model=ctx["model"],
        answer=answer,
        locator=f"sample {sid if sid is not None else '#' + str(n)} epoch {epoch}",
        attempt=epoch,
        question=question,
        reference_answer=_text(target, att) if target not in (None, "", []) else None,
        prompt=prompt,
        tokens_in=_tokens_in(usage),
        tokens_out=int_or_none(usage.get("output_tokens")),
        latency_s=number_or_none(s.get("total_time")) or number_or_none(s.get("working_time")),
        cost=number_or_none(usage.get("total_cost")),
        started_at=_when(s.get("started_at"), warnings),
        status="error" if error else "completed",
        error=(str(error.get("message")) if isinstance(error, dict) else str(error))
        if error
        else None,
        judgments=_judgments(ctx, s),
        benchmark=ctx["task"],
        extra={**ctx["extra"], **compact(extra)},
        # META's keys, "condition" as condition_label
        condition_label=_str(meta.get("condition")),
        variant=_str(meta.get("variant")),
        ticker=_str(meta.get("ticker")),
        company=_str(meta.get("company")),
        as_of=_str(meta.get("as_of")),
        category=_str(meta.get("category")),
    )
    if bad_utf8 and _has_replacement(run):
        warnings.append(_REPLACED)
    if warnings:
        run.extra["warnings"] = warnings
    return run


def _answer(s: dict, output: dict, att: dict, warnings: list[str]) -> str:
    completion = output.get("completion")
    if completion not in (None, "") and not isinstance(completion, str):
        warnings.append(f"output.completion is a {type(completion).__name__}; kept as text")
        return _text(completion, att)
    if completion:
        return _text(completion, att)
    for msg in reversed(s.get("messages") or []):  # older logs may leave completion empty
        if isinstance(msg, dict) and msg.get("role") == "assistant":
            return _text(msg.get("content"), att)
    return ""


def _question(inp: Any, att: dict) -> tuple[str | None, str | None]:
    if not isinstance(inp, list):
        text = _text(inp, att) if inp is not None else None
        return text, text
    msgs = [m for m in inp if isinstance(m, dict)]
    users = [m for m in msgs if m.get("role") == "user"]
    question = _text(users[-1].get("content"), att) if users else None
    chat = [{"role": m.get("role"), "content": _text(m.get("content"), att)} for m in msgs]
    return question, json.dumps(chat, ensure_ascii=False)


def _judgments(ctx: dict[str, Any], s: dict) -> list[Judgment]:
    scores = s.get("scores")
    if not scores and s.get("score") is not None:  # logs older than multiple scorers
        scores = {ctx["first_scorer"]: s["score"]}
    out = []
    for name, sc in (scores or {}).items():
        name = ctx["first_scorer"] if name == _PLACEHOLDER else name
        sc = sc if isinstance(sc, dict) else {"value": sc}
        value = sc.get("value")
        detail = {k: sc.get(k) for k in ("answer", "metadata", "reason", "history")}
        if isinstance(value, float) and math.isnan(value):  # inspect's "unscored" marker
            value, detail["unscored"] = None, True
        kind = "llm" if str(name).startswith("model_graded") else "human"  # inspect's judges
        note, detail = sc.get("explanation"), compact(detail)
        out.append(
            Judgment(
                f"inspect:{name}", label_of(value), value=value, note=note, kind=kind, detail=detail
            )
        )
    return out


def _text(value: Any, att: dict) -> str:
    """Message content (a string or a list of content parts) or any JSON value as text."""
    if isinstance(value, str):
        if value.startswith("attachment://"):  # inspect stores long/duplicate text once
            return att.get(value.removeprefix("attachment://"), value)
        return value
    if isinstance(value, list) and all(isinstance(p, dict) and "type" in p for p in value):
        return "\n".join(_text(p.get("text", ""), att) for p in value if p["type"] == "text")
    if isinstance(value, int | float | bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _tokens_in(usage: dict) -> int | None:
    base = int_or_none(usage.get("input_tokens"))
    if base is None:
        return None
    # inspect's input_tokens excludes cached tokens; the true input adds both cache counts
    return base + sum(
        int_or_none(usage.get(f"input_tokens_cache_{k}")) or 0 for k in ("read", "write")
    )


def _when(value: Any, warnings: list[str]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        warnings.append(f"started_at {value!r} is not an ISO time; left out")
        return None


def _has_replacement(run: ExternalRun) -> bool:
    texts = run_texts(run) + [json.dumps(run.extra.get("metadata"))]
    texts += [json.dumps(j.detail) for j in run.judgments]
    return any(t and ("\ufffd" in t or "\\ufffd" in t) for t in texts)


def _str(value: Any) -> str | None:
    """A metadata value as str() (inspect's metadata is free-form); an empty one as None."""
    return None if value in (None, "") else str(value)
