"""Time phrases in question text resolve to an as_of date and a window; describe() inverts it."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from fintrade_tui.questions.timephrases import TimeRef, describe, resolve_time

REF = date(2025, 9, 30)  # QuestionsConfig.reference_date
D = date


def _check(text: str, kind: str, as_of: date, start: date, phrase: str | None = None) -> TimeRef:
    ref = resolve_time(text, REF)
    assert ref is not None, text
    assert (ref.kind, ref.as_of, ref.start, ref.end) == (kind, as_of, start, as_of), text
    assert text[ref.span[0] : ref.span[1]] == ref.phrase
    if phrase is not None:
        assert ref.phrase == phrase
    return ref


# --- the real FinTradeBench phrasings (reference 2025-09-30) ---
BENCHMARK = [
    (
        "As of September 2025, is Apple really as profitable as everyone says it is?",
        "month",
        D(2025, 9, 30),
        D(2025, 9, 1),
        "September 2025",
    ),
    (
        "Why is Broadcom's stock price so high in 2025 despite being in semiconductors?",
        "year",
        D(2025, 9, 30),
        D(2025, 1, 1),
        "2025",
    ),
    (
        "Based on Q3 2025 data, which generates better returns",
        "quarter",
        D(2025, 9, 30),
        D(2025, 7, 1),
        "Q3 2025",
    ),
    (
        "Should I worry about Netflix's debt levels in mid-2025?",
        "mid_year",
        D(2025, 6, 30),
        D(2025, 4, 1),
        "mid-2025",
    ),
    (
        "Is PayPal overleveraged after its 2024-2025 acquisition spree?",
        "year",
        D(2025, 9, 30),
        D(2024, 1, 1),
        "2024-2025",
    ),
    (
        "Based on data for the first half of 2025",
        "half",
        D(2025, 6, 30),
        D(2025, 1, 1),
        "the first half of 2025",
    ),
    (
        "Is Adobe expensive or reasonably priced for the year-to-date 2025?",
        "ytd",
        D(2025, 9, 30),
        D(2025, 1, 1),
        "year-to-date 2025",
    ),
    (
        "Has AMD's momentum turned positive after the July 2025 selloff?",
        "month",
        D(2025, 7, 31),
        D(2025, 7, 1),
        "July 2025",
    ),
    (
        "How did Nvidia trade the week of September 8, 2025?",
        "week",
        D(2025, 9, 12),
        D(2025, 9, 8),
        "the week of September 8, 2025",
    ),
    ("over the past 3 months", "relative", D(2025, 9, 30), D(2025, 7, 1), "the past 3 months"),
    (
        "What happened in the last quarter of 2024?",
        "quarter",
        D(2024, 12, 31),
        D(2024, 10, 1),
        "the last quarter of 2024",
    ),
    (
        "Does Amazon's massive infrastructure create financial risk in the current 2025 economy?",
        "year",
        D(2025, 9, 30),
        D(2025, 1, 1),
        "2025",
    ),
]


@pytest.mark.parametrize(("text", "kind", "as_of", "start", "phrase"), BENCHMARK)
def test_benchmark_phrasings(text: str, kind: str, as_of: date, start: date, phrase: str) -> None:
    ref = _check(text, kind, as_of, start, phrase)
    assert ref.fiscal is False and ref.anchor_kind is None


@pytest.mark.parametrize(
    "text", ["no date here", "What is Apple's P/E ratio?", "", "Is $2025 a fair price?"]
)
def test_no_time_reference_is_none(text: str) -> None:
    assert resolve_time(text, REF) is None


@pytest.mark.parametrize(
    "text", ["It trades at 2025.5 today", "It bought 2,025 shares", "a 2025% rise", "ticker X2025"]
)
def test_numbers_that_are_not_years_are_ignored(text: str) -> None:
    assert resolve_time(text, REF) is None


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
    _check(text, "month", D(2025, 7, 31), D(2025, 7, 1), phrase)


@pytest.mark.parametrize("name", ["Sep", "Sept", "Sept.", "September", "sEpTeMbEr"])
def test_september_spellings(name: str) -> None:
    _check(f"As of {name} 2025, is it cheap?", "month", D(2025, 9, 30), D(2025, 9, 1))


def test_february_of_a_leap_year_ends_on_the_29th() -> None:
    _check("in February 2024", "month", D(2024, 2, 29), D(2024, 2, 1), "February 2024")


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
    ref = _check(text, "quarter", D(2025, 9, 30), D(2025, 7, 1), phrase)
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
    _check(text, "quarter", as_of, start, text)


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
    ref = _check(f"How did it do in {text}?", "fiscal_quarter", D(2025, 9, 30), D(2025, 7, 1))
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
    _check(text, "half", as_of, start, phrase)


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
    _check(text, "mid_year", D(2025, 6, 30), D(2025, 4, 1), phrase)


def test_amid_is_not_mid() -> None:
    _check("amid 2025 tariffs", "year", D(2025, 9, 30), D(2025, 1, 1), "2025")


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
    _check(text, "year", D(2025, 9, 30), D(2025, 1, 1), "2025")


def test_past_year_is_whole() -> None:
    _check("How did it do in 2023?", "year", D(2023, 12, 31), D(2023, 1, 1), "2023")


@pytest.mark.parametrize("text", ["2024-2025", "2024\u20132025", "2024-25", "2024 to 2025"])
def test_year_ranges(text: str) -> None:
    _check(f"after its {text} acquisition spree", "year", D(2025, 9, 30), D(2024, 1, 1), text)


def test_closed_year_range() -> None:
    _check("from 2020-2023", "year", D(2023, 12, 31), D(2020, 1, 1), "2020-2023")


@pytest.mark.parametrize("text", ["FY2024", "FY 2024", "fiscal 2024", "fiscal year 2024", "FY24"])
def test_fiscal_year_is_flagged(text: str) -> None:
    ref = _check(f"{text} revenue", "year", D(2024, 12, 31), D(2024, 1, 1), text)
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
    _check(text, "ytd", D(2025, 9, 30), D(2025, 1, 1), phrase)


def test_ytd_of_a_past_year_runs_to_december() -> None:
    _check("YTD 2024", "ytd", D(2024, 12, 31), D(2024, 1, 1))
    _check("year-to-date as of June 30, 2024", "ytd", D(2024, 6, 30), D(2024, 1, 1))


def test_bare_ytd_ends_at_the_reference() -> None:
    _check("How has NVDA done YTD?", "ytd", D(2025, 9, 30), D(2025, 1, 1), "YTD")


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
    _check(text, "week", D(2025, 9, 12), D(2025, 9, 8), phrase)


def test_week_running_at_the_reference_is_capped() -> None:
    _check("the week of September 29, 2025", "week", D(2025, 9, 30), D(2025, 9, 29))


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
    _check(f"What was the close on {text}?", "day", D(2025, 9, 30), D(2025, 9, 1), text)


def test_day_window_is_thirty_days() -> None:
    _check("on March 15, 2024", "day", D(2024, 3, 15), D(2024, 2, 15), "March 15, 2024")


def test_impossible_day_is_not_a_day() -> None:
    _check("on February 30, 2025", "year", D(2025, 9, 30), D(2025, 1, 1), "2025")


# --- capping ---
def test_future_periods_are_not_capped() -> None:
    _check("Q4 2025 guidance", "quarter", D(2025, 12, 31), D(2025, 10, 1))
    _check("in 2026", "year", D(2026, 12, 31), D(2026, 1, 1))
    _check("in October 2025", "month", D(2025, 10, 31), D(2025, 10, 1))


def test_a_period_starting_on_the_reference_is_capped() -> None:
    assert resolve_time("in 2025", D(2025, 1, 1)) == TimeRef(
        D(2025, 1, 1), D(2025, 1, 1), D(2025, 1, 1), "2025", (3, 7), "year", periods=((2025, None),)
    )


# --- relative phrases ---
@pytest.mark.parametrize(
    ("text", "start", "phrase"),
    [
        ("over the past 3 months", D(2025, 7, 1), "the past 3 months"),
        ("in the last 6 months", D(2025, 4, 1), "the last 6 months"),
        ("past two weeks", D(2025, 9, 17), "past two weeks"),
        ("last 30 days", D(2025, 9, 1), "last 30 days"),
        ("over the past year", D(2024, 10, 1), "the past year"),
        ("over the last quarter", D(2025, 7, 1), "the last quarter"),
        ("in the past month", D(2025, 9, 1), "the past month"),
        ("the trailing twelve months", D(2024, 10, 1), "the trailing twelve months"),
        ("the past 2 years", D(2023, 10, 1), "the past 2 years"),
        ("the past couple of weeks", D(2025, 9, 17), "the past couple of weeks"),
        ("over the past 12-month period", D(2024, 10, 1), "the past 12-month"),
        ("Over The Past Three Months", D(2025, 7, 1), "The Past Three Months"),
    ],
)
def test_relative_at_the_reference(text: str, start: date, phrase: str) -> None:
    ref = _check(text, "relative", D(2025, 9, 30), start, phrase)
    assert ref.anchor_kind is None


@pytest.mark.parametrize(
    ("n", "start"),
    [
        ("one", D(2025, 9, 1)),
        ("two", D(2025, 8, 1)),
        ("three", D(2025, 7, 1)),
        ("four", D(2025, 6, 1)),
        ("five", D(2025, 5, 1)),
        ("six", D(2025, 4, 1)),
        ("seven", D(2025, 3, 1)),
        ("eight", D(2025, 2, 1)),
        ("nine", D(2025, 1, 1)),
        ("ten", D(2024, 12, 1)),
        ("eleven", D(2024, 11, 1)),
        ("twelve", D(2024, 10, 1)),
    ],
)
def test_number_words(n: str, start: date) -> None:
    _check(f"over the past {n} months", "relative", D(2025, 9, 30), start)


def test_relative_is_anchored_at_the_other_date() -> None:
    text = "As of August 2025, how has Tesla performed over the past 3 months?"
    ref = _check(text, "relative", D(2025, 8, 31), D(2025, 6, 1), "August 2025")
    assert ref.anchor_kind == "month"  # the phrase to rewrite is the anchor's


def test_relative_anchored_at_a_day_and_a_quarter() -> None:
    _check("On June 15, 2025, over the last 30 days", "relative", D(2025, 6, 15), D(2025, 5, 17))
    ref = _check(
        "Based on Q2 2025 data, over the last year", "relative", D(2025, 6, 30), D(2024, 7, 1)
    )
    assert ref.phrase == "Q2 2025" and ref.anchor_kind == "quarter"


def test_relative_anchor_keeps_the_fiscal_flag() -> None:
    ref = resolve_time(
        "In fiscal Q3 2025, over the past 2 months", REF, lambda y, q: D(2025, 6, 28)
    )
    assert ref is not None
    assert (ref.kind, ref.as_of, ref.start, ref.fiscal) == (
        "relative",
        D(2025, 6, 28),
        D(2025, 4, 29),
        True,
    )


@pytest.mark.parametrize(
    ("text", "as_of", "start"),
    [
        ("How were last quarter's margins?", D(2025, 9, 30), D(2025, 7, 1)),
        ("in the most recent quarter", D(2025, 9, 30), D(2025, 7, 1)),
        ("As of August 2025, how were last quarter's margins?", D(2025, 6, 30), D(2025, 4, 1)),
    ],
)
def test_last_quarter_is_the_last_closed_calendar_quarter(
    text: str, as_of: date, start: date
) -> None:
    _check(text, "last_quarter", as_of, start)


def test_last_year_alone_is_not_a_window() -> None:
    assert resolve_time("revenue grew last year", REF) is None


# --- several phrases ---
def test_most_specific_phrase_wins() -> None:
    text = (
        "In 2025, after the July 2025 selloff and Q3 2025 earnings, the week of September 8, 2025"
    )
    _check(text, "week", D(2025, 9, 12), D(2025, 9, 8), "the week of September 8, 2025")
    _check("In 2025 H1, after the July 2025 selloff", "month", D(2025, 7, 31), D(2025, 7, 1))
    _check("in 2024, mid-2025 and Q1 2025", "quarter", D(2025, 3, 31), D(2025, 1, 1), "Q1 2025")
    _check("in 2024 and YTD 2025", "ytd", D(2025, 9, 30), D(2025, 1, 1))


def test_comparisons_resolve_to_the_latest_period_over_a_window_covering_all() -> None:
    text = "Q2 2025 versus Q3 2025"
    ref = _check(text, "quarter", D(2025, 9, 30), D(2025, 4, 1), text)
    assert ref.periods == ((2025, 2), (2025, 3))
    _check("2024 versus 2023", "year", D(2024, 12, 31), D(2023, 1, 1), "2024 versus 2023")
    ref = _check(
        "from FY2016 to FY2017", "year", D(2017, 12, 31), D(2016, 1, 1), "FY2016 to FY2017"
    )
    assert ref.fiscal and ref.periods == ((2016, None), (2017, None))
    ref = _check("FY2022 vs FY2021 margins", "year", D(2022, 12, 31), D(2021, 1, 1))
    assert ref.fiscal and ref.periods == ((2021, None), (2022, None))
    ref = _check("in fiscal years 2020 and 2021", "year", D(2021, 12, 31), D(2020, 1, 1))
    assert ref.fiscal and ref.periods == ((2020, None), (2021, None))


def test_last_n_fiscal_years_is_fiscal_and_counts_the_years() -> None:
    ref = resolve_time("capex over the last three fiscal years", REF)
    assert ref is not None and ref.fiscal and ref.years_back == 3
    ref = resolve_time("capex over the last three years", REF)
    assert ref is not None and not ref.fiscal and ref.years_back is None


def test_span_points_into_the_original_text() -> None:
    text = "Why is Broadcom\u2019s price high in 2025?"
    ref = resolve_time(text, REF)
    assert ref is not None and ref.span == (32, 36) and text[32:36] == "2025"


def test_timeref_is_frozen() -> None:
    ref = resolve_time("Q3 2025", REF)
    assert ref is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.as_of = D(2020, 1, 1)  # type: ignore[misc]


# --- describe ---
@pytest.mark.parametrize(
    ("kind", "as_of", "start", "phrase"),
    [
        ("month", D(2025, 6, 30), D(2025, 6, 1), "June 2025"),
        ("quarter", D(2025, 9, 30), D(2025, 7, 1), "Q3 2025"),
        ("last_quarter", D(2025, 6, 30), D(2025, 4, 1), "Q2 2025"),
        ("fiscal_quarter", D(2025, 3, 31), D(2025, 1, 1), "fiscal Q1 2025"),
        ("half", D(2025, 6, 30), D(2025, 1, 1), "the first half of 2025"),
        ("half", D(2024, 12, 31), D(2024, 7, 1), "the second half of 2024"),
        ("year", D(2025, 9, 30), D(2025, 1, 1), "2025"),
        ("year", D(2025, 9, 30), D(2024, 1, 1), "2024-2025"),
        ("mid_year", D(2025, 6, 30), D(2025, 4, 1), "mid-2025"),
        ("week", D(2025, 9, 12), D(2025, 9, 8), "the week of September 8, 2025"),
        ("day", D(2025, 9, 30), D(2025, 9, 1), "September 30, 2025"),
        ("ytd", D(2025, 9, 30), D(2025, 1, 1), "year-to-date through September 30, 2025"),
        ("relative", D(2025, 9, 30), D(2025, 7, 1), "the past 3 months to September 30, 2025"),
        ("relative", D(2025, 9, 30), D(2024, 10, 1), "the past year to September 30, 2025"),
        ("relative", D(2025, 9, 30), D(2025, 9, 17), "the past 2 weeks to September 30, 2025"),
        ("relative", D(2025, 6, 15), D(2025, 5, 17), "the past 30 days to June 15, 2025"),
    ],
)
def test_describe(kind: str, as_of: date, start: date, phrase: str) -> None:
    assert describe(kind, as_of, start) == phrase


def test_describe_rejects_unknown_kinds() -> None:
    with pytest.raises(ValueError, match="unknown"):
        describe("decade", REF, REF)


ROUND_TRIP = [
    ("day", D(2025, 9, 30), D(2025, 9, 1)),
    ("day", D(2024, 2, 29), D(2024, 1, 31)),
    ("week", D(2025, 9, 12), D(2025, 9, 8)),
    ("week", D(2024, 12, 27), D(2024, 12, 23)),
    ("month", D(2025, 9, 30), D(2025, 9, 1)),
    ("month", D(2024, 2, 29), D(2024, 2, 1)),
    ("quarter", D(2025, 9, 30), D(2025, 7, 1)),
    ("quarter", D(2024, 12, 31), D(2024, 10, 1)),
    ("last_quarter", D(2025, 6, 30), D(2025, 4, 1)),
    ("fiscal_quarter", D(2025, 3, 31), D(2025, 1, 1)),
    ("half", D(2025, 6, 30), D(2025, 1, 1)),
    ("half", D(2024, 12, 31), D(2024, 7, 1)),
    ("mid_year", D(2025, 6, 30), D(2025, 4, 1)),
    ("mid_year", D(2023, 6, 30), D(2023, 4, 1)),
    ("ytd", D(2025, 9, 30), D(2025, 1, 1)),
    ("ytd", D(2024, 6, 30), D(2024, 1, 1)),
    ("year", D(2024, 12, 31), D(2024, 1, 1)),
    ("year", D(2025, 9, 30), D(2025, 1, 1)),
    ("year", D(2025, 9, 30), D(2024, 1, 1)),
    ("relative", D(2025, 9, 30), D(2025, 7, 1)),
    ("relative", D(2025, 8, 31), D(2024, 9, 1)),
    ("relative", D(2024, 3, 31), D(2023, 4, 1)),
    ("relative", D(2025, 9, 30), D(2025, 9, 17)),
    ("relative", D(2025, 6, 15), D(2025, 5, 17)),
    ("relative", D(2025, 2, 28), D(2025, 2, 1)),
]


@pytest.mark.parametrize(("kind", "as_of", "start"), ROUND_TRIP)
def test_describe_round_trips(kind: str, as_of: date, start: date) -> None:
    phrase = describe(kind, as_of, start)
    ref = resolve_time(phrase, REF)
    assert ref is not None, phrase
    assert (ref.as_of, ref.start) == (as_of, start), phrase
    for wrapped in (f"How did it trade in {phrase}?", f"Based on {phrase} data, is it cheap?"):
        ref = resolve_time(wrapped, REF)
        assert ref is not None and (ref.as_of, ref.start) == (as_of, start), wrapped


def test_round_trips_cover_every_kind() -> None:
    kinds = "month quarter fiscal_quarter half year ytd mid_year week relative day last_quarter"
    assert {k for k, _, _ in ROUND_TRIP} == set(kinds.split())


# --- rewriting a question for another date, as the scaler does ---
def _rewrite(text: str, as_of: date, start: date) -> str:
    ref = resolve_time(text, REF)
    assert ref is not None
    new = describe(ref.anchor_kind or ref.kind, as_of, start)
    return text[: ref.span[0]] + new + text[ref.span[1] :]


@pytest.mark.parametrize(
    ("text", "as_of", "start", "expected"),
    [
        (
            "As of September 2025, is Apple really as profitable as everyone says it is?",
            D(2024, 6, 30),
            D(2024, 6, 1),
            "As of June 2024, is Apple really as profitable as everyone says it is?",
        ),
        (
            "Based on Q3 2025 data, which generates better returns",
            D(2024, 3, 31),
            D(2024, 1, 1),
            "Based on Q1 2024 data, which generates better returns",
        ),
        (
            "Should I worry about Netflix's debt levels in mid-2025?",
            D(2024, 6, 30),
            D(2024, 4, 1),
            "Should I worry about Netflix's debt levels in mid-2024?",
        ),
        (
            "Based on data for the first half of 2025",
            D(2024, 12, 31),
            D(2024, 7, 1),
            "Based on data for the second half of 2024",
        ),
        (
            "How did Nvidia trade the week of September 8, 2025?",
            D(2024, 6, 7),
            D(2024, 6, 3),
            "How did Nvidia trade the week of June 3, 2024?",
        ),
        (
            "Is Adobe expensive or reasonably priced for the year-to-date 2025?",
            D(2024, 6, 30),
            D(2024, 1, 1),
            "Is Adobe expensive or reasonably priced for the year-to-date through June 30, 2024?",
        ),
        (
            "How has Tesla performed over the past 3 months?",
            D(2024, 6, 30),
            D(2024, 4, 1),
            "How has Tesla performed over the past 3 months to June 30, 2024?",
        ),
        (
            "As of August 2025, how has Tesla performed over the past 3 months?",
            D(2024, 6, 30),
            D(2024, 4, 1),
            "As of June 2024, how has Tesla performed over the past 3 months?",
        ),
    ],
)
def test_rewrite_for_another_date(text: str, as_of: date, start: date, expected: str) -> None:
    out = _rewrite(text, as_of, start)
    assert out == expected
    ref = resolve_time(out, REF)
    assert ref is not None and (ref.as_of, ref.start) == (as_of, start)
