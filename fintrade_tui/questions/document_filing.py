"""Document-filing room: the filer and as_of of a table-QA question, from the report it names.

FinQA and ConvFinQA name their page of an annual report ("ADI/2009/page_49.pdf": the importer
keeps ticker ADI and fiscal_year 2009): the question is about that report, so its company is
the filer and it became knowable the day the report was filed -- when the store knows that
filing (`FiscalCalendar.period`). Otherwise it stays unresolved, saying why (a filer the store
has no data for, a year before the store's filings, no filename); TAT-QA names no company or
report at all. Either way the question opens and runs on the table and passages it comes with.
"""

from __future__ import annotations

from fintrade_tui.questions.fiscal import FiscalCalendar
from fintrade_tui.questions.knowable import FILING, Knowable
from fintrade_tui.questions.model import Question

TABLE_QA_SOURCES = ("finqa", "convfinqa", "tatqa")
_RUNS = "it runs on the table and passages supplied with it"


def document_filing(
    q: Question, known: set[str] | frozenset[str], calendar: FiscalCalendar
) -> tuple[list[str], Knowable] | None:
    """(tickers, when) for a table-QA question; None for other sources (resolved as usual)."""
    if q.source not in TABLE_QA_SOURCES:
        return None
    ticker, year = str(q.extra.get("ticker") or ""), q.extra.get("fiscal_year")
    name = q.extra.get("filename") or "no filename"
    if not ticker or not isinstance(year, int):
        why = f"{q.source} question names no company or report ({name}): {_RUNS}"
        return [], Knowable(None, None, {"kind": FILING, "detail": why}, reasons=[why])
    if ticker not in known:
        why = f"{ticker} fiscal {year} report ({name}): no data for {ticker} in the store; {_RUNS}"
        return [], Knowable(None, None, {"kind": FILING, "detail": why}, reasons=[why])
    period = calendar.period(ticker, year)
    report = period.report
    if report is None:
        why = (
            f"{ticker} fiscal {year} report ({name}): the store knows no filing of it "
            f"(period ended {period.end}); {_RUNS}"
        )
        return [ticker], Knowable(
            None, None, {"kind": FILING, "detail": why}, periods=[period], reasons=[why]
        )
    doc = " ".join(x for x in (report.form, report.accession) if x)
    detail = (
        f"{ticker} fiscal {year} report ({name}) filed {report.filed} "
        f"({report.source}{': ' + doc if doc else ''})"
    )
    return [ticker], Knowable(
        report.filed, period.start, {"kind": FILING, "detail": detail}, periods=[period]
    )
