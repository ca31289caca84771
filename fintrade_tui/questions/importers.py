"""Importer room: turn a question file into a list of unresolved `Question` records.

Importers fill only id, source, category, text, reference_answer, golden_raw and extra;
tickers, dates and canonical indicators are the resolver's job.

fintradebench -- seed CSV `question_id, question, golden_indicators[, response]`, other
    columns kept in extra; indicators split on | or ,; category = id prefix (FT12 -> FT).
jsonl -- generic, one JSON object per line (blank lines skipped), keys = `Question` fields:
    id, text (str, required); source, category (str, default "jsonl" / "other");
    reference_answer, scope, parent_id, status, coverage (str or null);
    as_of, window_start, window_end ("YYYY-MM-DD" or null);
    tickers, golden_raw, golden, reasons, coverage_missing (lists of str, default []);
    oracle, extra (objects, default {}). Unknown keys are kept in extra. `write_jsonl`
    writes this schema, so its output reads back unchanged.
secque -- JSONL with QID, Question, ground_truth_answer, question_type, context*: id
    "SECQUE-<QID>"; context* keys go to extra["context"], all other keys (ticker, company,
    filing_date, fiscal_year, ...) are copied into extra.
finar -- FinAR-Bench JSON object (or list) {company, table, instances: [{task,
    ground_truth, task_type, ...}]}: one question per instance, id
    "FINAR-<company or file stem>-<n>" (n from 1) unless the instance has its own id.
finqa, convfinqa, tatqa -- FinQA, ConvFinQA and TAT-QA JSON files as published (`table_qa`).

Bad input raises a one-line `UserError` naming the file and the 1-based physical line (for
CSV, the line its record starts on). Reading is all-or-nothing: it raises before returning
anything, so callers never store half a file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.questions.question_files import (
    at_line,
    csv_records,
    json_object_lines,
    load_json_document,
    read_question_text,
)
from fintrade_tui.questions.table_qa import TABLE_QA_FORMATS, TABLE_QA_READERS, detect_table_qa
from fintrade_tui.workspace.questions import Question, json_default

FORMATS = ("fintradebench", "jsonl", "secque", "finar", *TABLE_QA_FORMATS)
FORMAT_FIX = "pass --format " + "|".join(FORMATS)
SEED_REQUIRED = ("question_id", "question", "golden_indicators")
_SEED_COLUMNS = (*SEED_REQUIRED, "response")
_SECQUE_KEYS = ("QID", "Question", "ground_truth_answer", "question_type")
_FIELDS = tuple(Question.__dataclass_fields__)
_STR_FIELDS = ("source", "category", "scope", "status", "coverage", "parent_id")
_DATE_FIELDS = ("as_of", "window_start", "window_end")
_LIST_FIELDS = ("tickers", "golden_raw", "golden", "reasons", "coverage_missing")
_DICT_FIELDS = ("oracle", "extra")


def _string(obj: dict[str, Any], key: str, where: str, required: bool = False) -> str | None:
    """A string field; ids may be written as integers. Required ones must be non-blank."""
    v = obj.get(key)
    if isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if v is not None and not isinstance(v, str):
        raise UserError(where, f"{key} must be a string", f'write "{key}" as text')
    if required and (v is None or not v.strip()):
        raise UserError(where, f"missing {key}", f'add a non-empty "{key}"')
    return v


def _answer(v: Any) -> str | None:
    # reference answers are compared as text; structured ground truth is kept as JSON
    return v if v is None or isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _claim(seen: dict[str, int], qid: str, path: Path, line: int) -> None:
    if qid in seen:
        raise UserError(
            at_line(path, line),
            f"duplicate id {qid} (first on line {seen[qid]})",
            "give every question its own id",
        )
    seen[qid] = line


def split_indicators(raw: str) -> list[str]:
    """'ROA | ROE,,MA' -> ['ROA', 'ROE', 'MA']: order kept, blanks dropped."""
    return [p.strip() for p in re.split(r"[|,]", raw) if p.strip()]


def _read_seed(path: Path, text: str) -> list[Question]:
    records = csv_records(path, text)
    if not records:
        return []
    header_line, header = records[0]
    names = [h.strip().lower() for h in header]
    for col in SEED_REQUIRED:
        if col not in names:
            fix = "the header needs " + ", ".join(_SEED_COLUMNS)
            raise UserError(at_line(path, header_line), f"missing column {col}", fix)
    index: dict[str, int] = {}
    for i, name in enumerate(names):
        index.setdefault(name, i)
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for line, row in records[1:]:
        where = at_line(path, line)
        if len(row) != len(header):
            fix = "quote fields that contain commas or line breaks"
            raise UserError(where, f"has {len(row)} fields, the header {len(header)}", fix)

        def cell(name: str, row: list[str] = row) -> str:
            return row[index[name]].strip() if name in index else ""

        qid = cell("question_id")
        if not qid:
            raise UserError(where, "empty question_id", "give the row an id such as F1")
        if not cell("question"):
            raise UserError(
                where, f"empty question for {qid}", "write the question or drop the row"
            )
        _claim(seen, qid, path, line)
        prefix = re.match(r"[A-Za-z]+", qid)
        extra = {header[i].strip(): v for i, v in enumerate(row) if names[i] not in _SEED_COLUMNS}
        questions.append(
            Question(
                id=qid,
                source="fintradebench",
                category=prefix.group(0).upper() if prefix else "other",
                text=cell("question"),
                reference_answer=cell("response") or None,
                golden_raw=split_indicators(cell("golden_indicators")),
                extra=extra,
            )
        )
    return questions


def _generic_question(obj: dict[str, Any], where: str) -> Question:
    fields: dict[str, Any] = {
        "id": str(_string(obj, "id", where, required=True)).strip(),
        "text": _string(obj, "text", where, required=True),
        "source": "jsonl",
        "category": "other",
        "reference_answer": _answer(obj.get("reference_answer")),
    }
    for k in _STR_FIELDS:
        if (v := _string(obj, k, where)) is not None:
            fields[k] = v
    for k in _DATE_FIELDS:
        if (v := obj.get(k)) is None:
            continue
        try:
            fields[k] = date.fromisoformat(v)
        except (TypeError, ValueError):
            raise UserError(where, f"{k} {v!r} is not a date", "write it as YYYY-MM-DD") from None
    for k in (*_LIST_FIELDS, *_DICT_FIELDS):
        if (v := obj.get(k)) is None:
            continue
        want = "an object" if k in _DICT_FIELDS else "a list of strings"
        if not (isinstance(v, dict) if k in _DICT_FIELDS else _str_list(v)):
            raise UserError(where, f"{k} must be {want}", f'write "{k}" as {want}')
        fields[k] = v
    unknown = {k: v for k, v in obj.items() if k not in _FIELDS}
    if unknown:  # other tools' metadata survives instead of being dropped
        fields["extra"] = {**fields.get("extra", {}), **unknown}
    return Question(**fields)


def _str_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _read_generic(path: Path, text: str) -> list[Question]:
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for line, obj in json_object_lines(path, text):
        q = _generic_question(obj, at_line(path, line))
        _claim(seen, q.id, path, line)
        questions.append(q)
    return questions


def _read_secque(path: Path, text: str) -> list[Question]:
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for line, obj in json_object_lines(path, text):
        where = at_line(path, line)
        qid = "SECQUE-" + str(_string(obj, "QID", where, required=True)).strip()
        question = _string(obj, "Question", where, required=True)
        _claim(seen, qid, path, line)
        context = {k: v for k, v in obj.items() if k.lower().startswith("context")}
        extra = {k: v for k, v in obj.items() if k not in _SECQUE_KEYS and k not in context}
        extra["context"] = context  # the filing excerpts are this question's oracle evidence
        questions.append(
            Question(
                id=qid,
                source="secque",
                category=_string(obj, "question_type", where) or "other",
                text=str(question),
                reference_answer=_answer(obj.get("ground_truth_answer")),
                extra=extra,
            )
        )
    return questions


def _read_finar(path: Path, text: str) -> list[Question]:
    doc, lines = load_json_document(path, text)
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for block in doc if isinstance(doc, list) else [doc]:
        block_line = lines.get(id(block), 1)
        if not isinstance(block, dict) or not isinstance(block.get("instances"), list):
            fix = "write {company, table, instances: [{task, ground_truth, task_type}]}"
            raise UserError(at_line(path, block_line), 'needs an "instances" list', fix)
        company = _string(block, "company", at_line(path, block_line))
        shared = {k: v for k, v in block.items() if k != "instances"}
        for n, inst in enumerate(block["instances"], start=1):
            line = lines.get(id(inst), block_line)
            where = at_line(path, line)
            if not isinstance(inst, dict):
                raise UserError(where, f"instance {n} is not an object", "write {task, ...}")
            task = _string(inst, "task", where, required=True)
            own_id = _string(inst, "id", where)
            qid = own_id.strip() if own_id else f"FINAR-{company or path.stem}-{n}"
            task_type = _string(inst, "task_type", where) or "other"
            _claim(seen, qid, path, line)
            extra = {**shared, **{k: v for k, v in inst.items() if k not in ("id", "task")}}
            extra.update(
                company=company,
                table=block.get("table"),  # as written: markdown text or nested data
                task_type=task_type,
                ground_truth=inst.get("ground_truth"),
            )
            questions.append(
                Question(
                    id=qid,
                    source="finar",
                    category=task_type,
                    text=str(task),
                    reference_answer=_answer(inst.get("ground_truth")),
                    extra=extra,
                )
            )
    return questions


_READERS: dict[str, Callable[[Path, str], list[Question]]] = {
    "fintradebench": _read_seed,
    "jsonl": _read_generic,
    "secque": _read_secque,
    "finar": _read_finar,
} | TABLE_QA_READERS


def _detect(path: Path, text: str) -> str:
    ext = path.suffix.lower()
    if ext == ".csv":
        try:
            header = next(csv.reader(io.StringIO(text, newline="")), [])
        except csv.Error:
            header = []
        if {"question_id", "question"} <= {h.strip().lower() for h in header}:
            return "fintradebench"
    elif ext in (".jsonl", ".ndjson"):
        first = next(json_object_lines(path, text), None)
        keys = first[1].keys() if first else set()
        if "QID" in keys or "Question" in keys:
            return "secque"
        if "id" in keys or "text" in keys:
            return "jsonl"
    elif ext == ".json":
        doc, _ = load_json_document(path, text)
        blocks = doc if isinstance(doc, list) else [doc]
        if blocks and all(isinstance(b, dict) and "instances" in b for b in blocks):
            return "finar"
        if table_qa := detect_table_qa(blocks):
            return table_qa
    raise UserError(str(path), "unknown question format", FORMAT_FIX)


def detect_format(path: Path) -> str:
    """The format of a question file, from its extension and first record."""
    return _detect(path, read_question_text(path))


def read_questions(path: Path, fmt: str | None = None) -> list[Question]:
    """Every question in the file, or a UserError before anything is returned."""
    if fmt is not None and fmt not in FORMATS:
        raise UserError(str(path), f"unknown question format {fmt!r}", FORMAT_FIX)
    text = read_question_text(path)
    if not text.strip():
        raise UserError(str(path), "no questions (the file is empty)", "pick the question file")
    questions = _READERS[fmt or _detect(path, text)](path, text)
    if not questions:
        raise UserError(str(path), "no questions", "add at least one question")
    return questions


def write_jsonl(questions: list[Question], path: Path) -> None:
    """The generic JSONL export: one `Question.to_dict()` per line, dates as ISO strings."""
    lines = [
        json.dumps(q.to_dict(), ensure_ascii=False, default=json_default) + "\n" for q in questions
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")  # write then rename: no half-written export
    tmp.write_text("".join(lines), encoding="utf-8")
    os.replace(tmp, path)
