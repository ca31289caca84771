"""Fiscal-calendar room: what "fiscal 2023" or "Q3 FY2024" means for one company, and when the
report closing that period was filed.

A company's calendar comes from what the store knows about its reports:
- `filings` (the bundle's 10-K/10-Q): period end, filing date, fiscal year and period (DEI);
- `polygon_fundamentals`: the vendor's "FY 2024" / "Q3 2024" labels with their filing dates;
- `sec_pit_rows`: every quarter's period end with its filing date.
A polygon FY label is tied to a period end through the sec_pit row filed the same day. The year
end is the month most of those FY period ends fall in (52/53-week years ending a few days into
the next month count for the month before), and the naming is how the labels relate to the year
the period ends in. A few filers name a fiscal year after the calendar year it starts in
(Dollar Tree's "fiscal 2023" ended 2024-02-03) while the vendor labels it by its end: that
convention is kept in `NAMED_BY_START_YEAR`. A company without any of it gets a December year
end, flagged `assumed`.

`period(ticker, year, quarter)` gives the period's start and end (a report's own period end when
one lies within `MATCH_DAYS` of the calendar's), and its report's filing date: the filings' own,
else the earliest plausible vendor date (after the period end, within `PLAUSIBLE_DAYS`).
"""

from __future__ import annotations

import calendar
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Any

import duckdb

MATCH_DAYS = 20  # a report's period end this close to the calendar's is that period's end
PLAUSIBLE_DAYS = 150  # a vendor filing date later than this after the period end is a restatement
SLACK = timedelta(
    days=7
)  # a 52/53-week year ending up to a week into a month ends the month before
# filers that name a fiscal year after the calendar year it starts in, where the vendor labels
# it by the year it ends in (their 10-Ks: "fiscal 2023 ended February 3, 2024")
NAMED_BY_START_YEAR = frozenset({"DLTR", "ROST", "LULU"})
_LABEL = re.compile(r"^\s*(FY|Q([1-4]))\s+((?:19|20)\d\d)\s*$", re.I)


@dataclass(frozen=True)
class Report:
    filed: date
    source: str  # filings | polygon | sec_pit
    form: str | None = None
    accession: str | None = None


@dataclass(frozen=True)
class FiscalPeriod:
    """One fiscal year (quarter None) or quarter of one company, and the report that closed it."""

    ticker: str
    fiscal_year: int
    quarter: int | None
    start: date
    end: date
    end_source: str  # report (a report's own period end) | calendar (its month end, none seen)
    calendar: str  # store | assumed (December: the store knows nothing of this company)
    report: Report | None = None

    @property
    def label(self) -> str:
        return (f"Q{self.quarter} " if self.quarter else "") + f"fiscal {self.fiscal_year}"

    def as_of(self, lag_days: int) -> tuple[date, bool]:
        """When the period's figures became knowable, and whether that date is estimated."""
        if self.report is not None:
            return self.report.filed, False
        return self.end + timedelta(days=lag_days), True

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: (v.isoformat() if isinstance(v, date) else v) for k, v in d.items()} | {
            "report": {
                k: (v.isoformat() if isinstance(v, date) else v)
                for k, v in asdict(self.report).items()
            }
            if self.report
            else None
        }


@dataclass
class _Company:
    month: int = 12  # the fiscal year's last month
    offset: int = 0  # fiscal year = year its end falls in (less SLACK) + offset
    known: bool = False
    ends: dict[date, Report | None] = field(default_factory=dict)  # report period ends
    labelled: dict[tuple[int, int | None], Report] = field(default_factory=dict)  # vendor labels
    filed: dict[date, list[date]] = field(default_factory=dict)  # filing day -> period ends
    vendor_shift: int = 0  # filer's fiscal year = the vendor label's year + this


def _month_end(y: int, m: int) -> date:
    return date(y, m, calendar.monthrange(y, m)[1])


def _add_months(d: date, n: int) -> date:
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    return _month_end(y, m + 1)


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }


class FiscalCalendar:
    """Every company's fiscal calendar from one store connection, read on first use."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self._companies: dict[str, _Company] | None = None

    def _load(self) -> dict[str, _Company]:
        if self._companies is not None:
            return self._companies
        have = _tables(self.con)
        out: dict[str, _Company] = {}
        fy_ends: dict[str, list[tuple[int, date]]] = {}  # ticker -> (fiscal year, its end)
        if "filings" in have:
            for t, form, filed, end, fy, acc in self.con.execute(
                """SELECT ticker, form, filed, period_end, fiscal_year, accession
                FROM filings WHERE form IN ('10-K', '10-Q') AND period_end IS NOT NULL"""
            ).fetchall():
                c = out.setdefault(t, _Company())
                rep = Report(filed, "filings", form, acc)
                c.ends[end] = _earlier(c.ends.get(end), rep)
                if form == "10-K" and fy:
                    fy_ends.setdefault(t, []).append((int(fy), end))
        if "sec_pit_rows" in have:
            for t, end, avail in self.con.execute(
                "SELECT DISTINCT ticker, period_end, available_date FROM sec_pit_rows"
            ).fetchall():
                c = out.setdefault(t, _Company())
                pit = Report(avail, "sec_pit") if _plausible(end, avail) else None
                c.ends[end] = _earlier(c.ends.get(end), pit)
                c.filed.setdefault(avail, []).append(end)
        if "polygon_fundamentals" in have:
            for t, period, filed in self.con.execute(
                "SELECT ticker, period, filing_date FROM polygon_fundamentals"
            ).fetchall():
                m = _LABEL.match(str(period or ""))
                if not m or filed is None:
                    continue
                c = out.setdefault(t, _Company())
                year, quarter = int(m[3]), (int(m[2]) if m[2] else None)
                c.labelled[(year, quarter)] = Report(filed, "polygon")
                # a 10-K and a 10-Q filed the same day: the year ended at the earlier period end
                # (rows filed that day for a year earlier are restated comparatives)
                ends = [e for e in c.filed.get(filed, []) if _plausible(e, filed)]
                if quarter is None and ends:
                    fy_ends.setdefault(t, []).append((year, min(ends)))
        for t, c in out.items():
            anchors = fy_ends.get(t, [])
            if anchors:
                c.known = True
                c.month = Counter((e - SLACK).month for _, e in anchors).most_common(1)[0][0]
                c.offset = Counter(fy - (e - SLACK).year for fy, e in anchors).most_common(1)[0][0]
            if t in NAMED_BY_START_YEAR and not any(
                r and r.source == "filings" for r in c.ends.values()
            ):
                c.offset -= 1  # the vendor's label is the year it ends in; the filer's is one less
                c.vendor_shift = -1
                c.labelled = {(y - 1, q): r for (y, q), r in c.labelled.items()}
        self._companies = out
        return out

    def reported_end(self, ticker: str, filed: date) -> date | None:
        """The quarter a report filed on `filed` closed: the latest plausible period end of the
        rows filed that day (earlier ones are the comparatives it restates)."""
        c = self._load().get(ticker)
        ends = [e for e in (c.filed.get(filed, []) if c else []) if _plausible(e, filed)]
        return max(ends, default=None)

    def vendor_label_end(self, ticker: str, label_year: int, quarter: int) -> date | None:
        """Period end of a vendor's "Qn YYYY" label on a calendar the store knows, with the
        vendor's year naming brought to the filer's (`NAMED_BY_START_YEAR`)."""
        c = self._load().get(ticker)
        if c is None or not c.known:
            return None
        return self.period(ticker, label_year + c.vendor_shift, quarter).end

    def knows(self, ticker: str) -> bool:
        c = self._load().get(ticker)
        return bool(c and c.known)

    def year_end(self, ticker: str) -> tuple[int, bool]:
        """The month a company's fiscal year ends in, and whether the store knows it."""
        c = self._load().get(ticker) or _Company()
        return c.month, c.known

    def period(self, ticker: str, fiscal_year: int, quarter: int | None = None) -> FiscalPeriod:
        """A fiscal year (quarter None or 4 gives the year's last quarter) or quarter."""
        c = self._load().get(ticker) or _Company()
        year_end = _month_end(fiscal_year - c.offset, c.month)
        end_guess = year_end if quarter in (None, 4) else _add_months(year_end, 3 * quarter - 12)
        months = 12 if quarter is None else 3
        start_guess = _add_months(end_guess, -months)
        end, report = self._report_near(c, end_guess)
        start = self._report_near(c, start_guess)[0] + timedelta(days=1)
        label = c.labelled.get((fiscal_year, None if quarter in (None, 4) else quarter))
        vendor_earlier = (
            report is None or report.source != "filings" and label and (label.filed < report.filed)
        )
        if label and _plausible(end, label.filed) and vendor_earlier:
            report = label
        return FiscalPeriod(
            ticker=ticker,
            fiscal_year=fiscal_year,
            quarter=quarter,
            start=start,
            end=end,
            end_source="report" if end in c.ends else "calendar",
            calendar="store" if c.known else "assumed",
            report=report,
        )

    def label_of(self, ticker: str, end: date) -> tuple[int, int] | None:
        """(fiscal year, quarter) of a quarter ending on `end`, on a calendar the store knows."""
        c = self._load().get(ticker)
        if c is None or not c.known:
            return None
        shifted = end - SLACK
        k = (shifted.month - c.month) % 12
        if k % 3:
            return None  # not a quarter end of this calendar
        year = shifted.year + (1 if shifted.month > c.month else 0)
        return year + c.offset, (k // 3 or 4)

    def _report_near(self, c: _Company, guess: date) -> tuple[date, Report | None]:
        near = [e for e in c.ends if abs((e - guess).days) <= MATCH_DAYS]
        if not near:
            return guess, None
        end = min(near, key=lambda e: abs((e - guess).days))
        return end, c.ends[end]

    def latest_year(self, ticker: str, by: date) -> int:
        """The last fiscal year whose report was filed (or, estimated, fell due) by `by`."""
        c = self._load().get(ticker) or _Company()
        year = (by - SLACK).year + c.offset + 1
        while year > 1900:
            p = self.period(ticker, year)
            if p.report is not None and p.report.filed <= by or p.report is None and p.end < by:
                return year
            year -= 1
        return year


def _plausible(end: date, filed: date | None) -> bool:
    return filed is not None and end < filed <= end + timedelta(days=PLAUSIBLE_DAYS)


def _earlier(old: Report | None, new: Report | None) -> Report | None:
    """The report that closed a period: the filings' own, else the earliest vendor date."""
    if old is None or new is None:
        return old or new
    if (old.source == "filings") != (new.source == "filings"):
        return old if old.source == "filings" else new
    return new if new.filed < old.filed else old
