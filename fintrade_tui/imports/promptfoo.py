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
gradingResult {pass, score, reason, componentResults} -> Judgment "promptfoo:assert"; a
componentResults entry with assertion.type "human" (a rating from the web viewer: pass, score,
comment) -> Judgment "promptfoo:human", the assertions' verdict then being recomputed from the
other components the way the viewer does when a rating is cleared. question_id without a var:
"test-<testIdx>". config.description -> benchmark (else "promptfoo"). The results array is
streamed with ijson after one parsing pass that checks the file and finds config and head.
"""

from __future__ import annotations

import codecs
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ijson

from fintrade_tui.errors import UserError
from fintrade_tui.imports.record import CORRECT, INCORRECT, ExternalRun, Judgment

FORMAT = "promptfoo"
HUMAN = "human"  # promptfoo's assertion type for a manual rating
ERROR = 2  # ResultFailureReason.ERROR (1 = an assertion failed, 0 = none)
_META = ("condition", "variant", "ticker", "company", "as_of", "category")
_QID = ("question_id", "id")
_REFERENCE = ("reference_answer", "expected", "expected_answer", "reference", "ground_truth")
_CONSUMED = {*_META, *_QID, *_REFERENCE, "question"}
# assertion types whose grader is a model: their verdict is an LLM's, not a rule's
_MODEL_GRADED = {"llm-rubric", "factuality", "g-eval", "answer-relevance", "select-best"}
_MODEL_GRADED |= {"search-rubric", "pi", "conversation-relevance", "model-graded-closedqa"}
_MODEL_GRADED |= {"model-graded-factuality", "context-faithfulness", "context-recall"}
_MODEL_GRADED |= {"context-relevance"}
_EVAL_EXTRA = {"eval_id": "evalId", "results_version": "results.version"}
_EVAL_EXTRA |= {"eval_timestamp": "results.timestamp", "shareable_url": "shareableUrl"}
_EVAL_EXTRA |= {"eval_created_at": "metadata.evaluationCreatedAt"}
_EVAL_EXTRA |= {"promptfoo_version": "metadata.promptfooVersion"}
_SCALARS = {*_EVAL_EXTRA.values(), "config.description"}
# per-result fields kept in extra: ours -> promptfoo's (v3 result / v2 table output)
_KEEP = {"result_id": "id", "failure_reason": "failureReason", "score": "score"}
_KEEP |= {"named_scores": "namedScores"}
_FIX_EXPORT = "write it again with `promptfoo eval -o out.json` or `promptfoo export eval <id>`"


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with a top-level evalId, or results {version, results [] | table}."""
    seen: set[str] = set()
    try:
        for prefix, event, value in ijson.parse(_Utf8Stream(io.BytesIO(head)), use_float=True):
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
        raise UserError(str(path), "has no results.results list", _FIX_EXPORT)
    got = survey.scalars
    extra = _compact({k: got.get(src) for k, src in _EVAL_EXTRA.items()})
    ctx = {"benchmark": _str(got.get("config.description")) or "promptfoo", "extra": extra}
    with _open(path) as raw:
        stream = _Utf8Stream(raw)
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
    builder: Any = None
    depth, rows = 0, {"results.results.item": 0, "results.table.body.item": 0}
    where = str(path)
    with _open(path) as raw:
        try:
            events = ijson.parse(_Utf8Stream(raw), use_float=True)
            for prefix, event, value in events:
                if prefix == "" and event not in ("start_map", "map_key", "end_map"):
                    raise UserError(where, "is not a JSON object", _FIX_EXPORT)
                if builder is not None:
                    builder.event(event, value)
                    depth += event in ("start_map", "start_array")
                    depth -= event in ("end_map", "end_array")
                    if depth == 0:
                        s.head, builder = builder.value, None
                    continue
                if prefix in _SCALARS and event not in ("start_map", "start_array", "map_key"):
                    s.scalars[prefix] = value
                elif prefix == "results.table.head" and event == "start_map":
                    builder, depth = ijson.ObjectBuilder(), 1
                    builder.event(event, value)
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
            raise UserError(where, problem, _FIX_EXPORT) from None
    if "results.version" not in s.scalars:
        problem = "is not a promptfoo output (no results.version)"
        raise UserError(str(path), problem, "import it with the reader of its tool")
    return s


