"""Reader of inspect_ai eval logs: one ExternalRun per sample and epoch of a `.eval` or `.json`.

Layout (inspect-ai 0.3.x, log schema 2): a `.eval` is a zip of header.json {version, status,
eval, plan, results, stats} (a running log has only _journal/start.json) and one
samples/<id>_epoch_<n>.json per sample, zstd-compressed (zip method 93) by recent inspect-ai;
a `.json` is one object {version, status, eval, plan, results, stats, samples: [...]}.
Read: eval.task -> benchmark, eval.model -> model, eval ids, task_args and
model_generate_config + plan.config -> extra; per sample id/epoch -> locator, metadata
question_id (else id) -> question_id, input -> prompt and question (last user message),
output.completion (else the last assistant message) -> answer, target -> reference_answer,
scores -> Judgment "inspect:<scorer>", model_usage -> tokens/cost, total_time -> latency_s,
started_at, error.message -> status "error", metadata condition/ticker/... -> fields + extra.
With inspect_ai installed its readers parse each part (read_eval_log header_only,
read_eval_log_sample, EvalSample), so its schema migrations apply; what it rejects is read as
plain JSON, which yields the same record.
"""

from __future__ import annotations

import codecs
import io
import json
import math
import struct
import zipfile
import zlib
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import ijson

from fintrade_tui.errors import UserError
from fintrade_tui.imports.record import CORRECT, INCORRECT, PARTIAL, REFUSAL, ExternalRun, Judgment

FORMAT = "inspect"
_HEADER, _START, _SAMPLES = "header.json", "_journal/start.json", "samples/"
_ZSTD = 93  # zip compression method id of Zstandard
_SKIP = {"events", "events_data", "store"}  # bulky parts that no field is read from
_ARGS = {"format": "eval", "exclude_fields": _SKIP, "resolve_attachments": "core"}
_SPEC_KEYS = ("run_id", "eval_set_id", "task_id", "created")
_META = ("condition", "variant", "ticker", "company", "as_of", "category")
_PLACEHOLDER = "88F74D2C"  # inspect's key for the single `score` of pre-`scores` logs
_LABELS = {"c": CORRECT, "correct": CORRECT, "pass": CORRECT, "i": INCORRECT}
_LABELS |= {"incorrect": INCORRECT, "fail": INCORRECT, "p": PARTIAL, "partial": PARTIAL}
_LABELS |= {"n": REFUSAL, "refusal": REFUSAL}
_REPLACED = "non-UTF-8 bytes were replaced with U+FFFD"
_AGAIN = "the file is truncated or damaged: copy or export it again"
_OTHER = "import it with the reader of the tool that wrote it"
_INCOMPLETE = "the log is incomplete: export it again with inspect"


def sniff(path: Path, head: bytes) -> bool:
    """A zip holding header.json (or _journal/start.json) and samples/, or a JSON object with
    "eval" and "version" and one of "samples" / "results" / "status" at its top level."""
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (OSError, zipfile.BadZipFile):
            return False
        has_header = _HEADER in names or _START in names
        return has_header and any(n.startswith(_SAMPLES) for n in names)
    keys: set[str] = set()
    try:  # the head is cut mid-document: collect top-level keys until the parser stops
        for prefix, event, value in ijson.parse(io.BytesIO(head)):
            if prefix == "" and event == "map_key":
                keys.add(value)
    except (ijson.JSONError, UnicodeDecodeError):
        pass
    return {"eval", "version"} <= keys and bool(keys & {"samples", "results", "status"})


