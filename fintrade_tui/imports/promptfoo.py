"""Reader of promptfoo output files (`promptfoo eval -o out.json`, `promptfoo export eval`).

Layout: {evalId, results: {version, timestamp, ...}, config, shareableUrl, metadata}.
  results version 3 (promptfoo >= 0.9x): results.results[] is one EvaluateResult per test x
    prompt x provider: provider {id, label} -> model (label first), prompt.raw -> prompt,
    vars (else testCase.vars) -> question_id/id, question, condition, variant, ticker, company,
    as_of, category, reference_answer/expected; response.output -> answer, latencyMs ->
    latency_s, response.tokenUsage {prompt, completion} (else tokenUsage) -> tokens, cost,
    failureReason 2 (ERROR) or a response.error -> status "error" with error / response.error.
  results version 2 (older): results.table {head: {prompts: [{provider, label, raw}], vars},
    body: [{test, vars, outputs: [...]}]}; each output holds pass, score, text, prompt,
    provider, latencyMs, tokenUsage, cost, gradingResult. The text of a failed output is
    "<reason>\\n---\\n<output>", which is undone; the table is read because ratings made in the
    web viewer were saved into it.
gradingResult {pass, score, reason, componentResults} -> Judgments "promptfoo:assert" and,
for a rating made in the web viewer, "promptfoo:human" (see promptfoo_grading.py). question_id
without a var: "test-<testIdx>". config.description -> benchmark (else "promptfoo"). The
results array is streamed with ijson after one parsing pass that checks the file and finds
config and head.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from fintrade_tui.errors import UserError
from fintrade_tui.imports.common import (
    META,
    REPLACED,
    as_text,
    compact,
    open_bytes,
    run_texts,
    text_or_none,
)
from fintrade_tui.imports.json_stream import Utf8Stream, ValueBuilder
from fintrade_tui.imports.promptfoo_grading import FIX_EXPORT, judgments
from fintrade_tui.imports.record import ExternalRun

FORMAT = "promptfoo"
ERROR = 2  # ResultFailureReason.ERROR (1 = an assertion failed, 0 = none)
_QID = ("question_id", "id")
_REFERENCE = ("reference_answer", "expected", "expected_answer", "reference", "ground_truth")
_CONSUMED = {*META, *_QID, *_REFERENCE, "question"}
_EVAL_EXTRA = {"eval_id": "evalId", "results_version": "results.version"}
_EVAL_EXTRA |= {"eval_timestamp": "results.timestamp", "shareable_url": "shareableUrl"}
_EVAL_EXTRA |= {"eval_created_at": "metadata.evaluationCreatedAt"}
_EVAL_EXTRA |= {"promptfoo_version": "metadata.promptfooVersion"}
_SCALARS = {*_EVAL_EXTRA.values(), "config.description"}
# per-result fields kept in extra: ours -> promptfoo's (v3 result / v2 table output)
_KEEP = {"result_id": "id", "failure_reason": "failureReason", "score": "score"}
_KEEP |= {"named_scores": "namedScores"}


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with a top-level evalId, or results {version, results [] | table}."""
    seen: set[str] = set()
    try:
        events = ijson.parse(Utf8Stream(io.BytesIO(head), drop_bom=True), use_float=True)
        for prefix, event, value in events:
            if prefix == "" and event not in ("start_map", "map_key"):
                return False
            if prefix == "" and value == "evalId":
                return True
            if prefix == "results.version" and event == "number":
                seen.add("version")
            if (prefix, event) in (
                ("results.results", "start_array"),
                ("results.table", "start_map"),
            ):
                seen.add("rows")
            if seen == {"version", "rows"}:
                return True
    except ijson.JSONError:  # the head ends mid-document, or it is not JSON
        return False
    return False


@dataclass
class _Survey:
    """What the first pass learns: scalars, the v2 table head, the layout to stream."""

    scalars: dict[str, Any] = field(default_factory=dict)
    head: Any = None
    has_list: bool = False
    has_table: bool = False


def read(path: Path) -> Iterator[ExternalRun]:
    """Every result of a promptfoo output file, one at a time."""
    survey = _survey(path)
    version = survey.scalars.get("results.version")
    v3 = isinstance(version, int | float) and not isinstance(version, bool) and version >= 3
    v2 = survey.has_table and not v3
    if not v2 and not survey.has_list:
        raise UserError(str(path), "has no results.results list", FIX_EXPORT)
    got = survey.scalars
    extra = compact({k: got.get(src) for k, src in _EVAL_EXTRA.items()})
    benchmark = text_or_none(got.get("config.description")) or "promptfoo"
    ctx = {"benchmark": benchmark, "extra": extra}
    with open_bytes(path) as raw:
        stream = Utf8Stream(raw, drop_bom=True)
        if v2:
            head = survey.head if isinstance(survey.head, dict) else {}
            items = ijson.items(stream, "results.table.body.item", use_float=True)
            for r, row in enumerate(items):
                yield from _table_row(path, ctx, head, row, r, stream)
        else:
            items = ijson.items(stream, "results.results.item", use_float=True)
            for i, res in enumerate(items):
                yield _checked(_result(path, ctx, res, i), stream)