def _result(path: Path, ctx: dict[str, Any], res: Any, i: int) -> ExternalRun:
    """One results.results[] entry (v3; the v2 list has this shape but no ratings)."""
    where = f"{path} result {i}"
    if not isinstance(res, dict):
        raise UserError(where, "is not an object", _FIX_EXPORT)
    test = _dict(res.get("testCase"), where, "testCase")
    vars_ = res["vars"] if res.get("vars") is not None else test.get("vars")
    response = _dict(res.get("response"), where, "response")
    usage = response.get("tokenUsage") or res.get("tokenUsage")
    src = {**res, "cost": res["cost"] if res.get("cost") is not None else response.get("cost")}
    run = _base(where, f"result {i}", ctx, src, test, vars_, response.get("output"), usage)
    failure = res.get("failureReason")
    if failure == ERROR or (failure is None and response.get("error") is not None):
        error = _str(res.get("error")) or _str(response.get("error"))
        run.status, run.error = "error", error or "provider error"
    prompt = res["prompt"] if isinstance(res.get("prompt"), dict) else {}
    flags = _compact({k: response.get(k) for k in ("cached", "isRefusal", "finishReason")})
    run.extra.update(_kept(res, success=res.get("success"), prompt_id=res.get("promptId")))
    more = {"prompt_idx": res.get("promptIdx"), "prompt_label": prompt.get("label")}
    run.extra.update(_compact({**more, "response": flags}))
    return run


def _table_row(
    path: Path, ctx: dict[str, Any], head: dict[str, Any], row: Any, r: int, stream: _Utf8Stream
) -> Iterator[ExternalRun]:
    """One results.table.body[] row of a v2 file: a run per output column."""
    where = f"{path} row {r}"
    if not isinstance(row, dict) or not isinstance(row.get("outputs"), list):
        raise UserError(where, "is not a table row with outputs", _FIX_EXPORT)
    test = _dict(row.get("test"), where, "test")
    prompts = head["prompts"] if isinstance(head.get("prompts"), list) else []
    vars_, names = test.get("vars"), head.get("vars")
    if vars_ is None and isinstance(names, list) and isinstance(row.get("vars"), list):
        vars_ = dict(zip(names, row["vars"], strict=False))
    for c, out in enumerate(row["outputs"]):
        here = f"{where} output {c}"
        if not isinstance(out, dict):
            raise UserError(here, "is not an object", _FIX_EXPORT)
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
        run.extra.update(_compact({"prompt_idx": c, **more}))
        yield _checked(run, stream)


def _untext(
    out: dict[str, Any], grading: Any, failed: bool, response: dict[str, Any]
) -> tuple[Any, str | None]:
    """(answer, error) of a v2 table output, whose text promptfoo prefixed with the reason."""
    if "output" in response:
        return response["output"], _str(out.get("error")) or _str(response.get("error"))
    text = out.get("text")
    if not isinstance(text, str) or out.get("pass"):
        return text, None
    head, sep, tail = text.partition("\n---\n")
    if failed:  # "<error>\n---\n<error>": there is no answer
        return (tail if sep and tail != head else ""), _str(out.get("error")) or head
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
    model = _str(ids.get("label")) or _str(ids.get("id"))
    if not model:
        raise UserError(where, "names no provider (provider.id / label)", _FIX_EXPORT)
    vars_ = _dict(vars_, where, "vars")
    look = [vars_, _dict(test.get("metadata"), where, "test metadata")]

    def pick(*keys: str) -> str | None:
        return next((_text(d[k]) for d in look for k in keys if d.get(k) not in (None, "")), None)

    test_idx = src.get("testIdx")
    qid = pick(*_QID) or (f"test-{test_idx}" if test_idx is not None else None)
    if qid is None:
        raise UserError(where, "has no question_id / id var and no testIdx", _FIX_EXPORT)
    usage = _dict(usage, where, "tokenUsage")
    latency = _num(src.get("latencyMs"), where, "latencyMs")
    prompt = src.get("prompt")
    run = ExternalRun(
        question_id=qid.strip(),
        model=model,
        answer="" if output is None else _text(output),
        locator=locator,
        question=pick("question"),
        condition_label=pick("condition"),
        variant=pick("variant"),
        reference_answer=pick(*_REFERENCE),
        prompt=_str(prompt.get("raw") if isinstance(prompt, dict) else prompt),
        tokens_in=_num(usage.get("prompt"), where, "tokenUsage.prompt", count=True),
        tokens_out=_num(usage.get("completion"), where, "tokenUsage.completion", count=True),
        latency_s=None if latency is None else latency / 1000.0,
        cost=_num(src.get("cost"), where, "cost"),
        judgments=_judgments(src.get("gradingResult"), where),
        company=pick("company"),
        ticker=pick("ticker"),
        as_of=pick("as_of"),
        category=pick("category"),
        benchmark=ctx["benchmark"],
        extra=dict(ctx["extra"]),
    )
    other_vars = {k: v for k, v in vars_.items() if k not in _CONSUMED}
    more = {"provider_id": ids.get("id"), "test_idx": test_idx, "vars": other_vars}
    run.extra.update(_compact(more))
    return run


