"""Fiscal calendars and the day an answer became knowable.

A fixture of 40 filing questions about 34 companies (`tests/data/questions/filing_questions*`)
resolves to the expected tickers, fiscal period and `as_of`. The expected table was read off the
bundle's raw files, not the code: polygon's "FY YYYY" filing dates, fundamentals-sec's period ends
and available dates, the filings' names. A synthetic store pins the calendar's rules one by one.
"""

from __future__ import annotations

import csv
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest

from fintrade_tui.questions.fiscal import FiscalCalendar
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.workspace.questions import Question
from tests.conftest import BUNDLE

DATA = Path(__file__).parent.parent / "data" / "questions"
REF = date(2025, 9, 30)
EXPECTED = list(csv.DictReader((DATA / "filing_questions_expected.csv").open(encoding="utf-8")))


@pytest.fixture(scope="module")
def resolved(built_store) -> dict[str, Question]:
    con = duckdb.connect(str(built_store.store), read_only=True)
    try:
        r = Resolver(con, REF)
        qs = read_questions(DATA / "filing_questions.jsonl")
        return {q.id: r.evidence(r.resolve(q)) for q in qs}
    finally:
        con.close()


def _latest(q: Question) -> dict:
    return max(q.extra["fiscal_periods"], key=lambda p: p["end"])


def test_the_fixture_covers_what_the_issue_asks(resolved, con) -> None:
    assert len(resolved) >= 30 and [r["id"] for r in EXPECTED] == list(resolved)
    companies = {t for r in EXPECTED for t in r["tickers"].split("|") if t != "*"}
    assert len(companies) >= 20
    cal = FiscalCalendar(con)
    months = {cal.year_end(t)[0] for t in companies if cal.knows(t)}
    assert {1, 6, 9, 12} <= months  # fiscal years ending in January, June, September, December
    flags = {f for r in EXPECTED for f in r["flags"].split("|") if f}
    assert {"no_data", "assumed"} <= flags
    assert {r["scope"] for r in EXPECTED} >= {"company", "compare", "market_scan"}
    assert {r["basis"] for r in EXPECTED} == {"filing", "estimated", "benchmark", "text"}
    inside = {t for (t,) in con.execute("SELECT DISTINCT ticker FROM index_membership").fetchall()}
    assert companies & inside and companies - inside  # in and outside the NASDAQ-100


@pytest.mark.parametrize("row", EXPECTED, ids=[r["id"] for r in EXPECTED])
def test_each_question_resolves_as_expected(resolved, row: dict) -> None:
    q = resolved[row["id"]]
    assert q.status == "resolved", q.reasons
    assert q.scope == row["scope"]
    if row["tickers"] != "*":
        assert q.tickers == row["tickers"].split("|")
    assert str(q.as_of) == row["as_of"] and str(q.window_start) == row["window_start"]
    assert q.window_end == q.as_of
    assert q.extra["as_of_basis"]["kind"] == row["basis"]
    if row["fiscal_year"]:
        p = _latest(q)
        assert p["fiscal_year"] == int(row["fiscal_year"])
        assert p["quarter"] == (int(row["quarter"]) if row["quarter"] else None)
        assert p["end"] == row["period_end"]
    else:
        assert "fiscal_periods" not in q.extra
    flags = set(filter(None, row["flags"].split("|")))
    reasons = " | ".join(q.reasons)
    assert ("no data in store" in reasons) == ("no_data" in flags)
    assert ("December year end assumed" in reasons) == ("assumed" in flags)
    assert ("as_of estimated" in reasons) == (row["basis"] == "estimated")


def test_a_fiscal_year_with_its_10k_in_the_bundle_is_that_filing_date(resolved) -> None:
    # the bundle names each filing <form>_<filed>_<accession>.htm
    name = next(p.stem for p in (BUNDLE / "fintradebench/filings/AAPL").glob("10-K_2024-*"))
    _, filed, accession = name.split("_")
    q = resolved["FQ01"]
    assert str(q.as_of) == filed
    assert accession in q.extra["as_of_basis"]["detail"]
    assert _latest(q)["report"] == {
        "filed": filed,
        "source": "filings",
        "form": "10-K",
        "accession": accession,
    }


def test_without_a_filing_date_as_of_is_the_period_end_plus_the_configured_lag(con) -> None:
    r = Resolver(con, REF, lag_days=45)
    q = r.resolve(Question("x", "t", "other", "What was Microsoft's revenue in fiscal 2008?"))
    assert q.as_of == date(2008, 6, 30) + timedelta(days=45)  # MSFT's year ends in June
    assert q.extra["as_of_basis"]["kind"] == "estimated"
    assert any(
        x.startswith("as_of estimated: MSFT fiscal 2008 ended 2008-06-30") for x in q.reasons
    )


def test_a_document_question_reads_a_bare_year_as_the_filers_fiscal_year(con) -> None:
    r = Resolver(con, REF)
    doc = r.resolve(
        Question("d", "t", "other", "According to its 10-K, what was Apple's 2024 revenue?")
    )
    assert doc.as_of == date(2024, 11, 1) and doc.extra["as_of_basis"]["kind"] == "filing"
    trading = r.resolve(Question("t", "t", "other", "How did Apple's RSI behave in 2024?"))
    assert trading.as_of == date(2024, 12, 31) and trading.extra["as_of_basis"]["kind"] == "text"


