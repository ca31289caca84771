"""Scoring room: what a figure is about and the period it refers to, for the figures reader.

`placed(text, fig, found)` gives a figure read by figures.py its `about` (up to six words before
it in its clause, after the previous figure; else the words right after it; stop words left out)
and its `period` (the year, quarter or fiscal label named nearest in its sentence: "$12.1B in
2023" takes the label after it, else "In FY2018 ... $12,645 million" the one before).
"""

from __future__ import annotations

import re
from dataclasses import replace

from fintrade_tui.scoring.figure import Figure

_CLAUSE_END = re.compile(r"[.!?;:](?:\s|$)|\n|\|")
_PERIOD = re.compile(
    r"\b(?:(?:Q[1-4]|H[12])\s*(?:FY\s*)?'?(?:19|20)?\d{2}|FY\s*'?(?:19|20)?\d{2}|"
    r"(?i:fiscal(?:\s+year)?)\s+(?:19|20)\d{2}|(?:19|20)\d{2})\b"
)
_FOR_PERIOD = re.compile(
    r"\s*(?:\)\s*)?(?:in|for|of|during|at|as\s+of|by)\s+(?:the\s+)?(?:fiscal\s+)?", re.I
)
_STOP = frozenset(
    re.findall(
        r"\S+",
        (
            "the a an of in on for to and or was is were are be been by with as at its it this "
            "that from which approximately about around roughly nearly total company answer "
            "reference its their our we they value amount figure"
        ),
    )
)


def placed(text: str, fig: Figure, found: list[Figure]) -> Figure:
    """The figure with what it is about (up to 6 words before it in its clause, after the
    previous figure; else the words right after it) and the period named nearest in its
    sentence."""
    a, b = fig.span
    prev = max([f.span[1] for f in found if f.span[1] <= a and not f.is_year], default=0)
    left = _PERIOD.sub(" ", text[max(prev, a - 80) : a])  # "in FY2018 net PP&E": about PP&E
    ends = list(_CLAUSE_END.finditer(left))
    left = left[ends[-1].end() :] if ends else left
    words = _words(left)[-6:] or _words(_CLAUSE_END.split(text[b : b + 60])[0])[:4]
    start = max([m.end() for m in _CLAUSE_END.finditer(text, max(0, a - 120), a)] or [0])
    base = max(start, a - 120)
    near = text[base : b + 60]
    periods = [
        m for m in _PERIOD.finditer(near) if not (a < base + m.end() and base + m.start() < b)
    ]
    period = ""
    right = [m for m in periods if base + m.start() >= b and _FOR_PERIOD.fullmatch(
        text[b : base + m.start()])]  # fmt: skip
    before = [m for m in periods if base + m.end() <= a]
    if right or before:  # "$12.1B in 2023" first, else "In FY2018 ... $12,645 million"
        best = right[0] if right else before[-1]
        period = re.sub(r"\s+", " ", best.group(0)).strip()
    return replace(fig, about=" ".join(words), period=period)


def _words(text: str) -> list[str]:
    found = re.findall(r"[A-Za-z][A-Za-z&/'-]*", text.lower())
    return [w for w in found if w not in _STOP]
