"""Answer-checks room: the deterministic checks shown beside an answer in the Arena, the case
studies and re-scoring — the finance-aware match against the question's reference, by the kind
of reference it faces, and, for a question carrying a FinQA-style program, the answer's
calculation traced step by step against the reference's.

The verdict an analyst reads is the `tolerance` mode read as a person reads (readings.py),
measured against FinanceBench's people's verdicts (`make bench-checks`); FinQA's 5-place rule
and TAT-QA's exact match agree far less with readers (recall 0.46-0.64 on the regression set).
"Incorrect" needs a contradiction read: an answer whose figure or stance the rules cannot read
is deferred to the judge or a person, with the reason. A question whose benchmark has its own
rule (FinQA and ConvFinQA: FinQA's; TAT-QA: its own, scale scored apart) also gets that rule's
verdict beside it (`AnswerChecks.benchmark`); mode `benchmark` scores by it alone, as a
published metric does. The reference is what the mode scores against: FinQA's execution answer
(`exe_ans`), TAT-QA's annotation (answer, type, scale), else the question's reference answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fintrade_tui.scoring.answer_kinds import (
    LIST,
    NO_FIGURE,
    asks_year,
    conflicting,
    reference_kind,
    refusal,
    span_stated,
    unfinished,
)
from fintrade_tui.scoring.answer_kinds import OPEN as OPEN_KIND
from fintrade_tui.scoring.answer_match import match, tolerances
from fintrade_tui.scoring.open_reference import list_match, open_match, prose_match
from fintrade_tui.scoring.verdict import (
    DEFERRED,
    EQUAL,
    NO_REFERENCE,
    NOT_EQUAL,
    REFUSED,
    UNFINISHED,
    Match,
)

MODE_BY_SOURCE = {"finqa": "finqa", "convfinqa": "finqa", "tatqa": "tatqa"}
DEFAULT_MODE = "tolerance"  # the verdict an analyst reads (see the module docstring)
BENCHMARK = "benchmark"  # each question's own benchmark rule (mode_for)
SCALE_KEYS = ("scale", "units")  # a question's or table's own scale, where its format gives one
# FinQA operations whose result keeps its operands' units (a sum or a difference of millions)
UNIT_OPS = ("add", "subtract", "table_sum", "table_max", "table_min", "table_average")
_TABLE_SCALE = re.compile(r"\bin (thousands|millions|billions)\b", re.I)
# the question's own units: "(in USD millions)", "in $ thousands", "(in %)", "in percent"
_QUESTION_UNITS = re.compile(
    r"\(\s*in\s+[^)]{0,20}?(?:thousands|millions|billions|%|percent(?:age)?)\s*\)"
    r"|\bin\s+(?:USD\s+|US\$\s*|\$\s*)?(?:thousands|millions|billions)\b",
    re.I,
)


@dataclass(frozen=True)
class AnswerChecks:
    """What the checks found for one answer: the match, and the traces when there is a program."""

    match: Match
    trace: Any = None  # the answer's own calculation (finqa_program.Trace), if it wrote one
    reference_trace: Any = None  # the reference program's execution
    departs_at: int | None = None  # the first step of `trace` that leaves the reference's
    benchmark: Match | None = None  # the benchmark's own rule, where it has one (FinQA, TAT-QA)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the verdict with its reason and, when traced, both traces' rows."""
        m = self.match
        out: dict[str, Any] = {
            "mode": m.mode,
            "verdict": m.verdict,
            "reason": m.reason,
            "answer_value": m.answer_value,
            "reference_value": m.reference_value,
        }
        if m.em is not None:
            out |= {"em": m.em, "f1": m.f1, "scale_ok": m.scale_ok}
        b = self.benchmark
        out["benchmark_rule"] = None if b is None else {"mode": b.mode, "verdict": b.verdict,
                                                        "reason": b.reason}  # fmt: skip
        ref, own = self.reference_trace, self.trace
        out["reference_trace"] = ref.rows() if ref is not None else None
        out["trace"] = own.rows() if own is not None else None
        # the 1-based step, as the rows number them
        out["departs_at_step"] = None if self.departs_at is None else self.departs_at + 1
        return out


def mode_for(q: Any) -> str:
    """The matcher mode the question's benchmark scores by."""
    return MODE_BY_SOURCE.get(str(getattr(q, "source", "") or "").lower(), "tolerance")


def reference_for(q: Any, mode: str) -> Any:
    """What the benchmark scores against (None: the question has no reference)."""
    extra = getattr(q, "extra", None) or {}
    if mode == "tatqa" and extra.get("answer_type"):
        gold = extra.get("answer")
        gold = gold if gold is not None else q.reference_answer
        return {"answer": gold, "answer_type": extra["answer_type"], "scale": extra.get("scale")}
    if mode == "finqa" and isinstance(extra.get("exe_ans"), int | float):
        return extra["exe_ans"]
    ref = getattr(q, "reference_answer", None)
    return ref if ref not in (None, "") else None


def scale_hint(q: Any) -> str | None:
    """The units the question's figures are in: a field its format gives, else the units the
    question names ("What was net PP&E (in USD millions)?"), else the one scale
    its table states ("( in millions )" in a FinQA header) when the reference program's result
    is in the table's units — FinQA's `exe_ans` 94 is then 94 million, and an answer saying
    "$94 million" states it; a ratio (`divide`) or product is in none."""
    extra = getattr(q, "extra", None) or {}
    for key in SCALE_KEYS:
        given = extra.get(key)
        if isinstance(given, str) and given.strip():
            return given
    if asked := _QUESTION_UNITS.search(str(getattr(q, "text", "") or "")):
        return asked.group(0)
    if not _in_table_units(extra.get("program")):
        return None  # a ratio or a product of the table's figures is in no unit of the table
    cells = " ".join(str(c) for row in extra.get("table_rows") or [] for c in row)
    stated = {m.lower() for m in _TABLE_SCALE.findall(f"{cells} {getattr(q, 'text', '')}")}
    return f"in {stated.pop()}" if len(stated) == 1 else None


