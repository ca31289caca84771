"""Answer-matching room: does an answer state the reference's figure, under a named scoring mode?

`match(answer, reference, mode)` reads both with the finance-numbers room and always says why:
"answer 12.5% = 0.125, reference 0.125: equal under FinQA's rule (rounded to 5 places)".

Modes:
- `finqa`: FinQA's execution-accuracy test (czyssrs/FinQA code/evaluate/evaluate.py): the
  answer's figure, a percentage divided by 100, rounded to 5 places, must equal the reference
  (the published `exe_ans`) exactly. FinQA's own script reads only plain numbers and "n%"; the
  reason says so when the answer's figure is written otherwise ("$1.2 billion", "(3.2%)").
- `tatqa`: TAT-QA's exact match and numeracy-focused F1 (NExTplusplus/TAT-QA tatqa_metric.py),
  with the scale scored separately (see tatqa_score.py).
- `tolerance`: |answer - reference| <= max(rel_tol * |reference|, abs_tol), from config
  `judging.match` (rel_tol 1%, abs_tol 1e-9 by default).
In every mode a percentage and a fraction are one value (12.5% = 0.125); a plain number is not
read as a percentage (14.1 vs 0.141 is "a factor of 100 apart", said as a hint). The figure
picked from a long answer is the last one after an "answer:" marker if any, else the last one of
the reference's kind (percent, currency, multiple), else the last one; years are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.scoring.answer_kinds import REFUSAL_PATTERN, yes_no
from fintrade_tui.scoring.figure import PLAIN, Figure, fmt, scale_of, with_scale
from fintrade_tui.scoring.figures import figures
from fintrade_tui.scoring.finqa.dsl import str_to_num
from fintrade_tui.scoring.readings import (
    about_same,
    agrees,
    as_a_person,
    close,
    in_units,
    strict_miss,
)
from fintrade_tui.scoring.tatqa import tatqa_match
from fintrade_tui.scoring.verdict import (
    DEFERRED,
    EQUAL,
    IN_RANGE,
    NO_NUMBER,
    NO_REFERENCE,
    NOT_EQUAL,
    Match,
    pick,
)

MODES = ("finqa", "tatqa", "tolerance")
GIVEN = (-1, -1)  # the span of a reference given as a number, in no text


def match(
    answer: str | list[str],
    reference: str | float | Mapping[str, Any],
    mode: str = "tolerance",
    *,
    scale_hint: str | None = None,
    answer_scale: str | None = None,
    cfg: Any = None,
    question: str | None = None,
) -> Match:
    """Compare `answer` with `reference` under `mode`.

    `reference`: a figure as text or a number (FinQA's `exe_ans`), "yes"/"no", or a TAT-QA
    annotation {"answer", "answer_type", "scale"}. `scale_hint`: the question's or table's units
    ("in millions"), applied to figures that state none. `answer_scale`: the answer's own scale
    (for `tatqa`, a prediction's scale: the answer is then taken in TAT-QA's prediction format,
    unconverted). `cfg`: a Config, for the tolerance mode's `judging.match`. `question`: the
    question's text — the figure held against the reference is then the one about the period
    it asks, and the tolerance mode also reads the answer as a person would (a percentage
    where the question asks one, a scale the reference leaves unstated, the answer's own
    precision).
    """
    if mode not in MODES:
        raise UserError("answer match", f"unknown mode '{mode}'", f"use one of {', '.join(MODES)}")
    if mode == "tatqa":
        return tatqa_match(answer, reference, scale_hint=scale_hint, answer_scale=answer_scale)
    given: Any = reference  # a TAT-QA annotation's answer below: any JSON value
    if isinstance(reference, Mapping):  # a TAT-QA annotation scored by value
        scale_hint = reference.get("scale") or scale_hint
        gold = reference.get("answer")
        if isinstance(gold, list) and len(gold) > 1:
            why = f"reference lists {len(gold)} answers ({', '.join(map(str, gold))})"
            return Match(NO_REFERENCE, why + ": only the tatqa mode scores lists", mode, None, None)
        given = gold[0] if isinstance(gold, list) and gold else gold
    text = " ".join(map(str, answer)) if isinstance(answer, list) else str(answer or "")
    ref = reference_figure(given, scale_hint)
    # the answer's own scale if given; a percent context is the reference's only (an answer
    # writes "%" when it means one: "0.2212" for 22.12 percent is the fraction)
    hint = answer_scale or (None if scale_hint and _is_percent(scale_hint) else scale_hint)
    if isinstance(ref, str):
        return _words(text, ref, mode, str(given), scale_hint, cfg, question)
    if ref is None:
        return Match(NO_REFERENCE, f"reference {_quote(given)} has no figure", mode, None, None)
    yearly = ref.is_year or (ref.value == int(ref.value) and 1900 <= ref.value <= 2100)
    found = [f for f in figures(text, hint) if yearly or not f.is_year]
    if not found:
        why = f"no figure in the answer (reference {ref.describe()})"
        return Match(NO_NUMBER, why, mode, None, ref.value, reference_figure=ref)
    fig = pick(text, found, ref, question)
    if mode == "finqa":
        verdict, core = _finqa(fig, ref)
    else:
        verdict, core = _tolerance(fig, ref, tolerances(cfg))
        read = None
        if verdict == NOT_EQUAL and question is not None:  # as a person reads it (readings.py)
            read = as_a_person(fig, ref, question, text, found, tolerances(cfg))
        verdict, core = (EQUAL, read) if read else (verdict, core)
    notes = _notes(verdict, text, fig, ref, found, mode, cfg)
    reason = f"answer {fig.describe()}, reference {ref.describe()}: {core}" + notes
    return Match(verdict, reason, mode, fig.value, ref.value, fig, ref)


def reference_figure(reference: Any, scale_hint: str | None = None) -> Figure | str | None:
    """The reference as a figure; "yes"/"no" as the word; None when it states no figure."""
    if isinstance(reference, bool) or reference is None:
        return None
    if isinstance(reference, int | float):
        v = float(reference)
        if not math.isfinite(v):
            return None
        text = repr(v) if "e" not in repr(v) else fmt(v)
        fig = Figure(text, GIVEN, v, v, PLAIN, decimals=_decimals(text))
        hint = scale_of(scale_hint)
        return with_scale(fig, hint) if hint else fig
    text = str(reference).strip()
    if word := yes_no(text):
        return word
    found = figures(text, scale_hint)
    years = [f for f in found if not f.is_year]
    return (years or found)[-1] if found else None


def _is_percent(hint: str) -> bool:
    scale = scale_of(hint)
    return scale is not None and scale[1] == "percent"


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _words(text: str, ref: str, mode: str, reference: str, hint: str | None, cfg: Any,
           question: str | None = None) -> Match:  # fmt: skip
    """Yes/no: the stance the answer concludes (scoring/stance.py: the word, or the claim
    restated, or the direction stated), then the figure that backs the reference's ("Yes,
    revenue grew 12%"): a yes resting on a figure the answer gets wrong is not equal. No stance
    read: deferred, never not equal."""
    from fintrade_tui.scoring.stance import stance

    read = stance(question or "", text)
    if read is None:
        why = f"the rules read no yes or no in the answer (reference {ref}): the judge or a "
        return Match(DEFERRED, why + "person decides", mode, None, ref)
    said = read.said
    if read.how != "the word" and (declines := REFUSAL_PATTERN.search(text)):
        why = f"the answer declines in part ('{declines.group(0)}') and states no yes or no: "
        return Match(DEFERRED, why + "the judge or a person decides", mode, None, ref)
    how = "" if read.how == "the word" else f" ({read.how}: '{read.phrase}')"
    if said != ref:
        why = f"answer says {said}{how}, reference {ref}: not equal"
        return Match(NOT_EQUAL, why, mode, said, ref)
    backing = [f for f in figures(reference, hint) if not f.is_year]
    stated = [f for f in figures(text, hint) if not f.is_year]
    tol = tolerances(cfg)
    for r in backing:
        same = [f for f in stated if f.kind == r.kind and _comparable(f.value, r.value)]
        if any(agrees(f, r, tol) for f in same):
            continue
        same = [f for f in same if about_same(f, r)]  # a figure about another thing is no backing
        if same:
            why = f"answer says {said}{how}, reference {ref}, but the figure backing it is "
            why += f"{r.text} and the answer states {same[-1].text}: not equal"
            return Match(NOT_EQUAL, why, mode, said, ref, same[-1], r)
    why = f"answer says {said}{how}, reference {ref}: equal"
    agreed = [r.text for r in backing if any(agrees(f, r, tol) for f in stated)]
    if agreed:
        why += f" (and states the reference's {', '.join(agreed[:2])})"
    return Match(EQUAL, why, mode, said, ref)


def _comparable(a: float, r: float) -> bool:
    """Of one magnitude (within a factor of 10): figures about the same quantity."""
    return a != 0 and r != 0 and 0.1 <= abs(a / r) <= 10


def _quote(value: Any) -> str:
    text = str(value)
    return f"'{text[:60]}...'" if len(text) > 60 else f"'{text}'"


# --- the modes --------------------------------------------------------------------------------
def _finqa_cmp(fig: Figure, ref: Figure) -> tuple[float, float]:
    """Both in the reference's units (the table's, when a scale hint set them), as FinQA has it.
    A published exe_ans is compared as given (the script does not round it); a reference written
    as text ("18.6%") is first rounded as FinQA's execution would have rounded it."""
    r = ref.value / ref.scale
    return fig.value / ref.scale, r if ref.span == GIVEN else round(r, 5)