def read(path: Path) -> Iterator[ExternalRun]:
    """Yield one run per sample and epoch, reading one sample at a time."""
    api = _inspect_api()
    with path.open("rb") as f:
        is_zip = f.read(2) == b"PK"
    parts = _zip_parts(path, api) if is_zip else _json_parts(path, api)
    ctx: dict[str, Any] = {}
    seen: dict[tuple[str, int], int] = {}
    for n, (where, header, sample, bad_utf8) in enumerate(parts, 1):
        if not ctx:
            ctx = _context(f"{path} {'header.json' if is_zip else 'eval'}", header)
        if not isinstance(sample, dict):
            raise UserError(where, "a sample is not a JSON object", _AGAIN)
        sid = sample.get("id")
        key = (f"#{n}" if sid is None else str(sid), _int(sample.get("epoch")) or 1)
        where = f"{path} sample {key[0]} epoch {key[1]}"
        if key in seen:
            dup = f"appears twice (samples #{seen[key]} and #{n})"
            raise UserError(where, dup, "keep one: inspect never logs a sample twice")
        seen[key] = n
        yield _run(ctx, sample, where, n, bad_utf8)
    if not ctx:
        raise UserError(str(path), "the log holds no samples", "re-run without --no-log-samples")


# ---- containers ----------------------------------------------------------------------------


def _inspect_api() -> Any:
    """inspect_ai.log when installed (its readers migrate older schemas), else None."""
    try:
        import inspect_ai.log as api
    except ImportError:
        return None
    return api


def _zip_parts(path: Path, api: Any) -> Iterator[tuple[str, dict, Any, bool]]:
    try:
        zf = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as err:
        raise UserError(str(path), f"not a readable zip ({err})", _AGAIN) from None
    with zf:
        infos = {i.filename: i for i in zf.infolist()}  # a re-logged sample: the last wins
        name = _HEADER if _HEADER in infos else _START if _START in infos else None
        if name is None:
            raise UserError(str(path), "a zip but not an inspect_ai log (no header.json)", _OTHER)
        header, _ = _load(_member(path, zf, infos[name]), f"{path} {name}")
        header = _via_inspect(api, "read_eval_log", str(path), True, format="eval") or header
        if not isinstance(header, dict):
            raise UserError(f"{path} {name}", "the header is not a JSON object", _AGAIN)
        ids = ((header.get("eval") or {}).get("dataset") or {}).get("sample_ids") or []
        typed = {str(i): i for i in ids}  # member names lose the int/str type of an id
        members = []
        for n, info in infos.items():
            sid, _, epoch = n.removeprefix(_SAMPLES).removesuffix(".json").rpartition("_epoch_")
            if n.startswith(_SAMPLES) and n.endswith(".json") and sid and epoch.isdigit():
                tid = typed.get(sid, sid)
                order = (int(epoch), sid.zfill(20) if isinstance(tid, int) else sid)
                members.append((order, tid, int(epoch), info))  # inspect's sort_samples order
        for _, sid, epoch, info in sorted(members, key=lambda m: m[0]):
            where = f"{path} sample {sid} epoch {epoch}"
            sample = _via_inspect(api, "read_eval_log_sample", str(path), sid, epoch, **_ARGS)
            if sample is not None:
                yield where, header, sample, False
            else:
                yield (where, header, *_load(_member(path, zf, info), where))