def _in_table_units(program: Any) -> bool:
    """Whether a reference program's result is in its table's units (no program: assumed)."""
    if not isinstance(program, str) or not program.strip():
        return True
    last = program.strip().rstrip(")").split("),")[-1]
    return last.split("(")[0].strip() in UNIT_OPS


def check_match(q: Any, answer: str, cfg: Any = None, mode: str | None = None) -> Match:
    """The answer against the question's reference under `mode` (default `tolerance`, read as
    a person reads; `benchmark`: the question's own rule), by what kind of reference it faces:
    a refusal first (never equal), then a single figure (in the question's units), yes/no (and
    the figure backing it), a list, an open-ended analysis (a claim-level line, no verdict) or a
    reference with no figure (deferred)."""
    mode = mode_for(q) if mode == BENCHMARK else (mode or DEFAULT_MODE)
    reference = reference_for(q, mode)
    if reference is None:
        return Match(NO_REFERENCE, "the question has no reference answer", mode, None, None)
    if said := refusal(answer):
        why = f'the answer declines ("{said.phrase}"): a refusal is never equal'
        return Match(REFUSED, why, mode, None, None)
    if stops := unfinished(answer):
        why = f'the answer stops mid-sentence with no final answer ("...{stops}")'
        return Match(UNFINISHED, why, mode, None, None)
    if two := conflicting(answer):
        return Match(NOT_EQUAL, f"the answer gives two final answers ({two})", mode, None, None)
    hint = scale_hint(q) if mode != "tatqa" else None  # tatqa reads the annotation's scale
    question = str(getattr(q, "text", "") or "")
    if mode == "tatqa" or not isinstance(reference, str):
        return match(answer, reference, mode, scale_hint=hint, cfg=cfg, question=question)
    kind = reference_kind(reference, asks_year(question))
    tol = tolerances(cfg)
    if kind == OPEN_KIND:
        return open_match(answer, reference, mode, hint, tol)
    if kind == LIST:
        return list_match(answer, reference, mode, hint, tol)
    if kind == NO_FIGURE and NONE_REFERENCE.match(reference):
        return none_match(question, answer, reference, mode)
    if kind == NO_FIGURE:
        if span_stated(answer, reference):
            why = f"the answer states the reference's words ('{_clip(reference)}')"
            return Match(EQUAL, why, mode, None, None)
        why = (
            f"the reference states no figure ('{_clip(reference)}'): the judge or a person decides"
        )
        return Match(DEFERRED, why, mode, None, None)
    found = match(answer, reference, mode, scale_hint=hint, cfg=cfg, question=question)
    return prose_match(answer, found, reference, tol) if is_sentence(reference) else found


def is_sentence(reference: str) -> bool:
    """A reference that says more than its figure ("$400,000,000 increase.", "AES has converted
    inventory 9.5 times in FY 2022"), not a figure alone ("$1,577.00", "4.2%", "$2,018mn")."""
    words = re.sub(r"[$€£]?[-+(]?\d[\d,.]*\)?\s*(?:%|[a-z]{1,8}\b)?", " ", reference, flags=re.I)
    return bool(re.findall(r"[A-Za-z]{2,}", words))


# a reference saying there is nothing ("There are none", "None"): the answer's stance on the
# question's claim is read as for a yes/no question, "no" meeting it
NONE_REFERENCE = re.compile(r"^\W*(?:there\s+(?:are|is|were|was)\s+)?(?:none|no\s+\w+)\W*$", re.I)


def none_match(question: str, answer: str, reference: str, mode: str) -> Match:
    """'There are none' against what the answer concludes about the question's claim: "Ulta
    Beauty does not have any debt securities registered ..." meets it; an answer listing some
    contradicts it; no stance read is deferred."""
    from fintrade_tui.scoring.stance import stance

    read = stance(question, answer)
    if read is None:
        why = f"the reference says there is none ('{_clip(reference)}'); the rules read no "
        return Match(DEFERRED, why + "stance in the answer: the judge or a person decides",
                     mode, None, None)  # fmt: skip
    says = "there is none" if read.said == "no" else "there is some"
    verdict = EQUAL if read.said == "no" else NOT_EQUAL
    why = f"the answer says {says} ('{read.phrase}'), the reference '{_clip(reference)}': "
    return Match(verdict, why + ("equal" if verdict == EQUAL else "not equal"), mode, None, None)


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def check_answer(q: Any, answer: str, cfg: Any = None, mode: str | None = None) -> AnswerChecks:
    """The match, the benchmark's own rule beside it, and, for a question with a reference
    program, the traces."""
    found = check_match(q, answer, cfg, mode)
    rule = mode_for(q)
    bench = None
    if mode in (None, DEFAULT_MODE) and rule != DEFAULT_MODE:
        bench = check_match(q, answer, cfg, rule)
    extra = getattr(q, "extra", None) or {}
    program = extra.get("program")
    if not isinstance(program, str) or not program.strip():
        return AnswerChecks(found, benchmark=bench)
    from fintrade_tui.scoring.finqa import program as fp

    table, passages = extra.get("table_norm") or extra.get("table_rows"), extra.get("passages")
    try:
        reference = fp.execute(program, table, passages)
    except Exception:  # a benchmark's broken program: the match still stands
        reference = None
    try:
        own = fp.trace_from_answer(answer or "", table, passages)
    except Exception:
        own = None
    departs = fp.first_departure(own, reference) if own is not None and reference else None
    return AnswerChecks(found, own, reference, departs, bench)
