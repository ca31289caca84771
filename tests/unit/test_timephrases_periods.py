"""Time phrases naming a calendar period resolve to its as_of date and window: months, calendar
and fiscal quarters (a company's fiscal calendar when given), halves and mid-year, years and
year ranges, year-to-date, weeks and days; a period still running at the reference date is
capped there, a future one is not."""

from __future__ import annotations

from datetime import date

import pytest

from fintrade_tui.questions.timephrases import TimeRef, resolve_time
from tests.unit.timephrase_cases import REF, D, check_time


# --- months ---
@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("in July 2025", "July 2025"),
        ("July 2025", "July 2025"),
        ("at its July 2025 prices", "July 2025"),
        ("as of jul 2025", "jul 2025"),
        ("as of Jul. 2025", "Jul. 2025"),
        ("JULY 2025 results", "JULY 2025"),
        ("in July of 2025", "July of 2025"),
        ("in July, 2025", "July, 2025"),
        ("the 2025-07 print", "2025-07"),
    ],
)
def test_month_variants(text: str, phrase: str) -> None:
    check_time(text, "month", D(2025, 7, 31), D(2025, 7, 1), phrase)


@pytest.mark.parametrize("name", ["Sep", "Sept", "Sept.", "September", "sEpTeMbEr"])
def test_september_spellings(name: str) -> None:
    check_time(f"As of {name} 2025, is it cheap?", "month", D(2025, 9, 30), D(2025, 9, 1))


def test_february_of_a_leap_year_ends_on_the_29th() -> None:
    check_time("in February 2024", "month", D(2024, 2, 29), D(2024, 2, 1), "February 2024")


# --- quarters ---
@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("in Q3 2025", "Q3 2025"),
        ("Q3-2025", "Q3-2025"),
        ("2025 Q3 earnings", "2025 Q3"),
        ("q3 of 2025", "q3 of 2025"),
        ("in the third quarter of 2025", "the third quarter of 2025"),
        ("3rd quarter 2025", "3rd quarter 2025"),
        ("third-quarter 2025 results", "third-quarter 2025"),
    ],
)
def test_calendar_quarter_variants(text: str, phrase: str) -> None:
    ref = check_time(text, "quarter", D(2025, 9, 30), D(2025, 7, 1), phrase)
    assert ref.fiscal is False


@pytest.mark.parametrize(
    ("text", "as_of", "start"),
    [
        ("Q2 2024", D(2024, 6, 30), D(2024, 4, 1)),
        ("Q1 2024", D(2024, 3, 31), D(2024, 1, 1)),
        ("fourth quarter 2024", D(2024, 12, 31), D(2024, 10, 1)),
        ("the final quarter of 2024", D(2024, 12, 31), D(2024, 10, 1)),
        ("last quarter of 2024", D(2024, 12, 31), D(2024, 10, 1)),
    ],
)
def test_quarter_dates(text: str, as_of: date, start: date) -> None:
    check_time(text, "quarter", as_of, start, text)


@pytest.mark.parametrize(
    "text",
    [
        "fiscal Q3 2025",
        "Q3 fiscal 2025",
        "fiscal third quarter 2025",
        "the fiscal third quarter of 2025",
        "Q3 FY2025",
        "FY2025 Q3",
    ],
)
def test_fiscal_quarter_falls_back_to_the_calendar_quarter(text: str) -> None:
    ref = check_time(f"How did it do in {text}?", "fiscal_quarter", D(2025, 9, 30), D(2025, 7, 1))
    assert ref.fiscal is True and ref.phrase == text


def test_fiscal_quarter_uses_the_company_calendar_when_given() -> None:
    calls: list[tuple[int, int]] = []

    def apple(year: int, q: int) -> date | None:
        calls.append((year, q))
        return D(2025, 6, 28) if (year, q) == (2025, 3) else None

    ref = resolve_time("Apple's fiscal Q3 2025 margins", REF, apple)
    assert ref is not None and calls == [(2025, 3)]
    assert (ref.kind, ref.fiscal, ref.as_of, ref.end) == (
        "fiscal_quarter",
        True,
        *[D(2025, 6, 28)] * 2,
    )
    assert ref.start == D(2025, 3, 29)  # about three months: the day after Mar 28
    # the mapper has no answer: calendar quarter, still flagged fiscal
    ref = resolve_time("fiscal Q1 2025", REF, apple)
    assert ref is not None and (ref.as_of, ref.start, ref.fiscal) == (
        D(2025, 3, 31),
        D(2025, 1, 1),
        True,
    )


def test_calendar_quarters_ignore_the_fiscal_mapper() -> None:
    ref = resolve_time("Q3 2025", REF, lambda y, q: D(2025, 6, 28))
    assert ref is not None and (ref.kind, ref.as_of) == ("quarter", D(2025, 9, 30))


