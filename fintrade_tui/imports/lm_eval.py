"""lm-evaluation-harness reader: the per-sample logs `lm_eval --log_samples --output_path`
writes (samples_<task>_<date>.jsonl, streamed line by line) and the results_<date>.json beside
them, which names the model and holds the task's config.

Per samples line: doc_id, doc (question text from the task's doc_to_text field when that is a
plain field name, else doc.question/query/input; question_id from doc.question_id/id;
condition/variant/ticker/company/as_of/category), target -> reference_answer,
filtered_resps (or resps) -> answer (generate_until: the first response; multiple_choice: the
choice with the highest loglikelihood), arguments (gen_args_0.arg_0 or the older [[ctx, ...]])
-> prompt, filter, the metric keys named in "metrics" (exact_match, acc, ...) -> Judgments
"lm-eval:<metric>", doc_hash/prompt_hash/target_hash -> extra. The results file's model and task
config come from lm_eval_results.py. Reading a results_*.json imports every samples file of the
tasks it names that lies in its folder.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.imports.common import META, as_text, decode, label_of, lines, loads, open_bytes
from fintrade_tui.imports.lm_eval_results import (
    FIX_RUN,
    TaskContext,
    find_context,
    load_json,
    samples_files,
    split_name,
    task_context,
)
from fintrade_tui.imports.record import ExternalRun, Judgment

FORMAT = "lm-eval"
HEAD = 64 * 1024
# a first line longer than the head (a doc with a long filing excerpt) is judged by its start;
# lm-eval always writes doc_id then doc first
_SAMPLE_START = re.compile(rb'^\s*\{\s*"doc_id"\s*:\s*[^,]{1,40},\s*"doc"\s*:\s*\{')
_RESULTS_START = re.compile(rb'^\s*\{\s*"results"\s*:\s*\{')
_RESULTS_MARKS = (b'"configs"', b'"group_subtasks"', b'"lm_eval_version"')
_NOT_METRICS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter"}
_NOT_METRICS |= {"metrics", "doc_hash", "prompt_hash", "target_hash"}
_HASHES = ("doc_hash", "prompt_hash", "target_hash")
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T]00:00:00$")


def _is_results(head: bytes) -> bool:
    if not _RESULTS_START.match(head):
        return False
    try:
        doc = loads(head.decode("utf-8", errors="replace"))
    except ValueError:  # longer than the head: the first key and lm-eval's own keys decide
        return len(head) >= HEAD and any(m in head for m in _RESULTS_MARKS)
    return isinstance(doc, dict) and isinstance(doc.get("results"), dict) and "configs" in doc


def sniff(path: Path, head: bytes) -> bool:
    """A JSON-lines file whose first object has doc_id, doc and resps/filtered_resps, or an
    lm-eval results_*.json (an object whose first key is "results", with "configs")."""
    first = next((ln for ln in head.split(b"\n") if ln.strip()), b"")
    try:
        obj = loads(first.decode("utf-8", errors="replace"))
    except ValueError:
        whole_line = b"\n" in head.lstrip() or len(head) < HEAD
        return (not whole_line and bool(_SAMPLE_START.match(head))) or _is_results(head)
    if isinstance(obj, dict) and "doc_id" in obj and isinstance(obj.get("doc"), dict):
        return "resps" in obj or "filtered_resps" in obj
    return _is_results(head)


def _arguments(obj: dict[str, Any], where: str) -> list[list[Any]]:
    """One argument list per request: {"gen_args_0": {"arg_0": ctx, ...}} (0.4.3 on) or the
    older [[ctx, gen_kwargs], ...]."""
    args = obj.get("arguments")
    if args is None:
        return []
    if isinstance(args, dict):
        return [list(a.values()) if isinstance(a, dict) else [a] for a in args.values()]
    if isinstance(args, list):
        return [list(a) if isinstance(a, list) else [a] for a in args]
    raise UserError(where, "arguments is neither an object nor a list", FIX_RUN)


def _responses(obj: dict[str, Any], where: str) -> list[Any]:
    """One filtered response per request; raw resps hold one list per request instead."""
    if isinstance(obj.get("filtered_resps"), list):
        resps = obj["filtered_resps"]
    elif isinstance(obj.get("resps"), list):
        resps = [r[0] if isinstance(r, list) and len(r) == 1 else r for r in obj["resps"]]
    else:
        raise UserError(where, "has no resps or filtered_resps list", FIX_RUN)
    if not resps:
        raise UserError(where, "has an empty filtered_resps list", FIX_RUN)
    return resps


def _loglikelihood(resp: Any, where: str, i: int) -> float:
    value = resp[0] if isinstance(resp, list) and resp else resp
    try:
        ll = float(value)
    except (TypeError, ValueError):
        raise UserError(where, f"choice {i} has no loglikelihood ({value!r})", FIX_RUN) from None
    return ll if not math.isnan(ll) else -math.inf


def _choices(doc: dict[str, Any], ctx: TaskContext, args: list[list[Any]], n: int) -> list[str]:
    """The choice texts: the doc's list named by doc_to_choice, else the continuations the
    harness scored (minus the target delimiter it put in front of each)."""
    listed = doc.get(str(ctx.task_config.get("doc_to_choice")))
    if isinstance(listed, list) and len(listed) == n:
        return [str(as_text(c)) for c in listed]
    delim = str(ctx.task_config.get("target_delimiter", " "))
    conts = [str(a[1]) for a in args if len(a) > 1]
    if len(conts) != n:
        return []
    return [c[len(delim) :] if delim and c.startswith(delim) else c for c in conts]


def _output_type(ctx: TaskContext, args: list[list[Any]], resps: list[Any]) -> str:
    if isinstance(ctx.task_config.get("output_type"), str):
        return ctx.task_config["output_type"]
    pairs = all(isinstance(r, list) and len(r) == 2 for r in resps)
    if pairs and len(resps) > 1 and len(args) == len(resps):
        return "multiple_choice"
    return "loglikelihood" if pairs else "generate_until"


def _judgments(obj: dict[str, Any], warnings: list[str]) -> list[Judgment]:
    names = obj.get("metrics")
    if not isinstance(names, list):  # older logs have no "metrics": every other key is one
        names = [k for k in obj if k not in _NOT_METRICS]
    out = []
    for name in names:
        if name not in obj:
            warnings.append(f"metric {name!r} is listed but has no value")
            continue
        value = obj[name]  # metrics are numbers: a string is no verdict word here
        out.append(Judgment(f"lm-eval:{name}", label=label_of(value, words=False), value=value))
    return out


def _question(doc: dict[str, Any], ctx: TaskContext, prompt: str | None) -> str | None:
    dtt = ctx.task_config.get("doc_to_text")
    if isinstance(dtt, str) and isinstance(doc.get(dtt), str):
        return doc[dtt]
    keys = ("question", "query", "input")
    return next((doc[k] for k in keys if isinstance(doc.get(k), str)), prompt)


def _meta(doc: dict[str, Any], key: str) -> str | None:
    text = as_text(doc.get(key))
    if text is None or not text.strip():
        return None
    m = _MIDNIGHT.match(text) if key == "as_of" else None
    return m.group(1) if m else text  # the json loader turns "2024-11-01" into a timestamp


def _run(obj: Any, where: str, locator: str, ctx: TaskContext, warnings: list[str]) -> ExternalRun:
    if not isinstance(obj, dict):
        raise UserError(where, "is not a JSON object", FIX_RUN)
    for key in ("doc_id", "doc"):
        if key not in obj:
            raise UserError(where, f'has no "{key}"', FIX_RUN)
    doc = obj["doc"]
    if not isinstance(doc, dict):
        raise UserError(where, '"doc" is not an object', FIX_RUN)
    args, resps = _arguments(obj, where), _responses(obj, where)
    prompt = as_text(args[0][0]) if args and args[0] else None
    kind = _output_type(ctx, args, resps)
    filt = str(obj.get("filter") or "none")
    extra: dict[str, Any] = {"doc_id": obj["doc_id"], "filter": filt, "output_type": kind}
    extra |= {k: obj[k] for k in _HASHES if k in obj}
    reference = as_text(obj.get("target"))
    if kind == "multiple_choice":
        lls = [_loglikelihood(r, where, i) for i, r in enumerate(resps)]
        pick = max(range(len(lls)), key=lls.__getitem__)
        choices = _choices(doc, ctx, args, len(lls))
        answer = choices[pick] if choices else str(pick)
        lls_kept = [ll if math.isfinite(ll) else None for ll in lls]  # extra is stored as JSON
        extra |= {"choice_index": pick, "loglikelihoods": lls_kept, "target": obj.get("target")}
        if choices and reference is not None and reference.strip().isdigit():
            gold = int(reference)
            reference = choices[gold] if gold < len(choices) else reference
    elif kind == "generate_until":
        first = resps[0]
        while isinstance(first, list) and first:  # repeats without a take_first filter
            first = first[0]
        answer = str(as_text(first) if first != [] else "")
        raw = obj.get("resps")
        if isinstance(raw, list) and raw and isinstance(raw[0], list) and raw[0]:
            if raw[0][0] != first:  # the filter changed it: keep what the model wrote
                extra["raw_response"] = raw[0][0]
            if len(raw[0]) > 1:
                extra["responses"] = raw[0]
    else:  # loglikelihood(_rolling): the scores are the answer
        answer = str(as_text(resps[0] if len(resps) == 1 else resps))
    qid = doc.get("question_id") if doc.get("question_id") is not None else doc.get("id")
    rest = {k: v for k, v in doc.items() if k not in {*META, "question_id", "id"}}
    extra["doc"] = rest
    extra |= ctx.extra
    judgments = _judgments(obj, warnings)
    if warnings:
        extra["warnings"] = warnings
    return ExternalRun(
        question_id=str(as_text(qid)) if qid is not None else f"{ctx.task}-{obj['doc_id']}",
        model=ctx.model,
        answer=answer,
        locator=locator,
        question=_question(doc, ctx, prompt),
        condition_label=_meta(doc, "condition"),
        # two filters on one task give two answers per doc: the filter tells them apart
        variant=_meta(doc, "variant") or (filt if filt != "none" else None),
        reference_answer=reference,
        prompt=prompt,
        judgments=judgments,
        company=_meta(doc, "company"),
        ticker=_meta(doc, "ticker"),
        as_of=_meta(doc, "as_of"),
        category=_meta(doc, "category"),
        benchmark=ctx.task,
        extra=extra,
    )


def _read_samples(
    path: Path, ctx: TaskContext | None = None, via: str = ""
) -> Iterator[ExternalRun]:
    """`via`: the samples file's name when a results file led here, so locators stay apart."""
    task, date = split_name(path)
    ctx = ctx or find_context(path, task, date)
    seen: dict[tuple[str, str], int] = {}  # (doc_id, filter) -> line: a few bytes per sample
    count = 0
    for n, raw in lines(path):
        warnings = list(ctx.warnings)
        where = f"{path} line {n}"
        try:
            obj = loads(decode(raw, warnings))
        except json.JSONDecodeError as exc:
            problem = f"is not valid JSON ({exc.msg} at column {exc.colno}; truncated file?)"
            raise UserError(where, problem, FIX_RUN) from None
        run = _run(obj, where, f"{via}line {n}", ctx, warnings)
        key = (json.dumps(obj["doc_id"]), run.extra["filter"])
        if key in seen:
            problem = f"doc_id {obj['doc_id']} (filter {key[1]}) already came on line {seen[key]}"
            raise UserError(where, problem, "import each lm_eval samples file once, unmerged")
        seen[key] = n
        count += 1
        yield run
    if not count:
        raise UserError(str(path), "holds no samples", FIX_RUN)


def _read_results(path: Path) -> Iterator[ExternalRun]:
    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise UserError(str(path), 'is not an lm-eval results file (no "results")', FIX_RUN)
    found, missing = samples_files(path, doc)
    if not found:
        raise UserError(str(path), "names no samples file that is in its folder", FIX_RUN)
    for sample_path, task in found:
        ctx = task_context(path, doc, task)
        ctx.warnings += [f"results name task {t!r} but its samples file is absent" for t in missing]
        yield from _read_samples(sample_path, ctx, via=f"{sample_path.name} ")


def read(path: Path) -> Iterator[ExternalRun]:
    """The runs of one samples_<task>_<date>.jsonl, or of every samples file a results_*.json
    names in its folder, one at a time."""
    with open_bytes(path) as f:
        head = f.read(HEAD)
    if _RESULTS_START.match(head):
        return _read_results(path)
    return _read_samples(path)
