"""Failure-causes room: why each failed answer (a question × model × condition run judged wrong
or refused) failed, from the conditions the same model answered the question under and what
each saw — by deterministic rules, the first that fires, each with its firing rule as a line:

1. `refused`: the answer declines (a refusal label, or the matcher's `refused` verdict);
2. `benchmark_suspect`: the question's reference is disputed (workspace/disputes.py), or a
   suspect rule fires for it (audits/suspects.py);
3. `knew_it`: wrong with evidence, right under No-RAG: the model knew it and the evidence led
   it astray;
4. `retrieval_miss`: wrong under RAG, right under Oracle, and RAG's evidence lacks figures the
   question needs (evidence recall < 1, audits/recall.py);
5. `misread`: the needed figures were in its evidence (recall 1, or the Oracle's own) and the
   answer contradicts a figure (its numeric audit has CONTRADICTED claims);
6. `reasoning`: the answer's calculation leaves the reference program's at some step (a
   question with a FinQA-style program: scoring/answer_checks.py traces both), or its figures
   are right (audit: supported, none contradicted) and the conclusion is not;
7. `undetermined`: none fired; the line says what is missing to decide (an Oracle run, a
   figure the question needs, an audit).

Right or wrong: a person's label, else a person's accuracy (>= 4 right, <= 2 wrong), else the
answer matcher's label (`judge --rescore`), else the LLM judge's accuracy — and an answer whose
numeric audit contradicts a figure it states is wrong whatever the matcher or the judge gave
(`by` "audit"; reports/rightness.py, the one rule the failure filters and case studies read too).
A run counted wrong that way says so in its rule, and so does a RAG or Oracle run whose No-RAG
(or Oracle) answer the judge called right but the audit did not: no `knew_it` (`retrieval_miss`)
rests on it.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from fintrade_tui.audits.recall import evidence_recall, run_texts
from fintrade_tui.audits.verdicts import CONTRADICTED, SUPPORTED
from fintrade_tui.reports.rightness import Verdict, latest_audits, run_verdicts
from fintrade_tui.reports.suspects import workspace_suspects
from fintrade_tui.workspace.disputes import DisputeStore
from fintrade_tui.workspace.evidence import LABELS
from fintrade_tui.workspace.questions import load_questions, natural_key
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.scores import ScoreStore

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

CAUSES = (
    "refused",
    "benchmark_suspect",
    "knew_it",
    "retrieval_miss",
    "misread",
    "reasoning",
    "undetermined",
)
CAUSE_LABELS = {
    "refused": "refused",
    "benchmark_suspect": "benchmark suspect",
    "knew_it": "knew it",
    "retrieval_miss": "retrieval miss",
    "misread": "misread",
    "reasoning": "reasoning",
    "undetermined": "undetermined",
}
NO_RAG, RAG, ORACLE = "no_rag", "rag", "oracle"


def _claims(audit: dict[str, Any] | None) -> Counter:
    return Counter(c.get("verdict") for c in (audit or {}).get("claims") or [])


def attribute(
    run: dict[str, Any],
    verdict: str,
    others: dict[str, tuple[dict[str, Any], str]],
    recall: dict[str, Any] | None,
    audit: dict[str, Any] | None,
    dispute: dict[str, Any] | None,
    suspect: list[dict[str, str]] | None = None,
    departs: int | None = None,
) -> tuple[str, str]:
    """(cause, the rule that fired) for one failed run; `others`: condition -> (the same model's
    run of the question under it, its verdict); `departs`: the 0-based step where the answer's
    calculation leaves the reference program's, if it does."""
    cond = run["condition"]
    if verdict == "refused":
        return "refused", "the answer declines to answer"
    if dispute:
        why = f"the reference is disputed as {dispute['kind']} by {dispute['who']}"
        return "benchmark_suspect", f"{why}: {dispute['reason']}"
    if suspect:
        return "benchmark_suspect", f"suspect reference ({suspect[0]['rule']}): {suspect[0]['why']}"
    base = others.get(NO_RAG)
    if cond != NO_RAG and base and base[1] == "right":
        return "knew_it", f"right under No-RAG (run {base[0]['id']}), wrong with this evidence"
    oracle = others.get(ORACLE)
    found = recall["found"] if recall else 0
    n = recall["needed"] if recall else 0
    if cond == RAG and oracle and oracle[1] == "right" and recall and n and found < n:
        missing = ", ".join(recall["missing"][:4])
        return "retrieval_miss", (
            f"right under Oracle (run {oracle[0]['id']}); RAG's evidence states {found} of the"
            f" {n} figures the question needs (missing: {missing})"
        )
    claims = _claims(audit)
    held = cond == ORACLE or bool(recall and n and found == n)
    if claims[CONTRADICTED] and held:
        where = "the Oracle's evidence" if cond == ORACLE else f"the evidence (recall {found}/{n})"
        return "misread", (
            f"{where} states the figures the question needs; the answer contradicts"
            f" {claims[CONTRADICTED]} figure{'s' * (claims[CONTRADICTED] != 1)}"
        )
    if departs is not None:
        return "reasoning", (
            f"the answer's calculation leaves the reference program's at step {departs + 1}"
        )
    if claims[SUPPORTED] and not claims[CONTRADICTED]:
        return "reasoning", (
            f"the answer's figures are right ({claims[SUPPORTED]} supported, none contradicted);"
            " its conclusion or calculation is not"
        )
    return "undetermined", _missing(cond, oracle, recall, claims, audit)


