"""Reader of inspect_ai eval logs: one ExternalRun per sample and epoch of a `.eval` or `.json`.

Layout (inspect-ai 0.3.x, log schema 2): a `.eval` is a zip of header.json {version, status,
eval, plan, results, stats} (a running log has only _journal/start.json) and one
samples/<id>_epoch_<n>.json per sample, zstd-compressed (zip method 93) by recent inspect-ai;
a `.json` is one object {version, status, eval, plan, results, stats, samples: [...]}.
This room finds the header and the samples in either container; inspect_sample.py maps each
sample onto an ExternalRun. Samples are read one at a time, never the whole log at once.
With inspect_ai installed its readers parse each part (read_eval_log header_only,
read_eval_log_sample, EvalSample), so its schema migrations apply; what it rejects is read as
plain JSON, which yields the same record.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ijson

from fintrade_tui.errors import UserError
from fintrade_tui.imports.common import decode, int_or_none, loads
from fintrade_tui.imports.inspect_sample import log_context, sample_run
from fintrade_tui.imports.json_stream import Utf8Stream, top_level_items
from fintrade_tui.imports.record import ExternalRun
from fintrade_tui.imports.zipped import AGAIN, check_sizes, open_zip, read_member

FORMAT = "inspect"
_HEADER, _START, _SAMPLES = "header.json", "_journal/start.json", "samples/"
_SKIP = {"events", "events_data", "store"}  # bulky parts that no field is read from
_ARGS = {"format": "eval", "exclude_fields": _SKIP, "resolve_attachments": "core"}
_OTHER = "import it with the reader of the tool that wrote it"


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
            ctx = log_context(f"{path} {'header.json' if is_zip else 'eval'}", header)
        if not isinstance(sample, dict):
            raise UserError(where, "a sample is not a JSON object", AGAIN)
        sid = sample.get("id")
        key = (f"#{n}" if sid is None else str(sid), int_or_none(sample.get("epoch")) or 1)
        where = f"{path} sample {key[0]} epoch {key[1]}"
        if key in seen:
            dup = f"appears twice (samples #{seen[key]} and #{n})"
            raise UserError(where, dup, "keep one: inspect never logs a sample twice")
        seen[key] = n
        yield sample_run(ctx, sample, where, n, bad_utf8)
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
    with open_zip(path) as zf:
        check_sizes(path, zf)  # before inspect_ai's reader or ours decompress anything
        infos = {i.filename: i for i in zf.infolist()}  # a re-logged sample: the last wins
        name = _HEADER if _HEADER in infos else _START if _START in infos else None
        if name is None:
            raise UserError(str(path), "a zip but not an inspect_ai log (no header.json)", _OTHER)
        header, _ = _load(read_member(path, zf, infos[name]), f"{path} {name}")
        header = _via_inspect(api, "read_eval_log", str(path), True, format="eval") or header
        if not isinstance(header, dict):
            raise UserError(f"{path} {name}", "the header is not a JSON object", AGAIN)
        ids = ((header.get("eval") or {}).get("dataset") or {}).get("sample_ids") or []
        typed = {str(i): i for i in ids}  # member names lose the int/str type of an id
        members = []
        for n, info in infos.items():
            sid, _, epoch = n.removeprefix(_SAMPLES).removesuffix(".json").rpartition("_epoch_")
            if n.startswith(_SAMPLES) and n.endswith(".json") and sid and epoch.isdigit():
                tid = typed.get(sid, sid)
                order = (int(epoch), sid.zfill(20) if isinstance(tid, int) else sid)
                members.append((order, tid, int(epoch), info))  # inspect's sort_samples order
        for _, sample_id, epoch_no, info in sorted(members, key=lambda m: m[0]):
            where = f"{path} sample {sample_id} epoch {epoch_no}"
            sample = _via_inspect(
                api, "read_eval_log_sample", str(path), sample_id, epoch_no, **_ARGS
            )
            if sample is not None:
                yield where, header, sample, False
            else:
                yield (where, header, *_load(read_member(path, zf, info), where))


def _load(raw: bytes, where: str) -> tuple[Any, bool]:
    """Parse one JSON document; bad UTF-8 is replaced (and reported), not fatal."""
    replaced: list[str] = []
    text = decode(raw, replaced, encoding="utf-8")  # no BOM: inspect never writes one
    try:
        return loads(text), bool(replaced)
    except json.JSONDecodeError as err:
        raise UserError(f"{where} line {err.lineno}", f"invalid JSON ({err.msg})", AGAIN) from None


def _json_parts(path: Path, api: Any) -> Iterator[tuple[str, dict, Any, bool]]:
    header: dict[str, Any] = {}
    done = 0
    try:
        with path.open("rb") as raw:
            stream = Utf8Stream(raw)
            for key, value in top_level_items(stream, split="samples"):
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
