"""Breakdown room: what the accuracy matrix's columns split the questions by — their category
(FinTradeBench's F/T/FT, SECQUE's types, where a table-QA question's gold facts are: table,
text, table+text) or, for TAT-QA, the answer type (span, multi-span, arithmetic, count) or the
scale (none, thousand, million, billion, percent) its annotation gives."""

from __future__ import annotations

from typing import Any

BREAKDOWNS = ("category", "answer_type", "scale")
NONE = "none"  # a question without that annotation (TAT-QA writes an empty scale as "")


def breakdown(q: Any, by: str = "category") -> str:
    """The column `q` falls in when the matrix is split `by` this field."""
    if by == "category":
        return q.category
    value = (getattr(q, "extra", None) or {}).get(by)
    return str(value).strip() or NONE if value is not None else NONE
