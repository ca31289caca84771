"""Run import room: turn readers' `ExternalRun`s into workspace rows and write them all in one
transaction — runs marked `origin = external` with their file, format, position and content
hash; the questions the files bring (created, resolved, kept when they do not resolve); and
the files' verdicts as scores. Importing the same file again adds nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError
from fintrade_tui.imports.record import ExternalRun, Judgment
from fintrade_tui.workspace.questions import RESOLVED, Question, insert_questions, question_ids
from fintrade_tui.workspace.run_records import FINISHED, RunStore, insert_runs
from fintrade_tui.workspace.scores import KINDS, Score, ScoreStore, append_scores

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

# the file's condition name (lower case, runs of space/dash as "_") -> ours
CONDITION_ALIASES = {
    "no_rag": "no_rag",
    "norag": "no_rag",
    "closed_book": "no_rag",
    "closedbook": "no_rag",
    "no_context": "no_rag",
    "no_evidence": "no_rag",
    "baseline": "no_rag",
    "rag": "rag",
    "retrieval": "rag",
    "retrieval_augmented": "rag",
    "oracle": "oracle",
    "oracle_context": "oracle",
    "gold_context": "oracle",
    "gold_evidence": "oracle",
    "indicator_rag": "indicator_rag",
    "tool_use": "tool_use",
    "tools": "tool_use",
    "long_context": "long_context",
    "full_context": "long_context",
    "reference": "reference",
}
UNSPECIFIED = "unspecified"


def map_condition(label: str | None) -> str:
    """Our condition for a file's label: a known one (closed-book -> no_rag), else the label
    itself; no label -> `unspecified`."""
    if label is None or not str(label).strip():
        return UNSPECIFIED
    key = re.sub(r"[\s\-]+", "_", str(label).strip().lower())
    return CONDITION_ALIASES.get(key, str(label).strip())


def content_hash(r: ExternalRun, condition: str) -> str:
    """What makes two runs the same run: question, model, condition, variant, prompt, answer
    and, for a repeat (inspect's epoch 2, 3...), which repeat it is."""
    key: list[str | int | None] = [r.question_id, r.model, condition, r.variant, r.prompt, r.answer]
    if (r.attempt or 1) > 1:
        key.append(r.attempt)
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()


@dataclass
class FileReport:
    """What one file brought, for the closing summary."""

    file: str
    format: str
    runs: int = 0  # read from the file
    added: int = 0
    existing: int = 0  # already in the workspace (an earlier import)
    duplicates: list[str] = field(default_factory=list)  # "line 7 = line 2"
    questions_created: int = 0
    questions_resolved: int = 0
    scores_added: int = 0
    models: Counter = field(default_factory=Counter)
    conditions: Counter = field(default_factory=Counter)
    labels: Counter = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        for k in ("models", "conditions", "labels"):
            d[k] = dict(sorted(d[k].items()))
        d["duplicates_n"] = len(self.duplicates)
        return d


@dataclass
class ImportPlan:
    """Everything an import will write, computed before anything is written."""

    questions: list[Question] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)
    scores: list[Score] = field(default_factory=list)
    files: list[FileReport] = field(default_factory=list)


def _evidence(r: ExternalRun, condition: str) -> dict[str, Any] | None:
    if not r.evidence:
        return None
    items = []
    for n, e in enumerate(r.evidence, start=1):
        source, page = e.get("source"), e.get("page")
        title = str(source or "supplied evidence") + (f", p. {page}" if page is not None else "")
        meta = {k: v for k, v in e.items() if k != "text"}
        items.append(
            {
                "id": f"file:{n}",
                "track": "context",
                "text": str(e.get("text") or ""),
                "title": title,
                "ticker": r.ticker,
                "available_from": None,
                "meta": meta,
            }
        )
    return {"condition": condition, "items": items, "notes": ["evidence as the file gives it"]}


def _day(v: str | None, where: str) -> date | None:
    if not v:
        return None
    try:
        return date.fromisoformat(str(v)[:10])
    except ValueError:
        raise UserError(where, f"as_of {v!r} is not a date", "write it as YYYY-MM-DD") from None


