"""Failure cases room: the runs (or question × model pairs) worth a second look, in the style of
promptfoo's failure filters — RAG worse than No-RAG, judge and human far apart, answers the
numeric audit contradicts, runs that ended in an error, completed runs nobody rated yet, runs
labelled incorrect or a refusal, Oracle right where No-RAG is wrong (or the reverse), and
answers the fatal-flaw screen flagged (judging/flaws.py), answers given by a model whose
training data reaches past the question's as-of date (models/cutoffs.py: it may know the
outcome), and answers the judge calls right while the audit contradicts a figure they state
(`judge_audit`). Every case carries that look-ahead mark. Whether a run counts as right, here as
in the failure causes and case studies, is rightness.py's one rule.

This module holds the filters' names and labels and `failure_cases`, which reads the workspace,
runs the filters asked for, marks and orders the cases; each filter's own rule is in
failure_filters.py.

One row per (filter, case): a run may appear under several filters, each with its own reason.
Rows come in a fixed order (filter, question in natural order, model, conditions, run ids), so
the TUI, exports and tests all see the same list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fintrade_tui.reports.failure_filters import (
    cond_key,
    contradicted_cases,
    disagree_cases,
    error_cases,
    fatal_flaw_cases,
    judge_audit_cases,
    labelled_cases,
    may_know_cases,
    oracle_flip_cases,
    rag_worse_cases,
    unrated_cases,
)
from fintrade_tui.reports.rightness import latest_audits
from fintrade_tui.workspace.questions import load_questions, natural_key
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.score_reader import mean_by_run
from fintrade_tui.workspace.scores import ScoreStore

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

FILTERS = (
    "rag_worse",
    "disagree",
    "contradicted",
    "judge_audit",
    "errors",
    "unrated",
    "incorrect",
    "refusal",
    "oracle_flip",
    "may_know",
    "fatal_flaw",
)
FILTER_LABELS = {
    "rag_worse": "RAG worse",
    "disagree": "judge ≠ human",
    "contradicted": "contradicted",
    "judge_audit": "judge ≠ audit",
    "errors": "errors",
    "unrated": "unrated",
    "incorrect": "incorrect",
    "refusal": "refusal",
    "oracle_flip": "Oracle≠No-RAG",
    "may_know": "may know",
    "fatal_flaw": "fatal flaw",
}


def _has_table(con: Connection, name: str) -> bool:
    return bool(
        con.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = ?", [name]
        ).fetchone()
    )


MAX_REPLAY = 6  # answers side by side when a case is replayed


def replay_set(case: dict[str, Any], answers: list[dict[str, Any]]) -> list[str]:
    """The runs a case replays: its own, then the question's other answers — the same model
    under the other conditions first, then other models — at most MAX_REPLAY."""
    own = list(case["run_ids"])
    others = sorted(
        (r for r in answers if r["id"] not in own),
        key=lambda r: (r["model"] != case["model"], cond_key(r["condition"]), r["model"], r["id"]),
    )
    return [*own, *(r["id"] for r in others)][: max(MAX_REPLAY, len(own))]


def failure_cases(
    ws_con: Connection,
    filters: set[str] | None = None,
    disagreement: int = 2,
    models: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """The failure cases of the workspace's runs under `filters` (default: all of
    FILTERS, each a toggle on the Results screen).

    Each row: ``key`` (unique), ``filter``, ``question_id``, ``question`` (text),
    ``category``, ``as_of``, ``model``, ``conditions`` (list) and ``condition`` (label),
    ``run_ids``, ``replay_ids`` (the case's runs, then the question's other answers, see
    `replay_set`), ``reason`` (one line) and ``numbers`` (the figures behind the reason):

    - ``rag_worse``: a question × model whose RAG runs' mean judge accuracy is below its
      No-RAG runs' (latest ok LLM scores, annotators averaged; a run whose audit contradicts a
      figure counts at most 2: rightness.py); one row per pair.
    - ``disagree``: a run whose human and judge scores differ by >= `disagreement` on any
      dimension.
    - ``contradicted``: a run whose numeric audit (in its newest LLM-judge record) holds
      CONTRADICTED claims.
    - ``errors``: a run that ended error, timeout, cancelled or interrupted.
    - ``unrated``: a completed run with no human score (reference answers excepted).
    - ``incorrect`` / ``refusal``: a run whose latest human-kind score (a person's, or a label
      an imported file brought) carries that label.
    - ``oracle_flip``: a question × model whose Oracle run is right and No-RAG run wrong, or
      the reverse (right/wrong from labels, else judge accuracy >= 4 / <= 2, wrong where the
      audit contradicts a figure).
    - ``fatal_flaw``: a run whose latest fatal-flaw screening (`fintrade-tui screen`) holds
      flags; the reason lists them, ``numbers`` has ``flags``, ``details`` (each flag's
      reason, span and check), ``checks``, ``screening`` and ``screened_at``.
    - ``may_know``: a question × model answered (completed) by a model whose knowledge
      cutoff is after the question's as-of; ``numbers`` is the case's ``look_ahead`` mark.
    - ``judge_audit``: a completed run the judge gave accuracy >= 4 while its audit contradicts
      a figure it states; the reason holds both, ``numbers`` has ``judge_accuracy``,
      ``contradicted``, ``supported``, ``not_found`` and the contradicted ``claims``.

    Every case also has ``look_ahead``: ``{"look_ahead": "may know" | "after cutoff" |
    "unknown", "cutoff": ISO date or None, "basis": ...}`` for its model (from `models`, the
    registry; a model outside it by the model string or name its runs recorded).
    """
    wanted = set(FILTERS) if filters is None else set(filters)
    unknown = wanted - set(FILTERS)
    if unknown:
        known = ", ".join(FILTERS)
        raise ValueError(f"unknown failure filters {sorted(unknown)}; use {known}")
    if not wanted or not _has_table(ws_con, "runs"):
        return []
    runs = RunStore(ws_con, read_only=True).list(limit=1_000_000_000)
    runs.sort(key=lambda r: r["id"])
    scores = ScoreStore(ws_con, read_only=True)
    judge = mean_by_run(scores.latest(kind="llm"))
    human_rows = scores.latest(kind="human")
    human = mean_by_run(human_rows)
    questions = {q.id: q for q in load_questions(ws_con)} if _has_table(ws_con, "questions") else {}
    audits = latest_audits(scores)
    out: list[dict[str, Any]] = []
    if "rag_worse" in wanted:
        out += rag_worse_cases(runs, judge, audits, questions)
    if "disagree" in wanted:
        out += disagree_cases(runs, judge, human, questions, disagreement)
    if "contradicted" in wanted:
        out += contradicted_cases(runs, audits, questions)
    if "judge_audit" in wanted:
        out += judge_audit_cases(runs, judge, audits, questions)
    if "errors" in wanted:
        out += error_cases(runs, questions)
    if "unrated" in wanted:
        out += unrated_cases(runs, judge, {s["run_id"] for s in human_rows}, questions)
    labels: dict[str, list[dict[str, Any]]] = {}
    for s in human_rows:
        if s.get("label"):
            labels.setdefault(s["run_id"], []).append(s)
    for kind in ("incorrect", "refusal"):
        if kind in wanted:
            out += labelled_cases(runs, labels, kind, questions)
    if "oracle_flip" in wanted:
        out += oracle_flip_cases(runs, labels, judge, audits, questions)
    if "fatal_flaw" in wanted:
        from fintrade_tui.workspace.screenings import FlagStore

        out += fatal_flaw_cases(runs, FlagStore(ws_con, read_only=True).latest(), questions)
    from fintrade_tui.models.cutoffs import run_mark

    if "may_know" in wanted:
        out += may_know_cases(runs, questions, models or {})
    by_id = {r["id"]: r for r in runs}
    for c in out:
        first = by_id[c["run_ids"][0]]
        c["look_ahead"] = run_mark(models or {}, first, questions.get(first["question_id"]))
    by_question: dict[str, list[dict[str, Any]]] = {}
    for r in runs:
        if r["status"] == COMPLETED:
            by_question.setdefault(r["question_id"], []).append(r)
    for c in out:
        c["replay_ids"] = replay_set(c, by_question.get(c["question_id"], []))
    out.sort(
        key=lambda c: (
            FILTERS.index(c["filter"]),
            natural_key(c["question_id"] or ""),
            c["model"] or "",
            [cond_key(x) for x in c["conditions"]],
            c["run_ids"],
        )
    )
    return out
