"""The one figures reader (scoring/figures.py, scoring/not_figures.py): its table of examples —
what is a figure, read how, and what is not a figure and by which rule. Values are written by
hand from the text (percents as fractions, scale words applied)."""

from __future__ import annotations

import pytest

from fintrade_tui.scoring.figures import figures
from fintrade_tui.scoring.not_figures import why_not

# text, [(figure as written, value)] — every other numeral in the text is not a figure
READ = [
    (
        "What is the FY2018 net PP&E (in USD millions)? $12,645 million",
        [("$12,645 million", 12.645e9)],
    ),
    ("CHF2,000 per unit", [("CHF2,000", 2000.0)]),
    ("the margin was 4.9\\% in 2024", [("4.9\\%", 0.049)]),
    ("(1.0175)^{24} \\approx 1.504", [("1.0175", 1.0175), ("1.504", 1.504)]),
    ("2 * (0.25) = 0.5", [("2", 2.0), ("0.25", 0.25), ("0.5", 0.5)]),
    ("Net loss   (1,234)", [("(1,234)", -1234.0)]),
    ("includes 2000 shares held by a trust", [("2000", 2000.0)]),
    ("(500/1510) * 100 = 33.10%", [("500", 500.0), ("1510", 1510.0), ("33.10%", 0.331)]),
    ("['$66.1 million', '$62.9 million']", [("$66.1 million", 66.1e6), ("$62.9 million", 62.9e6)]),
    ("The cash conversion cycle is 105 days.", [("105", 105.0)]),
    ("Step 4: ROE = 24.5%", [("24.5%", 0.245)]),
    ("1. Revenue rose 12% in Q3 2024 [E1]", [("12%", 0.12)]),
    ("**3.  Simplified: P/E 38.2x", [("38.2x", 38.2)]),
    ("Answer: 0.6 (unit: percent)", [("0.6", 0.6)]),
]

# text, the rule that leaves its numeral out (scoring/not_figures.py KINDS)
NOT = [
    ("2024-11-01", "date"),
    ("December 31, 2024", "date"),
    ("from 12/11 to 12/16", "date"),
    ("Q3 FY2024", "fiscal label"),
    ("FY2018", "fiscal label"),
    ("revenue[1]", "citation"),
    ("[E2, E3]", "citation"),
    ("revenue¹", "footnote"),
    ("1. Revenue", "numbering"),
    ("Step 4: ", "document part"),
    ("step 2 of the method", "document part"),
    ("Item 7", "document part"),
    ("Year 5", "document part"),
    ("column 1", "document part"),
    ("see page 38", "page"),
    ("ASC 842", "standard"),
    ("the 10-K", "form"),
    ("the 3rd quarter", "ordinal"),
    ("the S&P 500", "name"),
    ("COVID-19", "name"),
    ("the 20-day average", "window"),
    ("over 20 trading days", "window"),
    ("MACD (12, 26, 9)", "parameters"),
    ("at 10:30", "time"),
    ("to 4 decimal places", "precision"),
    ("(1+r)^{24}", "exponent"),
    ("variance ^ 2", "exponent"),
    ("margin × 100", "formula constant"),
    ("multiply by 100", "formula constant"),
    ("(a + b) / 2", "formula constant"),
]


@pytest.mark.parametrize(("text", "expected"), READ)
def test_figures_are_read_as_an_analyst_reads_them(text: str, expected: list[tuple]) -> None:
    got = [f for f in figures(text, ranges=False) if not f.is_year]
    assert [f.text for f in got] == [t for t, _ in expected]
    assert [f.value for f in got] == pytest.approx([v for _, v in expected])
    assert all(text[f.span[0] : f.span[1]] == f.text for f in got)


@pytest.mark.parametrize(("text", "rule"), NOT)
def test_what_is_not_a_figure_and_why(text: str, rule: str) -> None:
    assert [f for f in figures(text) if not f.is_year] == [], text
    assert why_not(text) == rule


def test_a_year_is_kept_but_marked_and_a_count_of_2000_is_no_year() -> None:
    (year,) = figures("In 2019 revenue fell")
    assert year.is_year and year.value == 2019
    (count,) = figures("includes 2000 shares")
    assert not count.is_year and count.kind == "count" and count.noun == "shares"


def test_each_figure_knows_what_it_is_about_and_its_period() -> None:
    text = "In FY2018 net PP&E was $12,645 million, while revenue in 2019 reached $5.2 billion."
    ppe, revenue = [f for f in figures(text) if not f.is_year]
    assert ppe.about == "net pp&e" and ppe.period == "FY2018"
    assert revenue.about == "while revenue reached" and revenue.period == "2019"


def test_a_source_scales_its_bare_numbers_and_an_answer_does_not() -> None:
    doc = "($ in millions)\nNet sales $ 5,120\nMargin 30.8%"
    sales, margin = figures(doc, source=True)
    assert (sales.value, sales.raw, sales.scale_label) == (5.12e9, 5120.0, "in millions")
    assert margin.value == pytest.approx(0.308) and margin.raw is None
    (bare,) = figures("(in millions) 1,577")
    assert bare.value == 1577.0


def test_a_range_is_one_figure_or_two_ends_in_the_high_ends_unit() -> None:
    (one,) = figures("guidance of 10-12%")
    assert (one.value, one.high) == (pytest.approx(0.10), pytest.approx(0.12))
    low, high = figures("guidance of 10-12%", ranges=False)
    assert (low.text, low.value, high.value) == ("10", pytest.approx(0.10), pytest.approx(0.12))


@pytest.mark.parametrize("text", ["(1,234)", "12.5%", "(12.5%)", "$1.2bn", "\u22125", "40 bps"])
def test_rms_scoring_and_finqa_traces_read_a_figure_as_this_reader_does(text: str) -> None:
    """One reader behind them all: an RMS table cell's number and the value a FinQA trace
    links a literal to are this reader's, so a fix here reaches both."""
    from fintrade_tui.scoring.finqa.trace import holds
    from fintrade_tui.scoring.rms import parse_number

    (fig,) = figures(text)
    assert parse_number(text) == pytest.approx(fig.value, rel=1e-12)
    assert holds(text, fig.value) and holds(f"net loss was {text} in 2019", fig.value)
    assert holds(text, fig.number)  # a literal as written: 12.5 for "12.5%", 1.2 for "$1.2bn"
