"""Time-phrase room: find the date a financial question is asked at.

`resolve_time` turns the time reference in a question's text ("As of September 2025", "Q3 2025",
"over the past 3 months", ...) into an `as_of` date and an inclusive window; `describe` is its
inverse, a phrase a caller can splice over `TimeRef.span` to re-date the question.
Pure and stdlib-only: no store access, no I/O.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta

FiscalQuarterEnd = Callable[[int, int], date | None]
Period = tuple[int, int | None]  # (year, quarter or None for the whole year)
Window = Callable[[date], tuple[date, date]]  # anchor -> (start, end) for relative phrases
_DAY = timedelta(days=1)


@dataclass(frozen=True)
class TimeRef:
    as_of: date  # the question is asked after the close of this day
    start: date  # window start (inclusive)
    end: date  # window end (inclusive); always == as_of
    phrase: str  # exact substring of the text to rewrite with describe(...)
    span: tuple[int, int]  # offsets of `phrase` in the text
    kind: str  # month | quarter | fiscal_quarter | half | year | ytd | mid_year | week | relative
    #            | day | last_quarter
    fiscal: bool = False  # the text says "fiscal"/"FY"; the caller maps it to a company calendar
    # A relative phrase anchored at another date ("As of August 2025, ... past 3 months") reports
    # that date's phrase/span; rewrite it with describe(anchor_kind, ...) so the window follows.
    anchor_kind: str | None = None
    # the years / quarters the text names, e.g. ((2016, None), (2017, None)) for "from FY2016 to
    # FY2017"; the caller maps fiscal ones to a company's calendar (latest one = as_of)
    periods: tuple[Period, ...] = ()
    years_back: int | None = None  # "over the last three fiscal years" -> 3


# when several absolute phrases appear, the most specific one wins
_RANK = {"day": 7, "week": 6, "month": 5, "quarter": 4, "fiscal_quarter": 4, "half": 3}
_RANK |= {"mid_year": 3, "ytd": 2, "year": 1}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_ORD |= {"last": 4, "final": 4, "1": 1, "2": 2}
_WORDS: tuple[str, ...] = ("one", "two", "three", "four", "five", "six", "seven", "eight")
_WORDS += ("nine", "ten", "eleven", "twelve")

_MON = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?"
)
_DAYN = r"(?P<day>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_FY = r"(?:fiscal|FY)\s*"
_DAY_SRCS = (
    rf"\b{_MON}\s+{_DAYN},?\s+{_YEAR}\b",  # September 30, 2025 / Sept. 30 2025
    rf"\b{_DAYN}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b",  # 30 September 2025
    rf"\b{_YEAR}-(?P<m>0[1-9]|1[0-2])-(?P<day>3[01]|[12]\d|0[1-9])\b",  # 2025-09-30
    rf"\b(?P<m>1[0-2]|0?[1-9])/(?P<day>3[01]|[12]\d|0?[1-9])/{_YEAR}\b",  # 9/30/2025
)
_YTD = r"(?:year[-\s]to[-\s]date|YTD)"


def _month_end(y: int, m: int) -> date:
    return date(y, m, calendar.monthrange(y, m)[1])


def _add_months(d: date, n: int) -> date:
    """Shift by n months; a month-end stays a month-end (Sep 30 - 1 month = Aug 31)."""
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    end = _month_end(y, m + 1)
    return end if d == _month_end(d.year, d.month) else end.replace(day=min(d.day, end.day))


def _quarter_of(d: date) -> int:
    return (d.month - 1) // 3 + 1


def _mon(m: re.Match[str]) -> int:
    g = m.groupdict()
    return _MONTHS.index(g["mon"][:3].lower()) + 1 if g.get("mon") else int(g["m"])


def _ymd(m: re.Match[str]) -> date | None:
    try:
        return date(int(m["year"]), _mon(m), int(m["day"]))
    except ValueError:  # "February 30, 2025"
        return None


# --- absolute phrases: match -> (kind, start, end, fiscal[, periods]) before the reference cap ---
Built = tuple[str, date, date, bool] | tuple[str, date, date, bool, tuple[Period, ...]] | None


def _day(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    d = _ymd(m)
    return None if d is None else ("day", d - timedelta(days=29), d, False)


def _week(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    d = _ymd(m)
    if d is None:
        return None
    monday = d - timedelta(days=d.weekday())
    return "week", monday, monday + timedelta(days=4), False


def _ytd_through(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    d = _ymd(m)
    return None if d is None else ("ytd", date(d.year, 1, 1), d, False)


def _month(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    y, mo = int(m["year"]), _mon(m)
    return "month", date(y, mo, 1), _month_end(y, mo), False


def _quarter(m: re.Match[str], fqe: FiscalQuarterEnd | None) -> Built:
    g = m.groupdict()
    y, q = int(g["year"]), int(g["q"]) if g.get("q") else _ORD[g["ord"].lower()]
    fiscal = any(g.get(k) for k in ("fa", "fb", "fc"))
    if fiscal and fqe is not None and (end := fqe(y, q)) is not None:
        return "fiscal_quarter", _add_months(end, -3) + _DAY, end, True, ((y, q),)
    kind = "fiscal_quarter" if fiscal else "quarter"
    return kind, date(y, 3 * q - 2, 1), _month_end(y, 3 * q), fiscal, ((y, q),)


def _half(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    y, first = int(m["year"]), _ORD[m["h"].lower()] == 1
    return (
        "half",
        date(y, 1 if first else 7, 1),
        date(y, 6, 30) if first else date(y, 12, 31),
        False,
    )


def _mid(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    # "mid-2025" means around the end of June: the second quarter leading up to it
    y = int(m["year"])
    return "mid_year", date(y, 4, 1), date(y, 6, 30), False


def _ytd(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    y = int(m["year"])
    return "ytd", date(y, 1, 1), date(y, 12, 31), False


def _year(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    y = int(m["year"])
    y += 2000 if y < 100 else 0  # FY25
    return "year", date(y, 1, 1), date(y, 12, 31), bool(m.groupdict().get("fa")), ((y, None),)


def _year_range(m: re.Match[str], _f: FiscalQuarterEnd | None) -> Built:
    y1, y2 = int(m["y1"]), int(m["y2"])
    y2 += y1 // 100 * 100 if y2 < 100 else 0  # 2024-25
    if not y1 < y2 <= y1 + 10:  # "2025-09" etc. is not a range
        return None
    fiscal = bool(m.groupdict().get("fa"))
    return "year", date(y1, 1, 1), date(y2, 12, 31), fiscal, tuple((y, None) for y in (y1, y2))


_Builder = Callable[[re.Match[str], FiscalQuarterEnd | None], Built]
_QSEP = r"(?:\s*[-/]\s*|\s+(?:of\s+)?)"
_ABSOLUTE: list[tuple[str, _Builder]] = [
    *((src, _day) for src in _DAY_SRCS),
    *((r"\b(?:the\s+)?week\s+(?:of|beginning|starting|ending)\s+" + s, _week) for s in _DAY_SRCS),
    *((rf"\b{_YTD}\s+(?:through|thru|to|as\s+of|until)\s+" + s, _ytd_through) for s in _DAY_SRCS),
    (rf"\b{_MON},?\s+(?:of\s+)?{_YEAR}\b", _month),
    (rf"\b{_YEAR}-(?P<m>0[1-9]|1[0-2])\b(?!-\d)", _month),
    (rf"\b(?P<fa>{_FY})?Q(?P<q>[1-4]){_QSEP}(?P<fb>{_FY})?{_YEAR}\b", _quarter),
    (rf"\b(?P<fa>{_FY})?{_YEAR}\s*[-/]?\s*Q(?P<q>[1-4])\b", _quarter),
    (
        r"\b(?:the\s+)?(?P<fa>fiscal\s+)?(?P<ord>first|second|third|fourth|last|final|1st|2nd|3rd"
        rf"|4th)[-\s]+(?P<fb>fiscal\s+)?quarter\s+(?:of\s+)?(?P<fc>{_FY})?{_YEAR}\b",
        _quarter,
    ),
    (rf"\b(?:the\s+)?(?P<h>first|second|1st|2nd)\s+half\s+(?:of\s+)?{_YEAR}\b", _half),
    (rf"\bH(?P<h>[12]){_QSEP}{_YEAR}\b", _half),
    (rf"\b(?P<h>[12])H{_QSEP}{_YEAR}\b", _half),
    (rf"\b{_YEAR}\s*[-/]?\s*H(?P<h>[12])\b", _half),
    (rf"\b(?:mid(?:[-\s]?year)?[-\s]?|(?:the\s+)?middle\s+)(?:of\s+)?{_YEAR}\b", _mid),
    (rf"\b{_YTD}[\s,]+(?:(?:in|for|of)\s+)?{_YEAR}\b", _ytd),
    (rf"\b{_YEAR}\s+{_YTD}\b", _ytd),
    (r"\b(?P<fa>fiscal(?:\s+years?)?\s+|FY\s*'?)(?P<year>(?:19|20)?\d\d)\b", _year),
    (
        r"(?<![\w$.,])(?P<fa>(?:fiscal(?:\s+years?)?\s+|FY\s*'?))?(?P<y1>(?:19|20)\d\d)\s*"
        r"(?:[-–—/]|\bto\b|\bthrough\b)\s*(?:FY\s*'?)?"
        r"(?P<y2>(?:19|20)?\d\d)(?![\w%]|[-/.,]\d)",
        _year_range,
    ),
    # a bare year, but not an amount ("$2025", "2,025", "2025.5", "2025%")
    (rf"(?<![\w$.,]){_YEAR}(?![\w%]|[.,]\d)", _year),
]


# --- relative phrases: match -> window function of the anchor date ---
def _count(m: re.Match[str]) -> int:
    raw = (m["n"] or "").lower()
    return 2 if "couple" in raw else _WORDS.index(raw) + 1 if raw in _WORDS else int(raw or 1)


def _relative(m: re.Match[str]) -> Window | None:
    word, raw = m["w"].lower(), (m["n"] or "").lower()
    # "last quarter's earnings" names a calendar quarter; "the last/past quarter" is a window
    if not (m["the"] or raw or word in ("past", "trailing")):
        return None
    n = _count(m)
    months = {"month": 1, "quarter": 3, "year": 12}.get(m["unit"].lower())
    if n < 1:
        return None
    if months:
        return lambda a: (_add_months(a, -n * months) + _DAY, a)
    days = n * (7 if m["unit"].lower() == "week" else 1)
    return lambda a: (a - timedelta(days=days - 1), a)


def _last_quarter(_m: re.Match[str]) -> Window:
    def window(a: date) -> tuple[date, date]:
        end = _month_end(a.year, 3 * _quarter_of(a))
        end = end if end <= a else _add_months(end, -3)  # the last quarter closed by the anchor
        return _add_months(end, -3) + _DAY, end

    return window


def _bare_ytd(_m: re.Match[str]) -> Window:
    return lambda a: (date(a.year, 1, 1), a)


_NUM = r"\d{1,3}|" + "|".join(_WORDS) + r"|(?:a\s+)?couple\s+of"
_RELATIVE: list[tuple[str, int, str, Callable[[re.Match[str]], Window | None]]] = [
    (
        "relative",
        0,
        rf"\b(?:(?P<the>the)\s+)?(?P<w>past|last|previous|prior|trailing)\s+"
        rf"(?:(?P<n>{_NUM})[-\s]+)?(?:(?P<fy>fiscal)\s+)?(?P<unit>day|week|month|quarter|year)s?\b",
        _relative,
    ),
    (
        "last_quarter",
        -1,
        r"\b(?:the\s+)?(?:most\s+recent|latest|last|previous|prior)\s+(?:reported\s+)?quarter\b",
        _last_quarter,
    ),
    ("ytd", -1, rf"\b{_YTD}\b", _bare_ytd),
]
_ABS_RX = [(re.compile(src, re.I), b) for src, b in _ABSOLUTE]
_REL_RX = [(kind, rank, re.compile(src, re.I), b) for kind, rank, src, b in _RELATIVE]


@dataclass(frozen=True)
class Phrase:
    """One time phrase found in a text: where, what kind, and the dates or window it names."""

    span: tuple[int, int]
    kind: str
    rank: int
    start: date = date.min
    end: date = date.min
    fiscal: bool = False
    window: Window | None = None  # set for relative phrases
    periods: tuple[Period, ...] = ()
    years_back: int | None = None  # "the last three fiscal years"


def phrase_matches(text: str, reference: date, fqe: FiscalQuarterEnd | None) -> list[Phrase]:
    """Every time phrase in `text`; of overlapping ones the longest, then most specific, wins."""
    out: list[Phrase] = []
    for rx, build in _ABS_RX:
        for m in rx.finditer(text):
            if (b := build(m, fqe)) is not None:
                kind, start, end, fiscal, *periods = b
                # a period still running at the reference ends there; a future one stays whole
                end = min(end, reference) if start <= reference else end
                named = periods[0] if periods else ()
                out.append(Phrase(m.span(), kind, _RANK[kind], start, end, fiscal, None, named))
    for kind, rank, rx, make in _REL_RX:
        for m in rx.finditer(text):
            if (w := make(m)) is not None:
                fiscal = bool(m.groupdict().get("fy"))
                back = _count(m) if fiscal and m["unit"].lower() == "year" else None
                out.append(Phrase(m.span(), kind, rank, fiscal=fiscal, window=w, years_back=back))
    # overlapping matches: the longest wins ("Q3 2025" over "2025"), then the more specific
    kept: list[Phrase] = []
    for c in sorted(out, key=lambda c: (c.span[0] - c.span[1], -c.rank, c.span[0])):
        if all(c.span[1] <= k.span[0] or c.span[0] >= k.span[1] for k in kept):
            kept.append(c)
    return kept


def resolve_time(
    text: str, reference: date, fiscal_quarter_end: FiscalQuarterEnd | None = None
) -> TimeRef | None:
    """The question's as_of date and window, or None when the text names no time."""
    cands = phrase_matches(text, reference, fiscal_quarter_end)
    best = min(
        (c for c in cands if c.window is None), key=lambda c: (-c.rank, c.span[0]), default=None
    )
    if best is not None:
        best = _combined(best, cands)
    rel = min((c for c in cands if c.window is not None), key=lambda c: c.span[0], default=None)
    if rel is None or rel.window is None:
        if best is None:
            return None
        phrase = text[best.span[0] : best.span[1]]
        return TimeRef(
            best.end,
            best.start,
            best.end,
            phrase,
            best.span,
            best.kind,
            best.fiscal,
            periods=best.periods,
        )
    # relative windows hang off the other absolute date in the text, else off the reference
    start, end = rel.window(best.end if best else reference)
    src = best or rel
    phrase = text[src.span[0] : src.span[1]]
    fiscal = (best.fiscal if best else False) or rel.fiscal
    return TimeRef(
        end,
        start,
        end,
        phrase,
        src.span,
        rel.kind,
        fiscal,
        best.kind if best else None,
        years_back=rel.years_back,
    )