def _member(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    where = f"{path} {info.filename}"
    try:
        return zf.read(info)
    except NotImplementedError:  # zstd on Python < 3.14: decompress the raw member ourselves
        if info.compress_type != _ZSTD:
            method = f"zip compression method {info.compress_type}"
            raise UserError(where, method, "repack the zip with deflate") from None
    except (zipfile.BadZipFile, zlib.error, EOFError) as err:
        raise UserError(where, f"damaged zip member ({err})", _AGAIN) from None
    try:
        import zstandard
    except ImportError:
        zstd = "the log is zstd-compressed (zip method 93, newer inspect-ai)"
        raise UserError(where, zstd, "pip install zstandard, or inspect-ai") from None
    with path.open("rb") as f:
        f.seek(info.header_offset)
        local = f.read(30)  # local file header: names and extra field precede the data
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        raw = f.read(info.compress_size)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        data = reader.read()
    except zstandard.ZstdError as err:
        raise UserError(where, f"damaged zstd data ({err})", _AGAIN) from None
    if zlib.crc32(data) != info.CRC:
        raise UserError(where, "CRC mismatch: the member is damaged", _AGAIN)
    return data


def _load(raw: bytes, where: str) -> tuple[Any, bool]:
    """Parse one JSON document; bad UTF-8 is replaced (and reported), not fatal."""
    try:
        text, bad = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, bad = raw.decode("utf-8", errors="replace"), True
    try:
        return json.loads(text), bad
    except json.JSONDecodeError as err:
        raise UserError(f"{where} line {err.lineno}", f"invalid JSON ({err.msg})", _AGAIN) from None


class _Utf8Stream:
    """A byte stream re-encoded as valid UTF-8; `bad` turns true once a byte was replaced."""

    def __init__(self, raw: Any) -> None:
        self.raw, self.bad, self._tail = raw, False, b""
        self._dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
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
            if text or not chunk:  # an incomplete character alone: read on, it is not EOF
                return text.encode("utf-8")


def _json_parts(path: Path, api: Any) -> Iterator[tuple[str, dict, Any, bool]]:
    header: dict[str, Any] = {}
    done = 0
    try:
        with path.open("rb") as raw:
            stream = _Utf8Stream(raw)
            for key, value in _top_values(stream):
                if key != "samples":
                    header[key] = value
                    continue
                if done == 0:  # the header parts precede the samples in inspect's writer
                    if "eval" not in header:  # not here: leave it to the whole-file parser
                        raise ijson.JSONError("samples before eval")
                    header = _checked_header(path, header, api)
                where = f"{path} sample #{done + 1}"
                yield where, header, _validated(api, value), stream.bad
                done += 1
    except ijson.JSONError:
        # NaN (inspect writes unscored values as NaN), an odd key order or a broken file:
        # the stdlib parser accepts NaN and gives the line of a real error
        doc, bad = _load(path.read_bytes(), str(path))
        if not isinstance(doc, dict):
            raise UserError(str(path), "JSON but not an inspect_ai log", _OTHER) from None
        header = _checked_header(path, {k: v for k, v in doc.items() if k != "samples"}, api)
        samples = doc.get("samples") or []
        for n, sample in enumerate(samples[done:], done + 1):
            yield f"{path} sample #{n}", header, _validated(api, sample), bad
        return
    if done == 0:
        _checked_header(path, header, api)


def _top_values(stream: Any) -> Iterator[tuple[str, Any]]:
    """(key, value) of the top-level object, each element of `samples` as its own pair."""
    events = ijson.parse(stream, use_float=True)
    first = next(events, ("", None, None))
    if first[:2] != ("", "start_map"):
        raise ijson.JSONError("not a JSON object")
    key, builder, depth = "", None, 0
    for prefix, event, value in events:
        if builder is None:
            if prefix == "":
                key = value if event == "map_key" else key
                continue
            if prefix == "samples" and event in ("start_array", "end_array"):
                continue
            builder, depth = ijson.ObjectBuilder(), 0
        builder.event(event, value)
        depth += event in ("start_map", "start_array")
        depth -= event in ("end_map", "end_array")
        if depth == 0:
            yield key, builder.value
            builder = None


def _checked_header(path: Path, header: dict, api: Any) -> dict:
    if "eval" not in header or "version" not in header:
        raise UserError(str(path), "JSON but not an inspect_ai log (no eval/version)", _OTHER)
    return _via_inspect(api, "read_eval_log", str(path), True, format="json") or header


def _via_inspect(api: Any, parse: str, *args: Any, **kwargs: Any) -> dict | None:
    """A part as inspect_ai parses it (model dumped to JSON types), or None without it."""
    if api is None:
        return None
    try:
        if parse == "sample":  # one streamed .json sample, validated as inspect reads it
            slim = {k: v for k, v in args[0].items() if k not in _SKIP}
            parsed = api.resolve_sample_attachments(api.EvalSample.model_validate(slim), "core")
        else:
            parsed = getattr(api, parse)(*args, **kwargs)
    except Exception:  # bad UTF-8, a number where text belongs...: the caller reads plain JSON
        return None
    return parsed.model_dump(mode="json", exclude=_SKIP | {"samples", "reductions"})


def _validated(api: Any, sample: Any) -> Any:
    return (_via_inspect(api, "sample", sample) if isinstance(sample, dict) else None) or sample


# ---- mapping -------------------------------------------------------------------------------


def _context(where: str, header: dict) -> dict[str, Any]:
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
        "generate_config": _compact(config),
        "solvers": [s.get("solver") for s in plan.get("steps") or [] if isinstance(s, dict)],
    }
    first = next((s for s in scorers if s), "score")
    task, model = str(spec["task"]), str(spec["model"])
    return {"task": task, "model": model, "first_scorer": first, "extra": _compact(extra)}


