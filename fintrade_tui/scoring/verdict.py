"""Scoring room: a matcher's verdict and its one-line reason (`Match`), the verdict names every
matcher mode shares, and which of an answer's figures is the one it gives as its answer."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fintrade_tui.scoring.figure import PLAIN, Figure

EQUAL, NOT_EQUAL, IN_RANGE = "equal", "not_equal", "in_range"
NO_NUMBER, NO_REFERENCE = "no_number", "no_reference"
REFUSED = "refused"  # the answer declines: never equal, labelled a refusal
UNFINISHED = "unfinished"  # a long answer cut mid-sentence with no final answer: incorrect
OPEN = "open"  # an open-ended reference: a claim-level line, the judge or a person decides
DEFERRED = "deferred"  # the reference states no figure: said so, left to the judge or a person
# verdicts that give no label: the judge or a person decides (an answer's range holding the
# reference is no answer people accept as it is, nor one they reject; an answer whose figure
# the rules cannot find is unread, not wrong: "incorrect" needs a contradiction read)
UNDECIDED = (NO_REFERENCE, OPEN, DEFERRED, IN_RANGE, NO_NUMBER)


@dataclass(frozen=True)
class Match:
    """A verdict and the one line that explains it; the figures are there to be marked."""

    verdict: str  # equal | not_equal | in_range | no_number | refused | unfinished | open
    # | deferred | no_reference
    reason: str
    mode: str
    answer_value: float | str | None  # base units (0.125 for "12.5%"), "yes"/"no", or None
    reference_value: float | str | None
    answer_figure: Figure | None = None  # where the answer states it
    reference_figure: Figure | None = None
    em: float | None = None  # tatqa: exact match (0 or 1)
    f1: float | None = None  # tatqa: F1 (= em for arithmetic and count answers)
    scale_ok: bool | None = None  # tatqa: the prediction's scale is the reference's
    tatqa_prediction: tuple[list[str], str] | None = None  # tatqa: what was scored


# --- picking the answer's figure --------------------------------------------------------------
_MARKER = re.compile(
    r"\b(?:final\s+answer|answer\s*(?:is|:)|therefore|thus|in\s+conclusion)\b|\*\*answer", re.I
)
_PERIOD = re.compile(r"\b(?:Q[1-4]\s*)?(?:FY\s*)?'?((?:19|20)\d{2})\b")


def pick(text: str, found: list[Figure], ref: Figure, question: str | None = None) -> Figure:
    """The figure the answer gives as its answer: the last one after its last "answer:" /
    "therefore" marker if any, else the last one of the reference's kind (percent, currency,
    multiple), else the last one — and, when the question names a period, one stated for that
    period before one stated for another ("from $10.2B in 2022 to $12.1B in 2023", asked
    about 2022, answers $10.2B)."""
    marks = [m.end() for m in _MARKER.finditer(text)]
    after = [f for f in found if marks and f.span[0] >= marks[-1]]
    pool = after or found
    same = [f for f in pool if f.kind == ref.kind] if ref.kind != PLAIN else []
    pool = same or pool
    asked = {m.group(1) for m in _PERIOD.finditer(question or "")}
    if len(asked) == 1 and any(f.period for f in pool):
        year = asked.pop()
        for_it = [f for f in pool if year in f.period]
        other = [f for f in pool if f.period and year not in f.period]
        if for_it and other:
            return for_it[-1]
    return pool[-1]
