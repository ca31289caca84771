"""Failure cases room: the runs (or question × model pairs) worth a second look, in the style of
promptfoo's failure filters — RAG worse than No-RAG, judge and human far apart, answers the
numeric audit contradicts, runs that ended in an error, completed runs nobody rated yet, runs
labelled incorrect or a refusal, Oracle right where No-RAG is wrong (or the reverse), and
answers the fatal-flaw screen flagged (judging/flaws.py), answers given by a model whose
training data reaches past the question's as-of date (models/cutoffs.py: it may know the
outcome), and answers the judge calls right while the audit contradicts a figure they state
(`judge_audit`). Every case carries that look-ahead mark. Whether a run counts as right, here as
in the failure causes and case studies, is rightness.py's one rule.

One row per (filter, case): a run may appear under several filters, each with its own reason.
Rows come in a fixed order (filter, question in natural order, model, conditions, run ids), so
the TUI, exports and tests all see the same list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import duckdb

from fintrade_tui.reports.rightness import (
    audit_line,
    contradicted_claims,
    counts_as_right,
    judge_audit_line,
    judge_verdict,
    latest_audits,
)
from fintrade_tui.workspace.evidence import CONDITIONS, LABELS
from fintrade_tui.workspace.questions import load_questions, natural_key
from fintrade_tui.workspace.run_records import (
    CANCELLED,
    COMPLETED,
    ERROR,
    INTERRUPTED,
    TIMEOUT,
    RunStore,
)
from fintrade_tui.workspace.scores import DIMENSIONS, ScoreStore, credit, mean_by_run

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
FAILED = (ERROR, TIMEOUT, CANCELLED, INTERRUPTED)
RAG, NO_RAG, ORACLE, REFERENCE = "rag", "no_rag", "oracle", "reference"


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(
        con.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = ?", [name]
        ).fetchone()
    )


def _cond_key(cond: str) -> tuple[int, str]:
    return (CONDITIONS.index(cond) if cond in CONDITIONS else len(CONDITIONS), cond)


def _mean(values: Iterable[float]) -> float | None:
    v = list(values)
    return sum(v) / len(v) if v else None


def _case(
    kind: str,
    runs: list[dict[str, Any]],
    questions: dict[str, Any],
    reason: str,
    numbers: dict[str, Any],
) -> dict[str, Any]:
    r0 = runs[0]
    q = questions.get(r0["question_id"])
    conditions = sorted({r["condition"] for r in runs}, key=_cond_key)
    run_ids = [r["id"] for r in runs]
    return {
        "key": f"{kind}:{'+'.join(run_ids)}",
        "filter": kind,
        "question_id": r0["question_id"],
        "question": q.text if q else "",
        "category": q.category if q else "?",
        "as_of": q.as_of if q else r0.get("as_of"),
        "model": r0["model"],
        "conditions": conditions,
        "condition": " vs ".join(LABELS.get(c, c) for c in conditions),
        "run_ids": run_ids,
        "reason": reason,
        "numbers": numbers,
    }


def _rag_worse(runs, judge, audits, questions) -> list[dict[str, Any]]:
    """Each run's judge accuracy as `counts_as_right` counts it: at most WRONG where the audit
    contradicts a figure the answer states (a No-RAG answer judged 5 with wrong figures is not
    the better one)."""
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    counted: dict[str, Any] = {}
    for r in runs:
        if r["status"] == COMPLETED and r["condition"] in (RAG, NO_RAG):
            acc = judge.get(r["id"], {}).get("accuracy")
            if acc is None:
                continue
            audit = audits.get(r["id"])
            counted[r["id"]] = counts_as_right(judge_verdict(acc), "judge", audit, acc)
            key = (r["question_id"], r["model"])
            groups.setdefault(key, {}).setdefault(r["condition"], []).append(r)
    out = []
    for by_cond in groups.values():
        if RAG not in by_cond or NO_RAG not in by_cond:
            continue
        base = _mean(counted[r["id"]].accuracy for r in by_cond[NO_RAG])
        rag = _mean(counted[r["id"]].accuracy for r in by_cond[RAG])
        if base is None or rag is None or rag >= base:
            continue
        numbers = {
            "no_rag": base,
            "rag": rag,
            "delta": rag - base,
            "delta_pct": (rag - base) / base * 100.0,
        }
        reason = f"judge accuracy RAG {rag:.2g} < No-RAG {base:.2g} ({numbers['delta_pct']:+.0f}%)"
        capped = [
            (cond, r["id"])
            for cond in (NO_RAG, RAG)
            for r in by_cond[cond]
            if counted[r["id"]].accuracy != counted[r["id"]].judge
        ]
        if capped:  # the judge's own figures beside what counted, and why they differ
            numbers["judge"] = {
                cond: _mean(counted[r["id"]].judge for r in by_cond[cond]) for cond in (NO_RAG, RAG)
            }
            reason += "".join(
                f"; {LABELS[cond]} judged {counted[rid].judge:g}, counted"
                f" {counted[rid].accuracy:g}: {audit_line(audits.get(rid))}"
                for cond, rid in capped
            )
        out.append(_case("rag_worse", by_cond[NO_RAG] + by_cond[RAG], questions, reason, numbers))
    return out


def _disagree(runs, judge, human, questions, threshold: int) -> list[dict[str, Any]]:
    out = []
    for r in runs:
        h, j = human.get(r["id"]), judge.get(r["id"])
        if not h or not j:
            continue
        dims = [d for d in DIMENSIONS if d in h and d in j]
        gaps = {d: j[d] - h[d] for d in dims}
        far = [d for d in dims if abs(gaps[d]) >= threshold]
        if not far:
            continue
        numbers = {
            "human": {d: h[d] for d in dims},
            "judge": {d: j[d] for d in dims},
            "gap": gaps,
            "max_gap": max(abs(gaps[d]) for d in dims),
            "threshold": threshold,
        }
        reason = "; ".join(f"{d}: human {h[d]:g} vs judge {j[d]:g}" for d in far)
        out.append(_case("disagree", [r], questions, reason, numbers))
    return out


def _audit_numbers(audit: dict[str, Any]) -> dict[str, Any]:
    """The audit's counts and its contradicted claims, as a case's numbers."""
    verdicts = [c.get("verdict") for c in audit.get("claims") or []]
    bad = contradicted_claims(audit)
    keys = ("ticker", "indicator", "value", "unit", "store_value", "source")
    return {
        "contradicted": len(bad),
        "supported": verdicts.count("SUPPORTED"),
        "not_found": verdicts.count("NOT_FOUND"),
        "claims": [{k: c.get(k) for k in keys} for c in bad],
    }


def _contradicted(runs, audits, questions) -> list[dict[str, Any]]:
    from fintrade_tui.audits.numeric import summary_line

    out = []
    for r in runs:
        audit = audits.get(r["id"])
        if audit and contradicted_claims(audit):
            numbers = _audit_numbers(audit)
            out.append(_case("contradicted", [r], questions, summary_line(audit), numbers))
    return out


def _errors(runs, questions) -> list[dict[str, Any]]:
    out = []
    for r in runs:
        if r["status"] not in FAILED:
            continue
        err = (r.get("error") or "").strip().splitlines()
        reason = r["status"] + (f": {err[0][:160]}" if err else "")
        numbers = {
            "status": r["status"],
            "duration": r.get("duration"),
            "ttft": r.get("ttft"),
            "tokens_out": r.get("tokens_out"),
            "retries": r.get("retries"),
            "answer_chars": len(r.get("answer") or ""),
        }
        out.append(_case("errors", [r], questions, reason, numbers))
    return out


def _unrated(runs, judge, rated: set[str], questions) -> list[dict[str, Any]]:
    out = []
    for r in runs:
        if r["status"] != COMPLETED or r["id"] in rated or r["condition"] == REFERENCE:
            continue
        acc = judge.get(r["id"], {}).get("accuracy")
        reason = "no human score" + (f" (judge accuracy {acc:g})" if acc is not None else "")
        out.append(_case("unrated", [r], questions, reason, {"judge_accuracy": acc}))
    return out


def _labelled(runs, labels, wanted: str, questions) -> list[dict[str, Any]]:
    """Runs a person (or a file's scorer) labelled `wanted`: incorrect or refusal."""
    out = []
    for r in runs:
        mine = [s for s in labels.get(r["id"], []) if (s["label"] or "").lower() == wanted]
        if not mine:
            continue
        who = ", ".join(sorted({s["annotator"] for s in mine}))
        note = next((s["note"] for s in mine if s["note"]), "")
        reason = f"labelled {wanted} by {who}" + (
            f": {' '.join(note.split())[:120]}" if note else ""
        )
        numbers = {"label": wanted, "annotators": who}
        out.append(_case(wanted, [r], questions, reason, numbers))
    return out


def correctness(
    run_id: str, labels, judge, audits: Mapping[str, Any] | None = None
) -> tuple[bool | None, str]:
    """Is a run right? From its labels (their mean credit: 1 right, 0 wrong, between: unknown),
    else from the judge's accuracy (>= 4 right, <= 2 wrong) as `counts_as_right` counts it:
    wrong where the audit contradicts a figure. (verdict, what it rests on)."""
    credits = [c for s in labels.get(run_id, []) if (c := credit(s["label"])) is not None]
    if credits:
        mean = sum(credits) / len(credits)
        return (True if mean == 1 else False if mean == 0 else None), "label"
    acc = judge.get(run_id, {}).get("accuracy")
    if acc is None:
        return None, ""
    v = counts_as_right(judge_verdict(acc), "judge", (audits or {}).get(run_id), acc)
    why = f"judge {acc:g}" + (f", counted wrong: {v.why}" if v.by == "audit" else "")
    return v.right, why


def _oracle_flip(runs, labels, judge, audits, questions) -> list[dict[str, Any]]:
    """Question × model where Oracle is right and No-RAG wrong, or No-RAG right, Oracle wrong."""
    groups: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = {}
    for r in runs:
        if r["status"] == COMPLETED and r["condition"] in (ORACLE, NO_RAG):
            groups.setdefault((r["question_id"], r["model"]), {}).setdefault(
                r["condition"], []
            ).append(r)
    out = []
    for by_cond in groups.values():
        for o in by_cond.get(ORACLE, []):
            for b in by_cond.get(NO_RAG, []):
                (ok_o, why_o), (ok_b, why_b) = (
                    correctness(x["id"], labels, judge, audits) for x in (o, b)
                )
                if ok_o is None or ok_b is None or ok_o == ok_b:
                    continue
                way = "Oracle right, No-RAG wrong" if ok_o else "No-RAG right, Oracle wrong"
                numbers = {"oracle": why_o, "no_rag": why_b, "oracle_right": ok_o}
                out.append(_case("oracle_flip", [b, o], questions, way, numbers))
    return out


def _judge_audit(runs, judge, audits, questions) -> list[dict[str, Any]]:
    """Completed runs the judge calls right (accuracy >= 4) while their audit contradicts a
    figure they state: both sides in the reason and the numbers."""
    out = []
    for r in runs:
        acc = judge.get(r["id"], {}).get("accuracy")
        line = judge_audit_line(acc, audits.get(r["id"]))
        if r["status"] == COMPLETED and line:
            numbers = {"judge_accuracy": acc, **_audit_numbers(audits[r["id"]])}
            out.append(_case("judge_audit", [r], questions, line, numbers))
    return out


def _fatal_flaw(runs, screenings, questions) -> list[dict[str, Any]]:
    """Runs whose latest fatal-flaw screening holds flags; the flags are the reason."""
    out = []
    for r in runs:
        s = screenings.get(r["id"])
        if not s or not s["flags"]:
            continue
        reason = "; ".join(f"{f['flag']}: {' '.join(f['reason'].split())}" for f in s["flags"])
        numbers = {
            "flags": [f["flag"] for f in s["flags"]],
            "details": s["flags"],
            "checks": s["checks"],
            "screening": s["id"],
            "screened_at": s["created_at"],
        }
        out.append(_case("fatal_flaw", [r], questions, reason, numbers))
    return out


MAX_REPLAY = 6  # answers side by side when a case is replayed


def replay_set(case: dict[str, Any], answers: list[dict[str, Any]]) -> list[str]:
    """The runs a case replays: its own, then the question's other answers — the same model
    under the other conditions first, then other models — at most MAX_REPLAY."""
    own = list(case["run_ids"])
    others = sorted(
        (r for r in answers if r["id"] not in own),
        key=lambda r: (r["model"] != case["model"], _cond_key(r["condition"]), r["model"], r["id"]),
    )
    return [*own, *(r["id"] for r in others)][: max(MAX_REPLAY, len(own))]


def _may_know(runs, questions, models) -> list[dict[str, Any]]:
    from fintrade_tui.models.cutoffs import MAY_KNOW, describe, run_mark

    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in runs:
        if r["status"] == COMPLETED and r["model"] != REFERENCE:
            groups.setdefault((r["question_id"], r["model"]), []).append(r)
    out = []
    for (_, model), group in groups.items():
        marked = run_mark(models, group[0], questions.get(group[0]["question_id"]))
        if marked["look_ahead"] == MAY_KNOW:
            out.append(_case("may_know", group, questions, describe(marked, model), marked))
    return out


def failure_cases(
    ws_con: duckdb.DuckDBPyConnection,
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
        out += _rag_worse(runs, judge, audits, questions)
    if "disagree" in wanted:
        out += _disagree(runs, judge, human, questions, disagreement)
    if "contradicted" in wanted:
        out += _contradicted(runs, audits, questions)
    if "judge_audit" in wanted:
        out += _judge_audit(runs, judge, audits, questions)
    if "errors" in wanted:
        out += _errors(runs, questions)
    if "unrated" in wanted:
        out += _unrated(runs, judge, {s["run_id"] for s in human_rows}, questions)
    labels: dict[str, list[dict[str, Any]]] = {}
    for s in human_rows:
        if s.get("label"):
            labels.setdefault(s["run_id"], []).append(s)
    for kind in ("incorrect", "refusal"):
        if kind in wanted:
            out += _labelled(runs, labels, kind, questions)
    if "oracle_flip" in wanted:
        out += _oracle_flip(runs, labels, judge, audits, questions)
    if "fatal_flaw" in wanted:
        from fintrade_tui.workspace.screenings import FlagStore

        out += _fatal_flaw(runs, FlagStore(ws_con, read_only=True).latest(), questions)
    from fintrade_tui.models.cutoffs import run_mark

    if "may_know" in wanted:
        out += _may_know(runs, questions, models or {})
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
            [_cond_key(x) for x in c["conditions"]],
            c["run_ids"],
        )
    )
    return out
