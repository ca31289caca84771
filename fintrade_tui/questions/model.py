"""The question record shared by importers, resolution, scaling and the workspace store."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

# resolution status
RESOLVED = "resolved"
UNRESOLVED = "unresolved"
# coverage status
FULL, PARTIAL, NONE, UNKNOWN = "full", "partial", "none", "unknown"


@dataclass
class Question:
    """One benchmark item. Dates are `date` objects; lists are never None."""

    id: str
    source: str  # fintradebench | jsonl | secque | finar | scaled | finar_generated
    category: str  # F, T, FT for FinTradeBench; other sets keep their own labels
    text: str
    reference_answer: str | None = None
    tickers: list[str] = field(default_factory=list)
    scope: str | None = None  # company | compare | market_scan
    as_of: date | None = None
    window_start: date | None = None
    window_end: date | None = None
    golden_raw: list[str] = field(default_factory=list)  # indicators as written in the source
    golden: list[str] = field(default_factory=list)  # canonical names the store computes
    status: str = UNRESOLVED
    reasons: list[str] = field(default_factory=list)  # why unresolved, or notes
    coverage: str = UNKNOWN
    coverage_missing: list[str] = field(default_factory=list)  # "TICKER:indicator: why"
    oracle: dict[str, Any] = field(default_factory=dict)  # ticker -> indicator -> evidence
    parent_id: str | None = None  # the seed a scaled variant came from
    extra: dict[str, Any] = field(default_factory=dict)  # format-specific fields (context, ...)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def extra_date(q: Question, keys: tuple[str, ...]) -> date | None:
    """The first of these `extra` fields that holds a date ("2024-11-01", or a longer stamp)."""
    found = extra_date_field(q, keys)
    return found[1] if found else None


def extra_date_field(q: Question, keys: tuple[str, ...]) -> tuple[str, date] | None:
    """The first of these `extra` fields that holds a date, with its name."""
    for key in keys:
        try:
            return key, date.fromisoformat(str(q.extra[key])[:10])
        except (KeyError, ValueError):
            continue
    return None
