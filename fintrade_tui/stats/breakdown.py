"""Breakdown room: what the accuracy matrix's columns split the questions by — their category
(FinTradeBench's F/T/FT, SECQUE's types, where a table-QA question's gold facts are: table,
text, table+text) or, for TAT-QA, the answer type (span, multi-span, arithmetic, count) or the
scale (none, thousand, million, billion, percent) its annotation gives, or whether the model's
knowledge cutoff falls after the question's as-of (`cutoff`: may know, after cutoff, unknown;
the caller's `look_ahead` decides, from models/cutoffs.py) — and the fields a score row takes
from its run and question to fall in one (`run_fields`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

BREAKDOWNS = ("category", "answer_type", "scale", "cutoff")
NONE = "none"  # a question without that annotation (TAT-QA writes an empty scale as "")


def breakdown(q: Any, by: str = "category") -> str:
    """The column `q` falls in when the matrix is split `by` this field."""
    if by == "category":
        return str(q.category)
    value = (getattr(q, "extra", None) or {}).get(by)
    return str(value).strip() or NONE if value is not None else NONE


def run_fields(
    rid: str,
    runs: dict[str, dict[str, Any]],
    qs: dict[str, Any],
    source: str | None,
    by: str = "category",
    look_ahead: Callable[[dict[str, Any], Any], str] | None = None,
) -> dict[str, Any] | None:
    """A score row's run fields (model, condition, the question's category and source); None
    for a run no longer completed or a question not of `source`. With `by="cutoff"` the
    column is `look_ahead(run, question)` ("unknown" without one)."""
    r = runs.get(rid)
    if r is None:
        return None
    q = qs.get(r["question_id"])
    if source and (q is None or q.source != source):
        return None
    if by == "cutoff":
        column = look_ahead(r, q) if look_ahead else "unknown"
    else:
        column = breakdown(q, by) if q else "?"
    return {
        "run_id": rid,
        "model": r["model"],
        "condition": r["condition"],
        "category": column,
        "source": q.source if q else None,
        "question_id": r["question_id"],
    }