def _judgments(grading: Any, where: str) -> list[Judgment]:
    """promptfoo:assert from the assertions, promptfoo:human from a web-viewer rating."""
    if grading is None:
        return []
    if not isinstance(grading, dict):
        raise UserError(where, "gradingResult is not an object", _FIX_EXPORT)
    parts = grading.get("componentResults") or []
    if not isinstance(parts, list):
        raise UserError(where, "gradingResult.componentResults is not a list", _FIX_EXPORT)
    humans = [
        c for c in parts if isinstance(c, dict) and (c.get("assertion") or {}).get("type") == HUMAN
    ]
    rules = [c for c in parts if isinstance(c, dict) and c not in humans]
    out = []
    detail = _compact({"componentResults": rules, "namedScores": grading.get("namedScores")})
    if not humans:
        out.append(_verdict("assert", grading, grading.get("reason"), detail, rules))
    elif rules:  # the rating overrides the top level: the rules' own verdict, as the viewer
        scores = [c["score"] for c in rules if isinstance(c.get("score"), int | float)]
        own = {"pass": all(c.get("pass") for c in rules)}
        own["score"] = sum(scores) / len(scores) if scores else None
        failed = [str(c["reason"]) for c in rules if not c.get("pass") and c.get("reason")]
        note = "; ".join(failed) or "All assertions passed"
        detail |= {"overridden_by_human": True, "file_pass": grading.get("pass")}
        detail["file_score"] = grading.get("score")
        out.append(_verdict("assert", own, note, detail, rules))
    for h in humans:
        extra = _compact({"reason": h.get("reason")})
        out.append(_verdict(HUMAN, h, _str(h.get("comment")) or h.get("reason"), extra, []))
    if not humans and _str(grading.get("comment")):  # a comment without a rating
        comment = _str(grading.get("comment"))
        out.append(Judgment(f"promptfoo:{HUMAN}", note=comment, detail={"comment_only": True}))
    return out


def _verdict(
    name: str, g: dict[str, Any], note: Any, detail: dict[str, Any], rules: list[dict[str, Any]]
) -> Judgment:
    passed = g.get("pass")
    label = CORRECT if passed is True else INCORRECT if passed is False else None
    asserts = [c.get("assertion") for c in [g, *rules]]
    types = {str(a.get("type", "")).removeprefix("not-") for a in asserts if isinstance(a, dict)}
    graded = bool(types & _MODEL_GRADED)
    return Judgment(
        annotator=f"promptfoo:{name}",
        label=label,
        value=g.get("score"),
        note=_str(note),
        kind="llm" if graded else "human",
        detail=detail,
    )


# --- small helpers --------------------------------------------------------------------------


class _Utf8Stream:
    """Bytes re-encoded as valid UTF-8 (a BOM dropped); `bad` once a byte was replaced."""

    def __init__(self, raw: Any) -> None:
        self.raw, self.bad, self._tail = raw, False, b""
        self._dec = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._marks_in = self._marks_out = 0  # U+FFFD in the input vs in the output

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson probes the stream type with read(0): do not flush the decoder
            return b""
        while True:
            chunk = self.raw.read(size)
            text = self._dec.decode(chunk, final=not chunk)
            self._marks_in += (self._tail + chunk).count(b"\xef\xbf\xbd")
            self._tail = chunk[-2:]
            self._marks_out += text.count("\ufffd")
            self.bad = self.bad or self._marks_out > self._marks_in
            if text or not chunk:  # a split character alone is not the end of the file
                return text.encode("utf-8")


def _open(path: Path) -> Any:
    try:
        return path.open("rb")
    except OSError as exc:
        raise UserError(str(path), f"cannot be read ({exc.strerror})", "check the path") from None


def _checked(run: ExternalRun, stream: _Utf8Stream) -> ExternalRun:
    """Note replaced bytes on the runs whose text shows them."""
    texts = [run.answer, run.question, run.prompt, run.reference_answer, run.error]
    texts += [j.note for j in run.judgments]
    if stream.bad and any(t and "\ufffd" in t for t in texts):
        run.extra.setdefault("warnings", []).append("non-UTF-8 bytes replaced with U+FFFD")
    return run


def _dict(v: Any, where: str, name: str) -> dict[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise UserError(where, f"{name} is not an object", _FIX_EXPORT)
    return v


def _kept(res: dict[str, Any], **more: Any) -> dict[str, Any]:
    """The result's ids and scores for extra; metadata without promptfoo's empty bookkeeping."""
    meta = res.get("metadata")
    if isinstance(meta, dict):
        meta = {k: x for k, x in meta.items() if not (k.startswith("_promptfoo") and not x)}
    return _compact({**{k: res.get(src) for k, src in _KEEP.items()}, **more, "metadata": meta})


def _text(v: Any) -> str:
    """Text as given; numbers as str(), lists, objects and booleans as their JSON."""
    if isinstance(v, str) or (isinstance(v, int | float) and not isinstance(v, bool)):
        return str(v)
    return json.dumps(v, ensure_ascii=False)


def _str(v: Any) -> str | None:
    return None if v in (None, "") else _text(v)


def _num(v: Any, where: str, name: str, count: bool = False) -> Any:
    """A number of the file (None stays None); a count must be a whole number >= 0."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or (count and (v < 0 or v % 1)):
        what = "a count" if count and isinstance(v, int | float) else "a number"
        raise UserError(where, f"{name} {v!r} is not {what}", _FIX_EXPORT)
    return int(v) if count else float(v)


def _compact(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in (None, "", [], {})}
