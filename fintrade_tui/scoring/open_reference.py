"""Scoring room: an answer held against an open-ended reference — an analysis in prose with
many figures (FinTradeBench's expert answers), or a short list of figures.

No single-figure verdict is given against an analysis: the line says which of the reference's
key figures the answer states, which it contradicts (a figure of the same kind and magnitude,
about the same thing and period, that disagrees), and that the judge or a person decides. A
list reference is equal when the answer states every figure of it.
"""

from __future__ import annotations

import re

from fintrade_tui.scoring.answer_kinds import key_figures
from fintrade_tui.scoring.figures import Figure, figures
from fintrade_tui.scoring.readings import agrees
from fintrade_tui.scoring.verdict import EQUAL, NOT_EQUAL, OPEN, Match

_GENERIC = frozenset(
    re.findall(r"\S+", ("is was were be rate ratio value level current its of than above below"))
)


def open_match(
    answer: str, reference: str, mode: str, hint: str | None, tol: tuple[float, float]
) -> Match:
    """The claim-level line against an open-ended reference (verdict `open`, no label)."""
    refs = key_figures(reference, hint=hint)
    stated, contradicted = _compare(answer, refs, hint, tol)
    line = f"open-ended reference ({len(refs)} figure{'s' * (len(refs) != 1)}): the answer states "
    line += f"{len(stated)}" + (f" ({', '.join(r.text for r, _ in stated[:3])})" if stated else "")
    if contradicted:
        shown = "; ".join(f"{a.text} vs {r.text}" for r, a in contradicted[:3])
        line += f", contradicts {len(contradicted)} ({shown})"
    return Match(OPEN, line + "; the judge or a person decides", mode, None, None)


def list_match(
    answer: str, reference: str, mode: str, hint: str | None, tol: tuple[float, float]
) -> Match:
    """A list reference: equal when the answer states each of its figures."""
    refs = key_figures(reference, hint=hint)
    stated, contradicted = _compare(answer, refs, hint, tol)
    missing = [r.text for r in refs if r not in {s for s, _ in stated}]
    if not missing:
        why = f"the answer states every figure of the reference's list ({len(refs)})"
        return Match(EQUAL, why, mode, None, None)
    why = f"the answer states {len(stated)} of the reference's {len(refs)} figures; missing "
    why += ", ".join(missing[:3])
    if contradicted:
        why += "; contradicts " + "; ".join(f"{a.text} vs {r.text}" for r, a in contradicted[:2])
    return Match(NOT_EQUAL, why, mode, None, None)


def _compare(
    answer: str, refs: list[Figure], hint: str | None, tol: tuple[float, float]
) -> tuple[list[tuple[Figure, Figure]], list[tuple[Figure, Figure]]]:
    """(reference figure, answer figure) pairs the answer states, and pairs it contradicts."""
    found = [f for f in figures(answer, hint) if not f.is_year]
    stated, contradicted = [], []
    for r in refs:
        same = [f for f in found if _kinds_meet(f, r)]
        agree = [f for f in same if agrees(f, r, tol)]
        if agree:
            stated.append((r, agree[0]))
            continue
        about = [f for f in same if _about_same(f, r) and _magnitude(f, r)]
        if about:
            contradicted.append((r, about[0]))
    return stated, contradicted


def _kinds_meet(f: Figure, r: Figure) -> bool:
    return f.kind == r.kind or "plain" in (f.kind, r.kind) and "percent" not in (f.kind, r.kind)


def _magnitude(f: Figure, r: Figure) -> bool:
    return bool(f.value and r.value) and 0.1 <= abs(f.value / r.value) <= 10


def _about_same(f: Figure, r: Figure) -> bool:
    """About the same thing (a content word in common) and not about different periods."""
    a, b = set(f.about.split()) - _GENERIC, set(r.about.split()) - _GENERIC
    if not a & b:
        return False
    return not (f.period and r.period and f.period != r.period)
