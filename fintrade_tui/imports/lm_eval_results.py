"""lm-eval results room: the results_<date>.json that `lm_eval --output_path` writes beside its
samples_<task>_<date>.jsonl files. It names the model and holds each task's config; this room
finds the one that goes with a samples file, and the samples files a results file names.

From results: config.model_args (pretrained=/model=/... as lm-eval itself picks it) or
config.model -> model; configs.<task> (output_type, doc_to_text, doc_to_choice, ...) guides the
parse of the samples; lm_eval_version, config, date -> extra.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.imports.common import loads, open_bytes

# the fix for any malformed lm-eval file (lm_eval.py raises with it too)
FIX_RUN = "re-run lm_eval with --log_samples, or import the samples file as lm-eval wrote it"
# lm-eval's own order for naming a model from model_args (peft/delta come with pretrained)
_MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")
_TASK_KEYS: tuple[str, ...]
_TASK_KEYS = ("output_type", "doc_to_text", "doc_to_target", "doc_to_choice", "num_fewshot")
_TASK_KEYS += ("dataset_path", "dataset_name", "test_split", "metric_list", "generation_kwargs")


@dataclass
class TaskContext:
    """What the results file says about one task's samples."""

    task: str
    model: str = "unknown"
    task_config: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def split_name(path: Path) -> tuple[str, str | None]:
    """(task, date) from samples_<task>_<date>.jsonl; the task may hold underscores."""
    stem = path.name.removesuffix(".jsonl").removesuffix(".json")
    rest = stem.removeprefix("samples_")
    if rest != stem and "_" in rest:
        task, date = rest.rsplit("_", 1)
        return task, date
    return stem, None


def date_of(p: Path) -> str:
    return p.stem.rsplit("_", 1)[-1]


def load_json(path: Path) -> Any:
    with open_bytes(path) as f:
        raw = f.read()
    try:
        return loads(raw.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        problem = f"is not valid JSON ({exc.msg} at line {exc.lineno}; truncated?)"
        raise UserError(str(path), problem, FIX_RUN) from None


def find_context(path: Path, task: str, date: str | None) -> TaskContext:
    """The results file of the same run (same date in the name), else the newest one naming
    this task; none at all still imports, with model "unknown" and a warning."""
    folder = path.parent
    same = sorted(folder.glob(f"*_{date}.json")) if date else []
    newest = sorted(folder.glob("results_*.json"), key=date_of, reverse=True)
    skipped: list[str] = []
    for cand in [*same, *(p for p in newest if p not in same)]:
        try:
            doc = load_json(cand)
        except UserError:
            skipped.append(f"skipped unreadable results file {cand.name}")
            continue
        key = _task_key(doc, task)
        if key is not None:
            ctx = task_context(cand, doc, key)
            if date and date_of(cand) != date:
                ctx.warnings.append(f"results taken from {cand.name}, not the same run's")
            ctx.warnings.extend(skipped)
            return ctx
    note = f"no results_*.json naming task {task!r} beside this file: model unknown"
    return TaskContext(task=task, warnings=[note, *skipped])


def task_context(results: Path, doc: dict[str, Any], key: str) -> TaskContext:
    """Task `key` as the results file `doc` (read from `results`) describes it."""
    given_configs = doc.get("configs")
    configs: dict[str, Any] = given_configs if isinstance(given_configs, dict) else {}
    given_task = configs.get(key)
    task_config: dict[str, Any] = given_task if isinstance(given_task, dict) else {}
    extra: dict[str, Any] = {"results_file": results.name, "task": key}
    for k in ("lm_eval_version", "git_hash", "model_source", "model_name", "task_hashes"):
        if doc.get(k) not in (None, "", {}):
            extra[k] = doc[k].get(key) if k == "task_hashes" else doc[k]
    if isinstance(doc.get("config"), dict):
        extra["config"] = doc["config"]
    if isinstance(doc.get("date"), int | float):
        extra["evaluation_date"] = datetime.fromtimestamp(doc["date"], UTC).isoformat()
    sub = {k: task_config[k] for k in _TASK_KEYS if k in task_config}
    if isinstance(task_config.get("metadata"), dict) and "version" in task_config["metadata"]:
        sub["version"] = task_config["metadata"]["version"]
    extra["task_config"] = sub
    return TaskContext(task=key, model=_model(doc), task_config=task_config, extra=extra)


def samples_files(path: Path, doc: dict[str, Any]) -> tuple[list[tuple[Path, str]], list[str]]:
    """([(samples file, task)], [tasks with none]) for the tasks the results file names: the
    same run's samples file, else the newest one of that task in the folder."""
    date = date_of(path)
    found: list[tuple[Path, str]] = []
    missing: list[str] = []
    for task in list(doc.get("configs") or doc["results"]):
        names = {task, _sanitize(task)}
        same = [path.parent / f"samples_{t}_{date}.jsonl" for t in names]
        others = [p for p in path.parent.glob("samples_*.jsonl") if split_name(p)[0] in names]
        hit = next((p for p in same if p.is_file()), None)
        hit = hit or max(others, key=date_of, default=None)
        if hit is None:
            missing.append(task)
        else:
            found.append((hit, task))
    return found, missing


def _sanitize(task: str) -> str:
    return re.sub(r"\W", "_", task)  # as lm-eval's sanitize_task_name


def _task_key(doc: Any, task: str) -> str | None:
    """The results file's name for this task (file names carry the raw or sanitized name)."""
    if not isinstance(doc, dict):
        return None
    names = [*(doc.get("configs") or {}), *(doc.get("results") or {})]
    return next((k for k in names if task in (k, _sanitize(k))), None)


def _model(doc: dict[str, Any]) -> str:
    given = doc.get("config")
    config: dict[str, Any] = given if isinstance(given, dict) else {}
    args = config.get("model_args")
    if isinstance(args, dict):
        for key in _MODEL_KEYS:
            if args.get(key):
                return str(args[key])
    elif isinstance(args, str):
        for key in _MODEL_KEYS:
            m = re.search(rf"(?:^|,)\s*{key}=([^,]+)", args)
            if m:
                return m.group(1).strip()
    # with no model in model_args lm-eval's model_name is a random id: name the backend instead
    return str(config.get("model") or doc.get("model_name") or "unknown")
