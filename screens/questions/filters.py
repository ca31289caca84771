"""Questions screen's filtering, with no widgets: calendar quarters, the questions a set of
filters selects (category, ticker, quarter, resolution/coverage status), and, when they select
nothing, the nearest filters that select something and the line that offers them. The Company
screen counts its quarters' questions with the same functions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fintrade_tui.workspace.questions import Question

ALL = "*"  # a filter's "any" option
CATEGORIES = ("F", "T", "FT")
STATUSES = ("resolved", "unresolved", "full", "partial", "none", "unknown")
FILTER_KEYS = ("category", "ticker", "quarter", "status")


def quarter_end(d: date) -> date:
    """The last day of the calendar quarter holding `d`."""
    q_month = (d.month - 1) // 3 * 3 + 3
    nxt = date(d.year + (q_month == 12), q_month % 12 + 1, 1)
    return date.fromordinal(nxt.toordinal() - 1)


def quarter_start(end: date) -> date:
    """The first day of the calendar quarter ending (or holding) `end`."""
    return date(end.year, (end.month - 1) // 3 * 3 + 1, 1)


def filter_questions(
    questions: Sequence[Question],
    category: str | None = None,
    ticker: str | None = None,
    quarter: date | None = None,
    status: str | None = None,
) -> list[Question]:
    """Questions matching every given filter: category; a ticker among its tickers; as_of in
    the calendar quarter holding `quarter`; resolution status or coverage equal to `status`."""
    t = (ticker or "").strip().upper()
    lo, hi = (quarter_start(quarter), quarter_end(quarter)) if quarter else (date.min, date.max)
    return [
        q
        for q in questions
        if (not category or q.category == category)
        and (not t or t in q.tickers)
        and (not quarter or (q.as_of is not None and lo <= q.as_of <= hi))
        and (not status or status in (q.status, q.coverage))
    ]


def quarter_name(d: date) -> str:
    """The calendar quarter holding `d`, as the Questions and Company screens name it."""
    return f"Q{(d.month - 1) // 3 + 1} {d.year}"


def _ordinal(d: date) -> int:
    return d.year * 4 + (d.month - 1) // 3


def nearest(questions: Sequence[Question], filters: dict[str, Any]) -> dict[str, Any] | None:
    """Filters close to `filters` that select something, or None when the bank is empty or
    `filters` already select something. First the nearest other quarter under the same
    filters (ties: the earlier one); then category and status dropped (same quarter, else its
    nearest); then the ticker dropped too; last every filter dropped."""
    if not questions or filter_questions(questions, **filters):
        return None
    steps: tuple[dict[str, Any], ...] = (
        {},  # only the quarter moves
        {"category": None, "status": None},
        {"category": None, "status": None, "ticker": None},
    )
    for drop in steps:
        f = {**filters, **drop}
        if drop and f != filters and filter_questions(questions, **f):
            return f
        if f["quarter"]:
            here = _ordinal(f["quarter"])
            found = {
                quarter_end(q.as_of)
                for q in filter_questions(questions, **{**f, "quarter": None})
                if q.as_of
            }
            if found:
                best = min(found, key=lambda d: (abs(_ordinal(d) - here), d))
                return {**f, "quarter": best}
    return dict.fromkeys(FILTER_KEYS)


def describe(filters: dict[str, Any]) -> str:
    """'in Q4 2025 for NVDA in category F with status full' (the filters that are set)."""
    parts = []
    if filters.get("quarter"):
        parts.append(f"in {quarter_name(filters['quarter'])}")
    if (filters.get("ticker") or "").strip():
        parts.append(f"for {filters['ticker'].strip().upper()}")
    if filters.get("category"):
        parts.append(f"in category {filters['category']}")
    if filters.get("status"):
        parts.append(f"with status {filters['status']}")
    return " ".join(parts)


def nearest_line(
    questions: Sequence[Question], filters: dict[str, Any], best: dict[str, Any]
) -> str:
    """The empty-list line: what selects nothing, the nearest filters that select something,
    how many they select, and the key that applies them."""
    n = len(filter_questions(questions, **best))
    now = describe(filters) or "matches the filters"
    if best.get("quarter") and best["quarter"] != filters.get("quarter"):
        near = f"nearest with questions: {quarter_name(best['quarter'])} ({n})"
        dropped = [k for k in ("category", "status", "ticker") if filters.get(k) != best.get(k)]
        if dropped:
            near += " without the " + " and ".join(dropped) + " filter"
    elif any(best.values()):
        dropped = [k for k in FILTER_KEYS if filters.get(k) and filters.get(k) != best.get(k)]
        near = f"without the {' and '.join(dropped)} filter: {n}"
    else:
        near = f"every question: {n}"
    return f"No question {now}; {near} — press n to show it"