def _survey(path: Path) -> _Survey:
    """Parse the whole file once: a truncated or broken one fails before any run is yielded."""
    s = _Survey()
    builder: ValueBuilder | None = None
    rows = {"results.results.item": 0, "results.table.body.item": 0}
    where = str(path)
    with open_bytes(path) as raw:
        try:
            events = ijson.parse(Utf8Stream(raw, drop_bom=True), use_float=True)
            for prefix, event, value in events:
                if prefix == "" and event not in ("start_map", "map_key", "end_map"):
                    raise UserError(where, "is not a JSON object", FIX_EXPORT)
                if builder is not None:
                    if builder.add(event, value):
                        s.head, builder = builder.value, None
                    continue
                if prefix in _SCALARS and event not in ("start_map", "start_array", "map_key"):
                    s.scalars[prefix] = value
                elif prefix == "results.table.head" and event == "start_map":
                    builder = ValueBuilder()
                    builder.add(event, value)
                elif prefix == "results.results" and event == "start_array":
                    s.has_list = True
                elif prefix == "results.table" and event == "start_map":
                    s.has_table = True
                elif prefix in rows and event not in ("end_map", "end_array", "map_key"):
                    kind = "result" if prefix.startswith("results.results") else "row"
                    where, rows[prefix] = f"{path} {kind} {rows[prefix]}", rows[prefix] + 1
                elif prefix == "results" and event == "end_map":
                    where = str(path)
        except ijson.IncompleteJSONError as exc:
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else "parse error"
            problem = (
                "ends early (truncated)" if "premature EOF" in text else f"is not JSON: {text}"
            )
            raise UserError(where, problem, FIX_EXPORT) from None
    if "results.version" not in s.scalars:
        problem = "is not a promptfoo output (no results.version)"
        raise UserError(str(path), problem, "import it with the reader of its tool")
    return s


def _result(path: Path, ctx: dict[str, Any], res: Any, i: int) -> ExternalRun:
    """One results.results[] entry (v3; the v2 list has this shape but no ratings)."""
    where = f"{path} result {i}"
    if not isinstance(res, dict):
        raise UserError(where, "is not an object", FIX_EXPORT)
    test = _dict(res.get("testCase"), where, "testCase")
    vars_ = res["vars"] if res.get("vars") is not None else test.get("vars")
    response = _dict(res.get("response"), where, "response")
    usage = response.get("tokenUsage") or res.get("tokenUsage")
    src = {**res, "cost": res["cost"] if res.get("cost") is not None else response.get("cost")}
    run = _base(where, f"result {i}", ctx, src, test, vars_, response.get("output"), usage)
    failure = res.get("failureReason")
    if failure == ERROR or (failure is None and response.get("error") is not None):
        error = text_or_none(res.get("error")) or text_or_none(response.get("error"))
        run.status, run.error = "error", error or "provider error"
    prompt = res["prompt"] if isinstance(res.get("prompt"), dict) else {}
    flags = compact({k: response.get(k) for k in ("cached", "isRefusal", "finishReason")})
    run.extra.update(_kept(res, success=res.get("success"), prompt_id=res.get("promptId")))
    more = {"prompt_idx": res.get("promptIdx"), "prompt_label": prompt.get("label")}
    run.extra.update(compact({**more, "response": flags}))
    return run


def _table_row(
    path: Path, ctx: dict[str, Any], head: dict[str, Any], row: Any, r: int, stream: Utf8Stream
) -> Iterator[ExternalRun]:
    """One results.table.body[] row of a v2 file: a run per output column."""
    where = f"{path} row {r}"
    if not isinstance(row, dict) or not isinstance(row.get("outputs"), list):
        raise UserError(where, "is not a table row with outputs", FIX_EXPORT)
    test = _dict(row.get("test"), where, "test")
    prompts = head["prompts"] if isinstance(head.get("prompts"), list) else []
    vars_, names = test.get("vars"), head.get("vars")
    if vars_ is None and isinstance(names, list) and isinstance(row.get("vars"), list):
        vars_ = dict(zip(names, row["vars"], strict=False))
    for c, out in enumerate(row["outputs"]):
        here = f"{where} output {c}"
        if not isinstance(out, dict):
            raise UserError(here, "is not an object", FIX_EXPORT)
        col = prompts[c] if c < len(prompts) and isinstance(prompts[c], dict) else {}
        grading, failure = out.get("gradingResult"), out.get("failureReason")
        failed = failure == ERROR or (failure is None and not out.get("pass") and not grading)
        response = _dict(out.get("response"), here, "response")
        answer, error = _untext(out, grading, failed, response)
        src = {
            **out,
            "provider": out.get("provider") or col.get("provider"),
            "testIdx": row.get("testIdx", r),
        }
        usage = out.get("tokenUsage") or response.get("tokenUsage")
        run = _base(here, f"row {r} output {c}", ctx, src, test, vars_, answer, usage)
        if failed:
            run.status, run.error = "error", error or "provider error"
        run.extra.update(_kept(out, success=out.get("pass"), prompt_id=col.get("id")))
        more = {"prompt_label": col.get("label"), "prompt_template": col.get("raw")}
        run.extra.update(compact({"prompt_idx": c, **more}))
        yield _checked(run, stream)