# --- halves and mid-year ---
@pytest.mark.parametrize(
    ("text", "as_of", "start", "phrase"),
    [
        ("H1 2025", D(2025, 6, 30), D(2025, 1, 1), "H1 2025"),
        ("in 1H 2025", D(2025, 6, 30), D(2025, 1, 1), "1H 2025"),
        ("2025 H1 sales", D(2025, 6, 30), D(2025, 1, 1), "2025 H1"),
        ("first half of 2025", D(2025, 6, 30), D(2025, 1, 1), "first half of 2025"),
        ("in the second half of 2024", D(2024, 12, 31), D(2024, 7, 1), "the second half of 2024"),
        ("H2 2024", D(2024, 12, 31), D(2024, 7, 1), "H2 2024"),
        ("H2 2025", D(2025, 9, 30), D(2025, 7, 1), "H2 2025"),  # running at the reference: capped
    ],
)
def test_halves(text: str, as_of: date, start: date, phrase: str) -> None:
    check_time(text, "half", as_of, start, phrase)


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("mid-2025", "mid-2025"),
        ("in mid 2025", "mid 2025"),
        ("by mid-year 2025", "mid-year 2025"),
        ("midyear 2025", "midyear 2025"),
        ("in the middle of 2025", "the middle of 2025"),
    ],
)
def test_mid_year(text: str, phrase: str) -> None:
    check_time(text, "mid_year", D(2025, 6, 30), D(2025, 4, 1), phrase)


def test_amid_is_not_mid() -> None:
    check_time("amid 2025 tariffs", "year", D(2025, 9, 30), D(2025, 1, 1), "2025")


# --- years ---
@pytest.mark.parametrize(
    "text",
    [
        "based on 2025 data",
        "in 2025",
        "for 2025",
        "Is 2025's rally over?",
        "Is 2025\u2019s rally over?",
        "the 2025 market",
        "the current 2025 economy",
        "2025",
    ],
)
def test_current_year_is_capped_at_the_reference(text: str) -> None:
    check_time(text, "year", D(2025, 9, 30), D(2025, 1, 1), "2025")


def test_past_year_is_whole() -> None:
    check_time("How did it do in 2023?", "year", D(2023, 12, 31), D(2023, 1, 1), "2023")


@pytest.mark.parametrize("text", ["2024-2025", "2024\u20132025", "2024-25", "2024 to 2025"])
def test_year_ranges(text: str) -> None:
    check_time(f"after its {text} acquisition spree", "year", D(2025, 9, 30), D(2024, 1, 1), text)


def test_closed_year_range() -> None:
    check_time("from 2020-2023", "year", D(2023, 12, 31), D(2020, 1, 1), "2020-2023")


@pytest.mark.parametrize("text", ["FY2024", "FY 2024", "fiscal 2024", "fiscal year 2024", "FY24"])
def test_fiscal_year_is_flagged(text: str) -> None:
    ref = check_time(f"{text} revenue", "year", D(2024, 12, 31), D(2024, 1, 1), text)
    assert ref.fiscal is True


# --- year-to-date ---
@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("year-to-date 2025", "year-to-date 2025"),
        ("YTD 2025", "YTD 2025"),
        ("for the year-to-date 2025", "year-to-date 2025"),
        ("year to date 2025", "year to date 2025"),
        ("2025 YTD returns", "2025 YTD"),
        ("year-to-date through September 30, 2025", "year-to-date through September 30, 2025"),
    ],
)
def test_ytd(text: str, phrase: str) -> None:
    check_time(text, "ytd", D(2025, 9, 30), D(2025, 1, 1), phrase)


def test_ytd_of_a_past_year_runs_to_december() -> None:
    check_time("YTD 2024", "ytd", D(2024, 12, 31), D(2024, 1, 1))
    check_time("year-to-date as of June 30, 2024", "ytd", D(2024, 6, 30), D(2024, 1, 1))


def test_bare_ytd_ends_at_the_reference() -> None:
    check_time("How has NVDA done YTD?", "ytd", D(2025, 9, 30), D(2025, 1, 1), "YTD")


# --- weeks and days ---
@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("the week of September 8, 2025", "the week of September 8, 2025"),
        ("week of Sep 10, 2025", "week of Sep 10, 2025"),  # a Wednesday: same Mon..Fri
        ("the week ending September 12, 2025", "the week ending September 12, 2025"),
        ("the week of 2025-09-08", "the week of 2025-09-08"),
    ],
)
def test_week(text: str, phrase: str) -> None:
    check_time(text, "week", D(2025, 9, 12), D(2025, 9, 8), phrase)


def test_week_running_at_the_reference_is_capped() -> None:
    check_time("the week of September 29, 2025", "week", D(2025, 9, 30), D(2025, 9, 29))


@pytest.mark.parametrize(
    "text",
    [
        "September 30, 2025",
        "Sep 30, 2025",
        "Sept. 30, 2025",
        "Sept 30 2025",
        "September 30th, 2025",
        "2025-09-30",
        "30 September 2025",
        "30th of September 2025",
        "9/30/2025",
    ],
)
def test_day_variants(text: str) -> None:
    check_time(f"What was the close on {text}?", "day", D(2025, 9, 30), D(2025, 9, 1), text)


def test_day_window_is_thirty_days() -> None:
    check_time("on March 15, 2024", "day", D(2024, 3, 15), D(2024, 2, 15), "March 15, 2024")


def test_impossible_day_is_not_a_day() -> None:
    check_time("on February 30, 2025", "year", D(2025, 9, 30), D(2025, 1, 1), "2025")


# --- capping ---
def test_future_periods_are_not_capped() -> None:
    check_time("Q4 2025 guidance", "quarter", D(2025, 12, 31), D(2025, 10, 1))
    check_time("in 2026", "year", D(2026, 12, 31), D(2026, 1, 1))
    check_time("in October 2025", "month", D(2025, 10, 31), D(2025, 10, 1))


def test_a_period_starting_on_the_reference_is_capped() -> None:
    assert resolve_time("in 2025", D(2025, 1, 1)) == TimeRef(
        D(2025, 1, 1), D(2025, 1, 1), D(2025, 1, 1), "2025", (3, 7), "year", periods=((2025, None),)
    )
