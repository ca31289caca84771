"""describe() writes a window back as a phrase, and the phrase resolves to the same window again
(alone or inside a question) for every kind; rewriting a question's phrase for another date, as
the scaler does, keeps the rest of the question."""

from __future__ import annotations

from datetime import date

import pytest

from fintrade_tui.questions.timephrases import describe, resolve_time
from tests.unit.timephrase_cases import REF, D


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
