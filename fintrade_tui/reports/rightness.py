"""Rightness room (reports): whether a run counts as right — one rule for every report that
asks: the failure causes (causes.py), the failure filters that compare answers (`rag_worse`,
`oracle_flip`, `judge_audit`: failure_filters.py) and the verdict a case study shows beside its
scores (exports/case_data.py).

What the scores say, the last that speaks deciding (`score_verdict`): the LLM judge's accuracy
(mean over judges: >= RIGHT right, <= WRONG wrong, between: no verdict), then the answer
matcher's label (`judge --rescore`), then a person's accuracy, then a person's label.

**The numeric audit overrules the machines** (`counts_as_right`): an answer whose audit holds a
CONTRADICTED figure (against the store, or the supplied evidence and reference) is not right,
whatever the judge or the matcher gave: it counts as wrong, decided "by audit" (so does one
nothing called right or wrong), and the judge's accuracy counts at most WRONG wherever
accuracies are compared (`rag_worse`). The audit can take "right" away, never give it: an
answer whose figures are all supported may still conclude wrongly (the `reasoning` cause). A
person's label or score stands: a person has read the figures, and may know the store's value
is not the one to hold them to (another period, another definition).

**Judge–audit disagreement** (`judge_audit_line`): the judge gave accuracy >= RIGHT and the
audit contradicts a stated figure. Both are shown, and the failure filter `judge_audit` lists
the run. The reverse — judge low, every figure supported — is no disagreement: right figures
with a wrong conclusion is what the judge is there to catch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fintrade_tui.audits.verdicts import CONTRADICTED
from fintrade_tui.workspace.score_reader import mean_by_run
from fintrade_tui.workspace.scores import ScoreStore

RIGHT, WRONG = 4, 2  # without a label, judge accuracy >= 4 is right and <= 2 wrong
MACHINES = ("judge", "matcher")  # the verdicts the audit overrules; a person's stands
_LABELS = {"correct": "right", "incorrect": "wrong", "refusal": "refused"}


@dataclass(frozen=True)
class Verdict:
    """Whether a run counts as right, and on what.

    `verdict`: "right", "wrong", "refused" or None (no verdict); `by`: what decided it (label,
    human, matcher, judge, audit; "" for nothing); `why`: one line when the audit decided;
    `judge`: the judge's accuracy as given (mean over judges); `accuracy`: as reports count it
    (at most WRONG when the audit contradicts a figure); `contradicted`: the audit's
    CONTRADICTED figures; `judge_audit`: the judge–audit disagreement as one line, or None."""

    verdict: str | None
    by: str = ""
    why: str = ""
    judge: float | None = None
    accuracy: float | None = None
    contradicted: int = 0
    judge_audit: str | None = None

    @property
    def right(self) -> bool | None:
        """True right, False wrong or refused, None without a verdict."""
        return None if self.verdict is None else self.verdict == "right"

    def line(self) -> str:
        """The verdict on one line, both sides shown where judge and audit disagree."""
        said = "no verdict" if self.verdict is None else f"{self.verdict} (by {self.by})"
        if self.why:
            said += f": {self.why}"
        if self.judge_audit and self.by != "audit":
            said += f"; judge ≠ audit: {self.judge_audit}"
        if self.judge is not None and self.accuracy != self.judge:
            said += f"; the judge's accuracy counts as {self.accuracy:g}"
        return said


def latest_audits(scores: ScoreStore) -> dict[str, dict[str, Any]]:
    """run id -> the numeric audit of its newest LLM-judge or re-scoring (`match`) record (a
    judge failure keeps its audit too: the audit is deterministic and runs before the judge)."""
    out: dict[str, tuple[Any, dict[str, Any]]] = {}
    for s in scores.latest(status=None):
        audit = s["detail"].get("audit") if s["kind"] in ("llm", "match") else None
        if audit and (s["run_id"] not in out or s["created_at"] > out[s["run_id"]][0]):
            out[s["run_id"]] = (s["created_at"], audit)
    return {rid: a for rid, (_, a) in out.items()}


def contradicted_claims(audit: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The audit's CONTRADICTED claims, in the answer's order."""
    return [c for c in (audit or {}).get("claims") or [] if c.get("verdict") == CONTRADICTED]


def _claim(c: Mapping[str, Any]) -> str:
    """One contradicted figure against what contradicts it: "ROE 25.1% vs 0.264 in the store"."""
    if c.get("room") == "text":
        return f"{c.get('text')} vs {c.get('matched', c.get('store_value'))} in the reference"
    from fintrade_tui.audits.indicator_mentions import LABEL_ALL

    name = LABEL_ALL.get(c.get("indicator") or "", c.get("indicator") or "a figure")
    value, unit = c.get("value"), c.get("unit") or ""
    stated = f"{value:g}{unit}" if isinstance(value, int | float) else f"{c.get('text') or '?'}"
    store = c.get("store_value")
    held = f"{store:.4g}" if isinstance(store, int | float) else "another value"
    return f"{name} {stated} vs {held} in the store"