def _score(j: Judgment, run_id: str, where: str, provenance: dict[str, Any]) -> Score:
    if j.kind not in KINDS:
        raise UserError(where, f"judgment kind {j.kind!r} is unknown", f"use {', '.join(KINDS)}")
    detail = dict(j.detail)
    if j.value is not None:
        detail["value"] = j.value
    detail["imported"] = provenance
    return Score(
        run_id=run_id,
        kind=j.kind,
        annotator=j.annotator,
        note=j.note,
        label=j.label,
        detail=detail,
        created_at=j.created_at,
        accuracy=j.scores.get("accuracy"),
        completeness=j.scores.get("completeness"),
        relevance=j.scores.get("relevance"),
        clarity=j.scores.get("clarity"),
    )


def _same(stored: dict[str, Any], s: Score) -> bool:
    keys = ("label", "note", "accuracy", "completeness", "relevance", "clarity")
    return all(stored.get(k) == getattr(s, k) for k in keys)


class Planner:
    """Builds one ImportPlan over several files against one workspace (nothing written)."""

    def __init__(self, ws: Connection, resolver: Any = None) -> None:
        self.ws = ws
        self.resolver = resolver  # a questions.resolve.Resolver, or None when no store exists
        self.runs = RunStore(ws)
        self.scores = ScoreStore(ws)
        self.known_questions = question_ids(ws)
        self.plan = ImportPlan()
        self._seen: dict[str, str] = {}  # run id -> where it was first given (this import)
        self._as_of: dict[str, date | None] = {}

    def add_questions(self, questions: list[Question]) -> None:
        """Questions to write as given (resolved by the caller), replacing stored ones."""
        for q in questions:
            self.known_questions.add(q.id)
            self._as_of[q.id] = q.as_of
        self.plan.questions += questions

    def add_file(
        self,
        path: Path,
        fmt: str,
        runs: Any,
        model: str | None = None,
        condition: str | None = None,
    ) -> FileReport:
        rep = FileReport(str(path), fmt)
        batch = []
        seen: dict[str, list[str]] = {}  # warning -> where (one line per kind of warning)
        for r in runs:
            rep.runs += 1
            where = f"{path} {r.locator}"
            if model:
                r.extra.setdefault("file_model", r.model)
                r.model = model
            if condition:
                r.extra.setdefault("file_condition", r.condition_label)
                r.condition_label = condition
            if not r.question_id or not r.model:
                missing = "question_id" if not r.question_id else "model"
                raise UserError(where, f"missing {missing}", f"give every run its {missing}")
            batch.append((r, where))
            for w in r.extra.get("warnings", []):
                seen.setdefault(w, []).append(r.locator)
        if not rep.runs:
            raise UserError(str(path), "holds no runs", "pick a log with samples in it")
        for w, at in seen.items():
            more = f" and {len(at) - 1} more" if len(at) > 1 else ""
            rep.warnings.append(f"{at[0]}{more}: {w}")
        existing = self.runs.ids([self._run_id(r) for r, _ in batch])
        stored: dict[tuple[str, str, str], dict[str, Any]] = {
            (s["run_id"], s["kind"], s["annotator"]): s
            for s in self.scores.latest(run_ids=sorted(existing), status=None)
        }
        for r, where in batch:
            self._add_run(r, where, path, fmt, rep, stored if existing else {}, existing)
        self.plan.files.append(rep)
        return rep

    def _run_id(self, r: ExternalRun) -> str:
        return r.run_id or content_hash(r, map_condition(r.condition_label))[:12]

    def _add_run(
        self,
        r: ExternalRun,
        where: str,
        path: Path,
        fmt: str,
        rep: FileReport,
        stored: dict[tuple[str, str, str], dict[str, Any]],
        existing: set[str],
    ) -> None:
        cond = map_condition(r.condition_label)
        digest = content_hash(r, cond)
        run_id = r.run_id or digest[:12]
        if run_id in self._seen:
            first = self._seen[run_id]
            rep.duplicates.append(f"{r.locator} = {first.removeprefix(f'{path} ')}")
            return
        self._seen[run_id] = where
        if r.status not in FINISHED:
            fix = "use completed, error, timeout, cancelled or interrupted"
            raise UserError(where, f"status {r.status!r} is unknown", fix)
        rep.models[r.model] += 1
        rep.conditions[cond] += 1
        self._question(r, where, rep)
        provenance = {"file": str(path), "format": fmt, "locator": r.locator}
        scores = [_score(j, run_id, where, provenance) for j in r.judgments]
        for s in scores:
            rep.labels[s.label or "(scores only)"] += 1
        if run_id in existing:
            rep.existing += 1
            scores = [
                s for s in scores if not _same(stored.get((run_id, s.kind, s.annotator), {}), s)
            ]
        else:
            rep.added += 1
            self.plan.runs.append(self._row(r, run_id, digest, cond, path, fmt))
        rep.scores_added += len(scores)
        self.plan.scores += scores

    def _row(
        self, r: ExternalRun, run_id: str, digest: str, cond: str, path: Path, fmt: str
    ) -> dict[str, Any]:
        evidence = _evidence(r, cond)
        prompt_hash = hashlib.sha256(r.prompt.encode()).hexdigest()[:16] if r.prompt else None
        return {
            "id": run_id,
            "batch": f"import:{path.name}",
            "question_id": r.question_id,
            "condition": cond,
            "model": r.model,
            "model_string": r.extra.get("model_string") or r.model,
            "as_of": self._as_of.get(r.question_id),
            "prompt": r.prompt,
            "prompt_hash": prompt_hash,
            "evidence_ids": [i["id"] for i in evidence["items"]] if evidence else [],
            "evidence": evidence,
            "started_at": r.started_at or datetime.now(),
            "duration": r.latency_s,
            "tokens_in": r.tokens_in,
            "tokens_out": r.tokens_out,
            "cost": r.cost,
            "retries": 0,
            "status": r.status,
            "error": r.error,
            "answer": r.answer,
            "origin": "external",
            "source_file": str(path.resolve()),
            "source_format": fmt,
            "source_locator": r.locator,
            "content_hash": digest,
            "condition_label": r.condition_label,
            "variant": r.variant,
            "extra": r.extra or None,
        }

    def _question(self, r: ExternalRun, where: str, rep: FileReport) -> None:
        qid = r.question_id
        if qid in self.known_questions:
            if qid not in self._as_of:  # a stored question: its runs carry its as_of
                row = self.ws.execute("SELECT as_of FROM questions WHERE id = ?", [qid]).fetchone()
                self._as_of[qid] = row[0] if row else None
            return
        self.known_questions.add(qid)
        extra = {k: v for k, v in (("ticker", r.ticker), ("company", r.company)) if v}
        given = _day(r.as_of, where)
        if given:
            extra["as_of"] = given.isoformat()
        extra["imported_from"] = where
        q = Question(
            id=qid,
            source=r.benchmark or rep.format,
            category=r.category or "other",
            text=r.question or "",
            reference_answer=r.reference_answer,
            extra=extra,
        )
        if not q.text:
            q.reasons.append(f"the file gives no question text ({where})")
        elif self.resolver is not None:
            q = self.resolver.evidence(self.resolver.resolve(q))  # the file's as_of wins
        else:
            q.reasons.append("no store to resolve against: run `fintrade-tui questions refresh`")
        rep.questions_created += 1
        rep.questions_resolved += q.status == RESOLVED
        self._as_of[qid] = q.as_of
        self.plan.questions.append(q)


def write(ws: Connection, plan: ImportPlan) -> None:
    """The whole plan in one transaction: every question, run and score, or none of them."""
    runs = RunStore(ws)
    ScoreStore(ws)  # the scores table exists before the transaction starts
    with runs.transaction() as cur:
        row = cur.execute("SELECT now()::TIMESTAMP").fetchone()  # the transaction's start
        assert row is not None  # a SELECT without FROM returns one row
        (now,) = row
        insert_questions(cur, plan.questions)
        insert_runs(cur, [r | {"imported_at": now} for r in plan.runs])
        append_scores(cur, plan.scores)