def _finqa(fig: Figure, ref: Figure) -> tuple[str, str]:
    if fig.is_range or ref.is_range:
        same = lambda a, r: round(a / ref.scale, 5) == r / ref.scale  # noqa: E731
        return _range(fig, ref, same, "FinQA's rule needs one value")
    a, r = _finqa_cmp(fig, ref)
    if round(a, 5) == r:
        return EQUAL, "equal under FinQA's rule (rounded to 5 places)"
    return NOT_EQUAL, f"not equal under FinQA's rule ({fmt(round(a, 5))} vs {fmt(r)} at 5 places)"


def tolerances(cfg: Any) -> tuple[float, float]:
    if cfg is None:
        from fintrade_tui.config import MatchConfig

        m = MatchConfig()
    else:
        m = cfg.judging.match
    return m.rel_tol, m.abs_tol


def _tolerance(fig: Figure, ref: Figure, tol: tuple[float, float]) -> tuple[str, str]:
    if fig.is_range or ref.is_range:
        return _range(fig, ref, lambda a, r: close(a, r, tol), "a range is not a value")
    a, r = fig.value, ref.value
    if ref.is_year or fig.is_year:  # a year is right or wrong, never 0.05% off
        return (EQUAL, "equal") if a == r else (NOT_EQUAL, f"not equal ({fmt(a)} vs {fmt(r)})")
    off = _off(a, r)
    if abs(a - r) <= 1e-12 * max(abs(a), abs(r)):  # 35.36 / 100 is 0.35359999999999997
        return EQUAL, "equal"
    if close(a, r, tol) and strict_miss(fig, ref):
        return (
            NOT_EQUAL,
            f"not equal at the reference's precision, {off} (both written to its digits)",
        )
    if close(a, r, tol):
        return EQUAL, f"equal within {_pct(tol[0])} ({off})"
    return NOT_EQUAL, f"not equal, {off} (tolerance {_pct(tol[0])})"