def test_supplied_evidence_is_dated_by_the_filing_of_the_period_it_is_about(con) -> None:
    r = Resolver(con, REF)
    q = Question(
        "s", "secque", "other", "What were Microsoft's capital expenditures in fiscal 2023?",
        extra={"ticker": "MSFT", "context": {"context_markdown": "Capex was $28,107 million."}},
    )  # fmt: skip
    q = r.evidence(r.resolve(q))
    assert q.oracle["supplied"]["context_markdown"]["available_from"] == "2023-07-27"
    named = Question("n", "secque", "other", "Apple's net sales?", extra={
        "source_file": "AAPL/10-K_2024-11-01_0000320193-24-000123.htm",
        "context": {"context": "Net sales were $391,035 million."},
    })  # fmt: skip
    got = r.evidence(r.resolve(named)).oracle["supplied"]["context"]
    assert got["available_from"] == "2024-11-01"


# --- the calendar's rules on a synthetic store ---
def _store(filings=(), polygon=(), sec=()) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(
        """CREATE TABLE filings (accession VARCHAR, ticker VARCHAR, form VARCHAR, filed DATE,
        period_end DATE, fiscal_year INTEGER, fiscal_period VARCHAR)"""
    )
    con.execute(
        "CREATE TABLE polygon_fundamentals (ticker VARCHAR, period VARCHAR, filing_date DATE)"
    )
    con.execute("CREATE TABLE sec_pit_rows (ticker VARCHAR, period_end DATE, available_date DATE)")
    for table, rows in (
        ("filings", filings),
        ("polygon_fundamentals", polygon),
        ("sec_pit_rows", sec),
    ):
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(f"INSERT INTO {table} VALUES ({marks})", list(rows))
    return con


D = date.fromisoformat


def test_a_52_53_week_year_ending_early_in_a_month_belongs_to_the_month_before() -> None:
    # Costco-like: years end on the Sunday nearest August 31
    sec = [("ACME", D("2023-09-03"), D("2023-10-11")), ("ACME", D("2024-09-01"), D("2024-10-09"))]
    poly = [("ACME", "FY 2023", D("2023-10-11")), ("ACME", "FY 2024", D("2024-10-09"))]
    cal = FiscalCalendar(_store(polygon=poly, sec=sec))
    assert cal.year_end("ACME") == (8, True)
    p = cal.period("ACME", 2024)
    assert (p.start, p.end, p.report.filed) == (D("2023-09-04"), D("2024-09-01"), D("2024-10-09"))
    assert cal.period("ACME", 2025).end == D("2025-08-31")  # no report yet: the calendar's guess


def test_a_10k_and_10q_filed_the_same_day_the_year_ended_at_the_earlier_period_end() -> None:
    sec = [("ACME", D("2024-01-31"), D("2024-06-10")), ("ACME", D("2024-04-30"), D("2024-06-10"))]
    cal = FiscalCalendar(_store(polygon=[("ACME", "FY 2024", D("2024-06-10"))], sec=sec))
    assert cal.year_end("ACME") == (1, True) and cal.period("ACME", 2024).end == D("2024-01-31")


def test_filers_named_by_the_start_year_shift_the_vendor_labels() -> None:
    sec = [("DLTR", D("2024-02-03"), D("2024-03-20"))]
    cal = FiscalCalendar(_store(polygon=[("DLTR", "FY 2024", D("2024-03-20"))], sec=sec))
    p = cal.period("DLTR", 2023)  # Dollar Tree's fiscal 2023 ended 2024-02-03
    assert p.end == D("2024-02-03") and p.report.filed == D("2024-03-20")


def test_the_filings_own_date_wins_and_late_vendor_dates_are_restatements() -> None:
    filings = [("0001-24-000001", "ACME", "10-K", D("2024-11-01"), D("2024-09-28"), 2024, "FY")]
    sec = [
        ("ACME", D("2024-09-28"), D("2024-10-30")),  # a vendor date before the filing's own
        ("ACME", D("2023-09-30"), D("2024-11-01")),  # a comparative filed a year later
    ]
    cal = FiscalCalendar(_store(filings=filings, sec=sec))
    assert cal.period("ACME", 2024).report.source == "filings"
    p = cal.period("ACME", 2023)
    assert p.end == D("2023-09-30") and p.report is None and p.as_of(90)[1]  # estimated


def test_an_unknown_company_gets_a_december_year_flagged_assumed() -> None:
    cal = FiscalCalendar(_store())
    p = cal.period("NOPE", 2023)
    assert (p.start, p.end, p.calendar, p.report) == (
        D("2023-01-01"),
        D("2023-12-31"),
        "assumed",
        None,
    )
    assert p.as_of(90) == (D("2024-03-30"), True)
    assert cal.latest_year("NOPE", D("2025-09-30")) == 2024


def test_a_store_without_the_calendar_tables_still_answers() -> None:
    cal = FiscalCalendar(duckdb.connect())
    assert cal.period("AAPL", 2024).calendar == "assumed"


def test_the_question_detail_says_where_as_of_came_from(resolved) -> None:
    from fintrade_tui.exports.question_markdown import question_markdown

    md = question_markdown(resolved["FQ22"])
    assert "- **As of from:** estimated — HD fiscal 2023 ended 2023-12-31" in md
    assert "- **HD fiscal 2023:** 2023-01-01 to 2023-12-31, no filing date in the store" in md
    assert "calendar assumed (December)" in md
    md = question_markdown(resolved["FQ10"])
    assert "- **CSCO Q3 fiscal 2024:** 2024-01-28 to 2024-04-27, filed 2024-05-21" in md
