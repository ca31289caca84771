"""Time phrases in question text resolve to an as_of date and a window: the real FinTradeBench
phrasings, text with no time reference (numbers that are not years included), a question with
several phrases (the most specific wins, comparisons cover every period named), the span into
the original text, and the TimeRef being frozen."""

from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from fintrade_tui.questions.timephrases import resolve_time
from tests.unit.timephrase_cases import REF, D, check_time

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
    ref = check_time(text, kind, as_of, start, phrase)
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


# --- several phrases ---
def test_most_specific_phrase_wins() -> None:
    text = (
        "In 2025, after the July 2025 selloff and Q3 2025 earnings, the week of September 8, 2025"
    )
    check_time(text, "week", D(2025, 9, 12), D(2025, 9, 8), "the week of September 8, 2025")
    check_time("In 2025 H1, after the July 2025 selloff", "month", D(2025, 7, 31), D(2025, 7, 1))
    check_time("in 2024, mid-2025 and Q1 2025", "quarter", D(2025, 3, 31), D(2025, 1, 1), "Q1 2025")
    check_time("in 2024 and YTD 2025", "ytd", D(2025, 9, 30), D(2025, 1, 1))


def test_comparisons_resolve_to_the_latest_period_over_a_window_covering_all() -> None:
    text = "Q2 2025 versus Q3 2025"
    ref = check_time(text, "quarter", D(2025, 9, 30), D(2025, 4, 1), text)
    assert ref.periods == ((2025, 2), (2025, 3))
    check_time("2024 versus 2023", "year", D(2024, 12, 31), D(2023, 1, 1), "2024 versus 2023")
    ref = check_time(
        "from FY2016 to FY2017", "year", D(2017, 12, 31), D(2016, 1, 1), "FY2016 to FY2017"
    )
    assert ref.fiscal and ref.periods == ((2016, None), (2017, None))
    ref = check_time("FY2022 vs FY2021 margins", "year", D(2022, 12, 31), D(2021, 1, 1))
    assert ref.fiscal and ref.periods == ((2021, None), (2022, None))
    ref = check_time("in fiscal years 2020 and 2021", "year", D(2021, 12, 31), D(2020, 1, 1))
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