def _range(fig: Figure, ref: Figure, same: Any, why: str) -> tuple[str, str]:
    """Ranges: both ranges -> both ends; an answer range holding the reference -> in_range;
    an answer value inside the reference's range -> equal."""
    lo, hi = fig.value, fig.high if fig.high is not None else fig.value
    r_lo, r_hi = ref.value, ref.high if ref.high is not None else ref.value
    if fig.is_range and ref.is_range:
        ok = same(lo, r_lo) and same(hi, r_hi)
        return (EQUAL, "the same range") if ok else (NOT_EQUAL, "not the same range")
    if fig.is_range:
        if lo <= r_lo <= hi or same(lo, r_lo) or same(hi, r_lo):
            return IN_RANGE, f"the answer's range holds the reference; {why}"
        return NOT_EQUAL, "the answer's range does not hold the reference"
    if r_lo <= lo <= r_hi or same(lo, r_lo) or same(lo, r_hi):
        return EQUAL, "inside the reference's range"
    return NOT_EQUAL, "outside the reference's range"


def _off(a: float, r: float) -> str:
    if r == 0:
        return f"off by {fmt(abs(a - r))}"
    rel = abs(a - r) / abs(r)
    return f"off by {_pct(rel)}" if rel < 1 else f"{a / r:.3g} times the reference"


def _pct(x: float) -> str:
    p = x * 100
    return f"{p:.0f}%" if p >= 10 else f"{p:.2g}%"


# --- hints: why a not-equal might still be the same answer -------------------------------------
_FACTORS = [(100.0, "percent vs fraction"), (1e3, "a scale apart"), (1e6, "a scale apart")]
_FACTORS += [(1e9, "a scale apart")]


def _notes(
    verdict: str, text: str, fig: Figure, ref: Figure, found: list[Figure], mode: str, cfg: Any
) -> str:
    notes = []
    if mode == "finqa" and str_to_num(fig.text) is None:  # FinQA's own rule (finqa/dsl.py)
        notes.append(f"FinQA's own script cannot read '{fig.text}'")
    r = _finqa_cmp(fig, ref)[1]
    if mode == "finqa" and ref.span == GIVEN and round(r, 5) != r:
        notes.append("the reference has more than 5 decimals: FinQA compares it unrounded")
    if verdict == NOT_EQUAL and not (fig.is_range or ref.is_range):
        notes += _hints(fig, ref)
        others = [f for f in found if f is not fig and not f.is_range]
        for other in others:
            ok = (
                round(_finqa_cmp(other, ref)[0], 5) == _finqa_cmp(other, ref)[1]
                if mode == "finqa"
                else close(other.value, ref.value, tolerances(cfg))
            )
            if ok:
                notes.append(f"another figure in the answer, {other.text}, agrees")
                break
    return "".join(f"; {n}" for n in notes)


def _hints(fig: Figure, ref: Figure) -> list[str]:
    out = []
    a, r = fig.value, ref.value
    stated = in_units(r, fig)
    if fig.number and round(stated, fig.decimals) == fig.number:
        places = f"{fig.decimals} decimal{'s' * (fig.decimals != 1)}"
        out.append(f"equal at the answer's precision ({places})")
    if a and r:
        ratio = abs(a / r)
        for factor, why in _FACTORS:
            if abs(ratio * factor - 1) <= 0.01 or abs(ratio / factor - 1) <= 0.01:
                out.append(f"a factor of {fmt(factor)} apart ({why})")
        if abs(a + r) <= 0.01 * abs(r):
            out.append("equal but for the sign")
    return out
