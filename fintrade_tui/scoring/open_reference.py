"""Scoring room: an answer held against an open-ended reference — an analysis in prose with
many figures (FinTradeBench's expert answers), or a short list of figures.

No single-figure verdict is given against an analysis: the line says which of the reference's
key figures the answer states, which it contradicts (a figure of the same kind and magnitude,
about the same thing and period, that disagrees), and that the judge or a person decides. A
list reference is equal when the answer states every figure of it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from fintrade_tui.scoring.answer_kinds import key_figures
from fintrade_tui.scoring.figure import Figure
from fintrade_tui.scoring.figures import figures
from fintrade_tui.scoring.readings import about_same, agrees
from fintrade_tui.scoring.verdict import DEFERRED, EQUAL, NO_NUMBER, NOT_EQUAL, OPEN, Match


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
        about = [f for f in same if about_same(f, r) and _magnitude(f, r)]
        if about:
            contradicted.append((r, about[0]))
    return stated, contradicted


def _kinds_meet(f: Figure, r: Figure) -> bool:
    return f.kind == r.kind or "plain" in (f.kind, r.kind) and "percent" not in (f.kind, r.kind)


def _magnitude(f: Figure, r: Figure) -> bool:
    return bool(f.value and r.value) and 0.1 <= abs(f.value / r.value) <= 10


def prose_match(answer: str, found: Match, reference: str, tol: tuple[float, float]) -> Match:
    """A reference that is a sentence around its figure ("AES has converted inventory 9.5
    times in FY 2022", "Corporate. Its net revenue was -$473 million."): the figure match
    `found` stands when it is equal; otherwise the answer is incorrect only when it
    contradicts — a figure of the answer about the same thing disagrees and none agrees. An
    answer whose figures are about other things (the reference's answer is a name, its figure
    a detail) is left to the judge or a person."""
    ref = found.reference_figure
    if found.verdict == EQUAL or ref is None or found.verdict not in (NOT_EQUAL, NO_NUMBER):
        return found
    stated = [f for f in figures(answer) if not f.is_year and _kinds_meet(f, ref)]
    bullet = re.search(r"(?:^|[:\n])\s*$", reference[: max(0, ref.span[0])]) and ref.value < 0
    refs = [ref, replace(ref, value=-ref.value, number=-ref.number)] if bullet else [ref]
    if agree := [f for f in stated if any(agrees(f, r, tol) for r in refs)]:
        why = f"the answer states the reference's {ref.text} ({agree[0].text})"
        return Match(EQUAL, why, found.mode, agree[0].value, ref.value, agree[0], ref)
    fig = found.answer_figure
    if fig is not None and _kinds_meet(fig, ref) and about_same(fig, ref) and _magnitude(fig, ref):
        return found
    why = f"the reference's answer is a sentence ('{_clip(reference)}'); no figure of the "
    why += f"answer is about its {ref.text}: the judge or a person decides"
    return Match(DEFERRED, why, found.mode, None, ref.value, reference_figure=ref)


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."
