"""As-of room: the day a question's answer became knowable, and on what basis.

First match wins:
1. benchmark -- the question file's own date field (`as_of`, `question_date`, `filing_date`,
   `date` in extra): it is when the benchmark says the question is asked.
2. filing -- a question about fiscal periods ("fiscal 2023", "Q3 FY2024", "FY2022 vs FY2021",
   "the last three fiscal years"; in a document-QA question also a bare year or quarter): the
   filing date of the report that closes the latest period named, on each company's own fiscal
   calendar (`FiscalCalendar`); the window starts where the earliest period named starts.
3. estimated -- the same, when the store knows no filing date for that period: its end plus the
   configured lag, flagged in the reasons.
4. text -- the calendar date of the time phrase (`resolve_time`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from fintrade_tui.questions.fiscal import FiscalCalendar, FiscalPeriod
from fintrade_tui.questions.kind import DOCUMENT_QA
from fintrade_tui.questions.timephrases import TimeRef
from fintrade_tui.workspace.questions import Question, extra_date_field

GIVEN_KEYS = ("as_of", "question_date", "filing_date", "date")
BENCHMARK, FILING, ESTIMATED, TEXT = "benchmark", "filing", "estimated", "text"


@dataclass
class Knowable:
    as_of: date | None
    start: date | None
    basis: dict[str, Any]  # {"kind": benchmark|filing|estimated|text, "detail": "..."}
    periods: list[FiscalPeriod] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def is_fiscal(ref: TimeRef, kind: str) -> bool:
    """Does the phrase name fiscal periods (a document-QA question's years are the filer's)?"""
    if ref.fiscal:
        return bool(ref.periods or ref.years_back)
    return kind == DOCUMENT_QA and ref.kind in ("year", "quarter") and bool(ref.periods)


def knowable(
    q: Question,
    ref: TimeRef | None,
    tickers: list[str],
    calendar: FiscalCalendar,
    lag_days: int,
    kind: str,
) -> Knowable:
    """The question's as_of, window start and their basis (see the module docstring)."""
    out = Knowable(ref.as_of if ref else None, ref.start if ref else None, {"kind": TEXT})
    if ref:
        out.basis["detail"] = f"the text: {ref.phrase!r}"
    if ref and tickers and is_fiscal(ref, kind):
        _fiscal(out, ref, tickers, calendar, lag_days)
    given = extra_date_field(q, GIVEN_KEYS)
    if given:
        key, day = given
        if out.as_of != day:
            out.reasons.append(f"as_of {day} from the question file's {key!r}")
        out.as_of, out.start = day, min(out.start or day, day)
        out.basis = {"kind": BENCHMARK, "field": key, "detail": f"the question file's {key!r}"}
    return out


def _fiscal(
    out: Knowable, ref: TimeRef, tickers: list[str], calendar: FiscalCalendar, lag_days: int
) -> None:
    latest: list[tuple[date, bool, FiscalPeriod]] = []
    for t in tickers:
        named: list[tuple[int, int | None]]
        if ref.years_back:  # the last N fiscal years whose reports were out by the anchor
            last = calendar.latest_year(t, ref.as_of)
            named = [(y, None) for y in range(last - ref.years_back + 1, last + 1)]
        else:
            named = list(ref.periods)
        periods = [calendar.period(t, y, qtr) for y, qtr in named]
        out.periods += periods
        end = max(periods, key=lambda p: p.end)
        day, estimated = end.as_of(lag_days)
        latest.append((day, estimated, end))
        if end.calendar == "assumed":
            out.reasons.append(
                f"{t}: fiscal calendar unknown to the store: December year end assumed"
            )
    day, estimated, p = max(latest, key=lambda x: x[0])
    out.as_of, out.start = day, min(x.start for x in out.periods)
    if estimated:
        detail = f"{p.ticker} {p.label} ended {p.end}, no filing date in the store"
        detail += f": +{lag_days} days"
        out.basis = {"kind": ESTIMATED, "detail": detail}
        out.reasons.append(f"as_of estimated: {detail}")
    else:
        r = p.report
        assert r is not None
        doc = " ".join(x for x in (r.form, r.accession) if x)
        where = r.source + (f": {doc}" if doc else "")
        detail = f"{p.ticker} {p.label} report filed {r.filed} ({where})"
        out.basis = {"kind": FILING, "detail": detail}