def _missing(cond: str, oracle: Any, recall: Any, claims: Counter, audit: Any) -> str:
    lacks = []
    if cond == RAG and not oracle:
        lacks.append("no Oracle run of this model")
    elif cond == RAG and oracle and oracle[1] != "right":
        lacks.append("the Oracle answer is not right either")
    if recall is not None and not recall["needed"]:
        lacks.append("the question names no figure to look for")
    if audit is None:
        lacks.append("no numeric audit of the answer (judge or re-score it)")
    elif claims[CONTRADICTED]:
        lacks.append("figures contradicted, but the evidence did not state them all")
    elif not claims[SUPPORTED]:
        lacks.append("the answer states no figure the audit could check")
    return "; ".join(lacks) or "no rule fired"


def calculation_departs_at(q: Any, run: dict[str, Any]) -> int | None:
    """Where the answer's calculation leaves the reference program's (None: no program, no
    calculation in the answer, or no departure)."""
    if q is None or not (q.extra or {}).get("program") or not run.get("answer"):
        return None
    from fintrade_tui.scoring.answer_checks import check_answer

    return check_answer(q, run["answer"]).departs_at


def _not_right(cond: str, conds: dict[str, tuple[dict[str, Any], Verdict]]) -> str:
    """A note for a RAG or Oracle run: the No-RAG (and, under RAG, the Oracle) answer the judge
    called right and the audit did not, so no `knew_it` / `retrieval_miss` rests on it."""
    others = [NO_RAG] if cond != NO_RAG else []
    others += [ORACLE] if cond == RAG else []
    notes = [
        f"{LABELS[o]} run {conds[o][0]['id']} is not right: {conds[o][1].why}"
        for o in others
        if o in conds and conds[o][1].by == "audit" and conds[o][1].judge_audit
    ]
    return "".join(f"; {n}" for n in notes)


def failure_causes(ws: Connection) -> list[dict[str, Any]]:
    """One row per failed completed run (reference answers excepted): question_id, category,
    as_of, model, condition, run_id, verdict (wrong | refused) and by (label, human, matcher,
    judge, audit), cause, rule, recall (evidence_recall of its evidence, or None without
    evidence). Verdicts are reports/rightness.py's."""
    runs = [
        r
        for r in RunStore(ws, read_only=True).list(status=COMPLETED, limit=1_000_000_000)
        if r["model"] != "reference"
    ]
    scores = ScoreStore(ws, read_only=True)
    audits = latest_audits(scores)
    said = run_verdicts(scores, audits)
    questions = {q.id: q for q in load_questions(ws)}
    disputes = DisputeStore(ws, read_only=True).latest()
    suspects = workspace_suspects(ws)
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in sorted(runs, key=lambda r: (str(r.get("started_at") or ""), r["id"])):
        latest[(r["question_id"], r["model"], r["condition"])] = r  # the newest run counts
    by_pair: dict[tuple[str, str], dict[str, tuple[dict[str, Any], Verdict]]] = {}
    for (qid, model, cond), r in latest.items():
        if r["id"] in said and said[r["id"]].verdict:
            by_pair.setdefault((qid, model), {})[cond] = (r, said[r["id"]])
    out = []
    for (qid, model), conds in by_pair.items():
        q = questions.get(qid)
        # by_pair holds only runs with a verdict: `or ""` never applies
        plain = {c: (r, v.verdict or "") for c, (r, v) in conds.items()}
        for cond, (r, v) in conds.items():
            verdict = plain[cond][1]
            if verdict == "right":
                continue
            texts = run_texts(r)
            recall = evidence_recall(q, texts) if q is not None and texts else None
            cause, rule = attribute(
                r, verdict, plain, recall, audits.get(r["id"]), disputes.get(qid),
                suspects.get(qid), calculation_departs_at(q, r),
            )  # fmt: skip
            if v.by == "audit":
                rule += f" (counted wrong: {v.why})"
            if cause not in ("refused", "benchmark_suspect"):
                rule += _not_right(cond, conds)
            out.append(
                {
                    "question_id": qid,
                    "category": q.category if q else "?",
                    "as_of": q.as_of.isoformat() if q and q.as_of else None,
                    "model": model,
                    "condition": cond,
                    "run_id": r["id"],
                    "verdict": v.verdict,
                    "by": v.by,
                    "cause": cause,
                    "rule": rule,
                    "recall": recall,
                }
            )
    out.sort(key=lambda c: (natural_key(c["question_id"]), c["model"], c["condition"], c["run_id"]))
    return out


def cause_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """cause × category × condition: how many failed answers each, in CAUSES order."""
    counts = Counter((r["cause"], r["category"], r["condition"]) for r in rows)
    return [
        {"cause": cause, "category": cat, "condition": cond, "n": n}
        for (cause, cat, cond), n in sorted(
            counts.items(), key=lambda kv: (CAUSES.index(kv[0][0]), kv[0][1], kv[0][2])
        )
    ]


def annotate(cases: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    """Give each failure case (reports/failures.py) the cause of its first run that has one:
    `cause` and `cause_rule` (None when none of its runs failed with a verdict)."""
    by_run = {r["run_id"]: r for r in rows}
    for case in cases:
        hit = next((by_run[rid] for rid in case["run_ids"] if rid in by_run), None)
        case["cause"] = hit["cause"] if hit else None
        case["cause_rule"] = hit["rule"] if hit else None
