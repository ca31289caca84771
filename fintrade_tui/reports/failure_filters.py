"""Failure-filter room (reports): one function per failure filter of failures.py, each turning
the workspace's runs and what was read of their scores into cases — `rag_worse_cases`,
`disagree_cases`, `contradicted_cases`, `judge_audit_cases`, `error_cases`, `unrated_cases`,
`labelled_cases` (incorrect, refusal), `oracle_flip_cases`, `fatal_flaw_cases`,
`may_know_cases` — and the case row they all build. Which filters run, the look-ahead mark and
the replay set every case gets, and the cases' order are failures.py's (`failure_cases`); whether
a run counts as right is rightness.py's one rule (`counts_as_right`, `correctness` here).

The inputs, as `failure_cases` reads them: `runs` the run records (RunStore rows), `judge` and
`human` run id -> dimension -> the value that counts (`mean_by_run` of
workspace/score_reader.py: an adjudicated dimension its settled score, any other the mean over
annotators), `audits` run id -> its newest numeric audit (`latest_audits`), `labels` run id ->
its labelled human-kind scores, `questions` question id -> Question.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fintrade_tui.reports.rightness import (
    audit_line,
    contradicted_claims,
    counts_as_right,
    judge_audit_line,
    judge_verdict,
)
from fintrade_tui.workspace.evidence import CONDITIONS, LABELS
from fintrade_tui.workspace.run_records import (
    CANCELLED,
    COMPLETED,
    ERROR,
    INTERRUPTED,
    TIMEOUT,
)
from fintrade_tui.workspace.scores import DIMENSIONS, credit

Runs = list[dict[str, Any]]
Cases = list[dict[str, Any]]
ByRun = Mapping[str, Mapping[str, Any]]  # run id -> a run's scores (or screening)
Audits = Mapping[str, dict[str, Any]]  # run id -> its newest numeric audit
Labels = Mapping[str, list[dict[str, Any]]]  # run id -> its labelled human-kind scores
Questions = Mapping[str, Any]  # question id -> Question

FAILED = (ERROR, TIMEOUT, CANCELLED, INTERRUPTED)
RAG, NO_RAG, ORACLE, REFERENCE = "rag", "no_rag", "oracle", "reference"


def cond_key(cond: str) -> tuple[int, str]:
    """A condition's place in the conditions' order (CONDITIONS; any other after them)."""
    return (CONDITIONS.index(cond) if cond in CONDITIONS else len(CONDITIONS), cond)


def _mean(values: Iterable[float]) -> float | None:
    v = list(values)
    return sum(v) / len(v) if v else None


def _case(
    kind: str,
    runs: Runs,
    questions: Questions,
    reason: str,
    numbers: dict[str, Any],
) -> dict[str, Any]:
    r0 = runs[0]
    q = questions.get(r0["question_id"])
    conditions = sorted({r["condition"] for r in runs}, key=cond_key)
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


def rag_worse_cases(runs: Runs, judge: ByRun, audits: Audits, questions: Questions) -> Cases:
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
        numbers: dict[str, Any] = {
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


def disagree_cases(
    runs: Runs, judge: ByRun, human: ByRun, questions: Questions, threshold: int
) -> Cases:
    """Runs whose human and judge scores differ by >= `threshold` on any dimension."""
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


def contradicted_cases(runs: Runs, audits: Audits, questions: Questions) -> Cases:
    """Runs whose numeric audit holds CONTRADICTED claims."""
    from fintrade_tui.audits.numeric import summary_line

    out = []
    for r in runs:
        audit = audits.get(r["id"])
        if audit and contradicted_claims(audit):
            numbers = _audit_numbers(audit)
            out.append(_case("contradicted", [r], questions, summary_line(audit), numbers))
    return out


def error_cases(runs: Runs, questions: Questions) -> Cases:
    """Runs that ended error, timeout, cancelled or interrupted; the first error line is the
    reason."""
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


def unrated_cases(runs: Runs, judge: ByRun, rated: set[str], questions: Questions) -> Cases:
    """Completed runs with no human score (`rated`: the run ids that have one), reference
    answers excepted."""
    out = []
    for r in runs:
        if r["status"] != COMPLETED or r["id"] in rated or r["condition"] == REFERENCE:
            continue
        acc = judge.get(r["id"], {}).get("accuracy")
        reason = "no human score" + (f" (judge accuracy {acc:g})" if acc is not None else "")
        out.append(_case("unrated", [r], questions, reason, {"judge_accuracy": acc}))
    return out


def labelled_cases(runs: Runs, labels: Labels, wanted: str, questions: Questions) -> Cases:
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
    run_id: str, labels: Labels, judge: ByRun, audits: Audits | None = None
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


def oracle_flip_cases(
    runs: Runs, labels: Labels, judge: ByRun, audits: Audits, questions: Questions
) -> Cases:
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


def judge_audit_cases(runs: Runs, judge: ByRun, audits: Audits, questions: Questions) -> Cases:
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


def fatal_flaw_cases(runs: Runs, screenings: ByRun, questions: Questions) -> Cases:
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


def may_know_cases(runs: Runs, questions: Questions, models: Mapping[str, Any]) -> Cases:
    """Question × model answered (completed) by a model whose knowledge cutoff is after the
    question's as-of (`models`: the registry)."""
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
