"""Document-filing room: the filer and as_of of a table-QA question, from the report it names.

FinQA and ConvFinQA name their page of an annual report ("ADI/2009/page_49.pdf": the importer
keeps ticker ADI and fiscal_year 2009): the question is about that report, so its company is
the filer and it became knowable the day the report was filed -- when the store knows that
filing (`FiscalCalendar.period`). When it does not (a filer the store has no data for, a year
before the store's filings), the date is estimated as it is for fundamentals: the fiscal year's
end (the filer's own when the store knows its calendar, else December 31) plus
`fundamentals.estimated_lag_days`, labelled estimated, so the question runs on the table and
passages it comes with (No-RAG, Oracle) and retrieval finds only what was public by then.
TAT-QA names no company or report at all: it stays unresolved (its answers can be imported
and re-scored).
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from fintrade_tui.questions.fiscal import FiscalCalendar
from fintrade_tui.questions.knowable import ESTIMATED, FILING, Knowable
from fintrade_tui.workspace.questions import Question

TABLE_QA_SOURCES = ("finqa", "convfinqa", "tatqa")
_ESTIMATED = "date estimated: {end} (fiscal year end) + {lag} days"


def document_filing(
    q: Question, known: set[str] | frozenset[str], calendar: FiscalCalendar, lag_days: int = 90
) -> tuple[list[str], Knowable] | None:
    """(tickers, when) for a table-QA question; None for other sources (resolved as usual)."""
    if q.source not in TABLE_QA_SOURCES:
        return None
    ticker, year = str(q.extra.get("ticker") or ""), q.extra.get("fiscal_year")
    name = q.extra.get("filename") or "no filename"
    if not ticker or not isinstance(year, int):
        why = (
            f"{q.source} question names no company or report ({name}): it cannot run "
            "point-in-time; import answers produced elsewhere to explore and re-score them"
        )
        return [], Knowable(None, None, {"kind": FILING, "detail": why}, reasons=[why])
    if ticker not in known:
        end = date(year, 12, 31)
        why = f"{ticker} fiscal {year} report ({name}): no data for {ticker} in the store"
        return [ticker], _estimated(end, lag_days, why, [])
    period = calendar.period(ticker, year)
    report = period.report
    if report is None:
        why = (
            f"{ticker} fiscal {year} report ({name}): the store knows no filing of it "
            f"(period ended {period.end})"
        )
        return [ticker], _estimated(period.end, lag_days, why, [period])
    doc = " ".join(x for x in (report.form, report.accession) if x)
    detail = (
        f"{ticker} fiscal {year} report ({name}) filed {report.filed} "
        f"({report.source}{': ' + doc if doc else ''})"
    )
    return [ticker], Knowable(
        report.filed, period.start, {"kind": FILING, "detail": detail}, periods=[period]
    )


def _estimated(end: date, lag_days: int, why: str, periods: list[Any]) -> Knowable:
    """Knowable `lag_days` after the fiscal year's end, said so in the basis and the reasons."""
    note = f"{why}; {_ESTIMATED.format(end=end, lag=lag_days)}"
    start = date(end.year - 1, end.month, min(end.day, 28)) + timedelta(days=1)
    basis = {"kind": ESTIMATED, "detail": note}
    return Knowable(end + timedelta(days=lag_days), start, basis, periods=periods, reasons=[note])