_FAMILY = {"year": "year", "quarter": "quarter", "fiscal_quarter": "quarter"}


def _combined(best: Phrase, cands: list[Phrase]) -> Phrase:
    """A range or comparison of years or quarters ("FY2022 vs FY2021", "from Q1 2024 to Q3
    2024") is about the latest period named, over a window covering all of them."""
    family = _FAMILY.get(best.kind)
    same = [c for c in cands if c.window is None and family and _FAMILY.get(c.kind) == family]
    if len(same) < 2:
        return best
    latest = max(same, key=lambda c: c.end)
    return replace(
        latest,
        span=(min(c.span[0] for c in same), max(c.span[1] for c in same)),
        start=min(c.start for c in same),
        fiscal=any(c.fiscal for c in same),
        periods=tuple(
            sorted({p for c in same for p in c.periods}, key=lambda p: (p[0], p[1] or 5))
        ),
    )


def _fmt_day(d: date) -> str:
    return f"{calendar.month_name[d.month]} {d.day}, {d.year}"


def _describe_relative(as_of: date, start: date) -> str:
    n_months = next((n for n in range(1, 121) if _add_months(as_of, -n) + _DAY == start), None)
    days = (as_of - start).days + 1
    if n_months is not None:
        n, unit = (n_months // 12, "year") if n_months % 12 == 0 else (n_months, "month")
    else:
        n, unit = (days // 7, "week") if days % 7 == 0 else (days, "day")
    amount = f"the past {unit}" if n == 1 else f"the past {n} {unit}s"
    return f"{amount} to {_fmt_day(as_of)}"


def describe(ref_kind: str, as_of: date, start: date) -> str:
    """A phrase naming the period (as_of, start) that resolve_time reads back the same way."""
    y, q = as_of.year, _quarter_of(as_of)
    if ref_kind == "day":
        return _fmt_day(as_of)
    if ref_kind == "week":
        return f"the week of {_fmt_day(start - timedelta(days=start.weekday()))}"
    if ref_kind == "month":
        return f"{calendar.month_name[as_of.month]} {y}"
    if ref_kind in ("quarter", "last_quarter"):
        return f"Q{q} {y}"
    if ref_kind == "fiscal_quarter":
        return f"fiscal Q{q} {y}"
    if ref_kind == "half":
        return f"the {'first' if as_of.month <= 6 else 'second'} half of {y}"
    if ref_kind == "mid_year":
        return f"mid-{y}"
    if ref_kind == "ytd":
        return f"year-to-date through {_fmt_day(as_of)}"
    if ref_kind == "year":
        return str(y) if start.year == y else f"{start.year}-{y}"
    if ref_kind == "relative":
        return _describe_relative(as_of, start)
    raise ValueError(f"unknown time-phrase kind: {ref_kind!r}")