def _untext(
    out: dict[str, Any], grading: Any, failed: bool, response: dict[str, Any]
) -> tuple[Any, str | None]:
    """(answer, error) of a v2 table output, whose text promptfoo prefixed with the reason."""
    if "output" in response:
        error = text_or_none(out.get("error")) or text_or_none(response.get("error"))
        return response["output"], error
    text = out.get("text")
    if not isinstance(text, str) or out.get("pass"):
        return text, None
    head, sep, tail = text.partition("\n---\n")
    if failed:  # "<error>\n---\n<error>": there is no answer
        return (tail if sep and tail != head else ""), text_or_none(out.get("error")) or head
    reasons = [out.get("error")]
    if isinstance(grading, dict):
        reasons.append(grading.get("reason"))
        reasons += [
            c.get("reason") for c in grading.get("componentResults") or [] if isinstance(c, dict)
        ]
    if sep and head in [x for x in reasons if isinstance(x, str)]:
        return tail, None
    return text, None


def _base(
    where: str,
    locator: str,
    ctx: dict[str, Any],
    src: dict[str, Any],
    test: dict[str, Any],
    vars_: Any,
    output: Any,
    usage: Any,
) -> ExternalRun:
    """The fields both layouts share; `src` is the result (v3) or table output (v2)."""
    ids = src.get("provider")
    ids = ids if isinstance(ids, dict) else {"label": ids}
    model = text_or_none(ids.get("label")) or text_or_none(ids.get("id"))
    if not model:
        raise UserError(where, "names no provider (provider.id / label)", FIX_EXPORT)
    vars_ = _dict(vars_, where, "vars")
    look = [vars_, _dict(test.get("metadata"), where, "test metadata")]

    def pick(*keys: str) -> str | None:
        return next((as_text(d[k]) for d in look for k in keys if d.get(k) not in (None, "")), None)

    test_idx = src.get("testIdx")
    qid = pick(*_QID) or (f"test-{test_idx}" if test_idx is not None else None)
    if qid is None:
        raise UserError(where, "has no question_id / id var and no testIdx", FIX_EXPORT)
    usage = _dict(usage, where, "tokenUsage")
    latency = _num(src.get("latencyMs"), where, "latencyMs")
    prompt = src.get("prompt")
    run = ExternalRun(
        question_id=qid.strip(),
        model=model,
        answer=as_text(output) or "",
        locator=locator,
        question=pick("question"),
        condition_label=pick("condition"),
        variant=pick("variant"),
        reference_answer=pick(*_REFERENCE),
        prompt=text_or_none(prompt.get("raw") if isinstance(prompt, dict) else prompt),
        tokens_in=_num(usage.get("prompt"), where, "tokenUsage.prompt", count=True),
        tokens_out=_num(usage.get("completion"), where, "tokenUsage.completion", count=True),
        latency_s=None if latency is None else latency / 1000.0,
        cost=_num(src.get("cost"), where, "cost"),
        judgments=judgments(src.get("gradingResult"), where),
        company=pick("company"),
        ticker=pick("ticker"),
        as_of=pick("as_of"),
        category=pick("category"),
        benchmark=ctx["benchmark"],
        extra=dict(ctx["extra"]),
    )
    other_vars = {k: v for k, v in vars_.items() if k not in _CONSUMED}
    more = {"provider_id": ids.get("id"), "test_idx": test_idx, "vars": other_vars}
    run.extra.update(compact(more))
    return run


# --- small helpers --------------------------------------------------------------------------


def _checked(run: ExternalRun, stream: Utf8Stream) -> ExternalRun:
    """Note replaced bytes on the runs whose text shows them."""
    if stream.bad and any(t and "\ufffd" in t for t in run_texts(run)):
        run.extra.setdefault("warnings", []).append(REPLACED)
    return run


def _dict(v: Any, where: str, name: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise UserError(where, f"{name} is not an object", FIX_EXPORT)
    return v


def _kept(res: dict[str, Any], **more: Any) -> dict[str, Any]:
    """The result's ids and scores for extra; metadata without promptfoo's empty bookkeeping."""
    meta = res.get("metadata")
    if isinstance(meta, dict):
        meta = {k: x for k, x in meta.items() if not (k.startswith("_promptfoo") and not x)}
    return compact({**{k: res.get(src) for k, src in _KEEP.items()}, **more, "metadata": meta})


def _num(v: Any, where: str, name: str, count: bool = False) -> Any:
    """A number of the file (None stays None); a count must be a whole number >= 0."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or (count and (v < 0 or v % 1)):
        what = "a count" if count and isinstance(v, int | float) else "a number"
        raise UserError(where, f"{name} {v!r} is not {what}", FIX_EXPORT)
    return int(v) if count else float(v)