def _run(ctx: dict[str, Any], s: dict, where: str, n: int, bad_utf8: bool) -> ExternalRun:
    output = s.get("output") if isinstance(s.get("output"), dict) else {}
    if not output and not s.get("messages") and not s.get("error"):
        raise UserError(where, "the sample has no output, messages or error", _INCOMPLETE)
    att = s.get("attachments") or {}
    warnings: list[str] = []
    answer = _answer(s, output, att, warnings)
    inp = s.get("input")
    question, prompt = _question(inp, att)
    meta = s.get("metadata") if isinstance(s.get("metadata"), dict) else {}
    sid, epoch = s.get("id"), _int(s.get("epoch")) or 1
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
        "metadata": {k: v for k, v in meta.items() if k not in (*_META, "question_id", "id")},
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
        tokens_out=_int(usage.get("output_tokens")),
        latency_s=_num(s.get("total_time")) or _num(s.get("working_time")),
        cost=_num(usage.get("total_cost")),
        started_at=_when(s.get("started_at"), warnings),
        status="error" if error else "completed",
        error=(str(error.get("message")) if isinstance(error, dict) else str(error))
        if error
        else None,
        judgments=_judgments(ctx, s),
        benchmark=ctx["task"],
        extra={**ctx["extra"], **_compact(extra)},
        **{k if k != "condition" else "condition_label": _str(meta.get(k)) for k in _META},
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
        note, detail = sc.get("explanation"), _compact(detail)
        out.append(
            Judgment(
                f"inspect:{name}", _label(value), value=value, note=note, kind=kind, detail=detail
            )
        )
    return out


def _label(value: Any) -> str | None:
    if isinstance(value, bool):
        return CORRECT if value else INCORRECT
    if isinstance(value, int | float) and not math.isnan(value):
        return {1: CORRECT, 0: INCORRECT, 0.5: PARTIAL}.get(value)
    return _LABELS.get(value.strip().lower()) if isinstance(value, str) else None


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
    base = _int(usage.get("input_tokens"))
    if base is None:
        return None
    # inspect's input_tokens excludes cached tokens; the true input adds both cache counts
    return base + sum(_int(usage.get(f"input_tokens_cache_{k}")) or 0 for k in ("read", "write"))


def _when(value: Any, warnings: list[str]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        warnings.append(f"started_at {value!r} is not an ISO time; left out")
        return None


def _has_replacement(run: ExternalRun) -> bool:
    texts = [run.answer, run.question, run.prompt, run.reference_answer, run.error]
    texts += [j.note for j in run.judgments] + [json.dumps(run.extra.get("metadata"))]
    texts += [json.dumps(j.detail) for j in run.judgments]
    return any(t and ("\ufffd" in t or "\\ufffd" in t) for t in texts)


def _compact(d: dict) -> dict:
    return {k: v for k, v in d.items() if v not in (None, "", [], {})}


def _str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None