def audit_line(audit: Mapping[str, Any] | None) -> str:
    """ "the audit contradicts 3 of its figures (ROE 25.1% vs 0.264 in the store; …)", or ""
    when it contradicts none."""
    bad = contradicted_claims(audit)
    if not bad:
        return ""
    shown = "; ".join(_claim(c) for c in bad[:3]) + ("; …" if len(bad) > 3 else "")
    return f"the audit contradicts {len(bad)} of its figures ({shown})"


def judge_audit_line(judge: float | None, audit: Mapping[str, Any] | None) -> str | None:
    """The judge–audit disagreement as one line (judge >= RIGHT, a figure contradicted), else
    None."""
    if judge is None or judge < RIGHT or not contradicted_claims(audit):
        return None
    return f"the judge gave accuracy {judge:g}, but {audit_line(audit)}"


def judge_verdict(accuracy: float | None) -> str | None:
    """The judge's accuracy as a verdict: >= RIGHT right, <= WRONG wrong, else None."""
    if accuracy is None:
        return None
    return "right" if accuracy >= RIGHT else "wrong" if accuracy <= WRONG else None


def counts_as_right(
    said: str | None,
    by: str,
    audit: Mapping[str, Any] | None,
    judge: float | None = None,
) -> Verdict:
    """Whether a run counts as right: `said` ("right", "wrong", "refused" or None) is what its
    scores say and `by` what said it (`score_verdict`), `audit` its numeric audit
    (`latest_audits`), `judge` the LLM judge's accuracy if it has one.

    An answer whose audit contradicts a figure and that a machine (judge, matcher) called right,
    or nothing called right or wrong, becomes "wrong" by "audit", with the reason as `why`; a
    verdict of wrong or refused keeps its source, and a person's verdict stands. The judge's
    accuracy counts at most WRONG then. The judge–audit disagreement is noted whoever
    decided."""
    bad = len(contradicted_claims(audit))
    accuracy = judge if judge is None or not bad else min(judge, WRONG)
    disagreement = judge_audit_line(judge, audit)
    if bad and (said is None or (said == "right" and by in MACHINES)):
        if by == "judge" and disagreement:
            why = disagreement
        elif said == "right":
            why = f"the {by} called it right, but {audit_line(audit)}"
        else:
            why = audit_line(audit)
        return Verdict("wrong", "audit", why, judge, accuracy, bad, disagreement)
    return Verdict(said, by if said else "", "", judge, accuracy, bad, disagreement)


def score_verdict(
    judge: float | None,
    match: Mapping[str, Any] | None = None,
    human: float | None = None,
    labels: Iterable[str | None] = (),
) -> tuple[str | None, str]:
    """(verdict, by) from a run's scores, the last that speaks deciding: the judge's accuracy,
    the matcher's score row, a person's accuracy (>= RIGHT right, <= WRONG wrong), a person's
    label (correct, incorrect, refusal)."""
    out: tuple[str | None, str] = (None, "")
    if (v := judge_verdict(judge)) is not None:
        out = (v, "judge")
    if match is not None:
        v = _LABELS.get(match.get("label") or "")
        if (match.get("detail") or {}).get("verdict") == "refused":
            v = "refused"
        if v:
            out = (v, "matcher")
    if (v := judge_verdict(human)) is not None:
        out = (v, "human")
    for label in labels:
        if v := _LABELS.get((label or "").lower()):
            out = (v, "label")
    return out


def run_verdicts(
    scores: ScoreStore,
    audits: Mapping[str, Mapping[str, Any]] | None = None,
    run_ids: list[str] | None = None,
) -> dict[str, Verdict]:
    """run id -> its Verdict, for every run (or those of `run_ids`) with a score or an audit;
    `audits`: `latest_audits(scores)` when the caller has it."""
    audits = latest_audits(scores) if audits is None else audits
    judge = mean_by_run(scores.latest(kind="llm", run_ids=run_ids))
    match = {s["run_id"]: s for s in scores.latest(kind="match", run_ids=run_ids)}
    human_rows = scores.latest(kind="human", run_ids=run_ids)
    human = mean_by_run(human_rows)
    labels: dict[str, list[str | None]] = {}
    for s in human_rows:
        labels.setdefault(s["run_id"], []).append(s.get("label"))
    wanted = set(run_ids) if run_ids is not None else None
    ids = set(judge) | set(match) | set(human) | set(labels) | set(audits)
    out = {}
    for rid in sorted(ids if wanted is None else ids & wanted):
        acc = judge.get(rid, {}).get("accuracy")
        said, by = score_verdict(
            acc, match.get(rid), human.get(rid, {}).get("accuracy"), labels.get(rid, ())
        )
        out[rid] = counts_as_right(said, by, audits.get(rid), acc)
    return out
