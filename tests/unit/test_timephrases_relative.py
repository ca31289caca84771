"""Relative time phrases ("the past 3 months", "last quarter") resolve to a window ending at the
reference date, or at another date the question names (the anchor, whose kind and fiscal flag
are kept); number words count; "last year" alone is no window."""

from __future__ import annotations

from datetime import date

import pytest

from fintrade_tui.questions.timephrases import resolve_time
from tests.unit.timephrase_cases import REF, D, check_time


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
    ref = check_time(text, "relative", D(2025, 9, 30), start, phrase)
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
    check_time(f"over the past {n} months", "relative", D(2025, 9, 30), start)


def test_relative_is_anchored_at_the_other_date() -> None:
    text = "As of August 2025, how has Tesla performed over the past 3 months?"
    ref = check_time(text, "relative", D(2025, 8, 31), D(2025, 6, 1), "August 2025")
    assert ref.anchor_kind == "month"  # the phrase to rewrite is the anchor's


def test_relative_anchored_at_a_day_and_a_quarter() -> None:
    check_time(
        "On June 15, 2025, over the last 30 days", "relative", D(2025, 6, 15), D(2025, 5, 17)
    )
    ref = check_time(
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
    check_time(text, "last_quarter", as_of, start)


def test_last_year_alone_is_not_a_window() -> None:
    assert resolve_time("revenue grew last year", REF) is None
