"""Golden-indicator coverage read from an answer's text (audits/golden_coverage.py): names,
synonyms and abbreviations from the one vocabulary, each with a value near it; a name without a
value is named, not stated; the line the Arena shows, the judge's list beside it."""

from __future__ import annotations

import pytest

from fintrade_tui.audits.golden_coverage import coverage_text, golden_coverage, named
from fintrade_tui.ui.arena_model import golden_line

F4 = ["roa", "roe", "earnings_price"]  # FinTradeBench F4: ROA|ROE|Earnings/Price


def stated(text: str, golden: list[str] = F4) -> list[str]:
    return golden_coverage(text, golden)["stated"]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Nvidia's ROE is 33.38%.", ["roe"]),  # abbreviation
        ("Return on equity stands at 0.3338.", ["roe"]),  # name, any case
        ("Its returns on assets reached 21%.", ["roa"]),  # a plural
        ("The **Return on Assets (ROA)** is 21.31%.", ["roa"]),  # markup, name then abbreviation
        ("Earnings yield of 4.1% is low.", ["earnings_price"]),  # synonym
        ("E/P: 0.031", ["earnings_price"]),
        ("The earnings-to-price ratio is 0.031.", ["earnings_price"]),
        ("F_Earnings/Price: 0.0301", ["earnings_price"]),  # the Oracle's own spelling
        ("earnings_price = 0.03", ["earnings_price"]),  # the canonical name
        ("a 25.1% ROE", ["roe"]),  # the value before the name
        ("ROE ~33%", ["roe"]),
        ("| ROE | 25.1% |", ["roe"]),  # a table row
    ],
)
def test_a_name_with_a_value_is_stated(text: str, want: list[str]) -> None:
    assert stated(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "Nvidia's ROE and ROA are strong, and its earnings yield is attractive.",
        "Earnings/Price is NA, so no valuation multiple can be read.",
        "ROE for fiscal 2024 was high. The stock then rose 9.26%.",  # a year; the next sentence
        "The ROE shows efficiency; the stock rose 9.26% in September.",  # another clause
        "Step 1: ROE.",  # numbering is no value
        "roe deer eat 3 kg a day",  # an abbreviation matches in capitals only
    ],
)
def test_a_name_without_a_value_is_not_stated(text: str) -> None:
    cov = golden_coverage(text, F4)
    assert cov["stated"] == [] and cov["missing"] == F4


def test_named_without_a_value_is_reported() -> None:
    cov = golden_coverage("Nvidia's ROE is 33.38% and its ROA is strong.", F4)
    assert cov["stated"] == ["roe"] and cov["named"] == ["roa"]
    assert cov["missing"] == ["roa", "earnings_price"] and cov["values"] == {"roe": "33.38%"}


def test_pe_is_not_ep() -> None:
    """Decided (module docstring): the reciprocal is another figure, so P/E leaves E/P missing."""
    assert stated("The P/E ratio is 24.5 and the price-to-earnings multiple is 24.5x.") == []


def test_a_bare_yield_is_no_dividend_yield() -> None:
    golden = ["dividend_yield"]
    assert stated("The 10-year Treasury yield is 4.2%.", golden) == []
    assert stated("Its dividend yield is 0.03%.", golden) == ["dividend_yield"]


def test_lists_and_tables() -> None:
    assert stated("ROE and ROA were 25% and 4%, E/P 3.1%.") == F4
    cov = golden_coverage("ROE and ROA were 25% and 4%.", F4)
    assert cov["values"] == {"roa": "4%", "roe": "25%"}
    table = "| Ticker | ROE | ROA | E/P |\n|---|---|---|---|\n| NVDA | 33.4% | 21.3% | 2.1% |"
    assert golden_coverage(table, F4)["values"] == {
        "roa": "21.3%",
        "roe": "33.4%",
        "earnings_price": "2.1%",
    }
    # a name's value never runs past another indicator's name
    assert stated("ROE is above ROA at 21%.") == ["roa"]


def test_longest_name_wins_and_signals_read() -> None:
    names = [n for n, _ in named("Medium-term momentum 0.24; Momentum_20D=0.09; MACD Signal 0.96")]
    assert names == ["medium_term_momentum", "momentum_20d", "macd_signal"]
    golden = ["rsi_14", "ma_20", "macd"]
    text = "RSI(14) is 62.2, the 20-day Moving Average (243.12), MACD 1.84 above its signal."
    assert golden_coverage(text, golden)["values"] == {
        "rsi_14": "62.2",
        "ma_20": "243.12",
        "macd": "1.84",
    }


def test_golden_as_written_is_mapped() -> None:
    cov = golden_coverage("ROE of 25%", ["Return on Equity", "ROE", "Earnings/Price"])
    assert cov["golden"] == ["roe", "earnings_price"] and cov["stated"] == ["roe"]


def test_the_line_and_the_judges_list_beside_it() -> None:
    cov = golden_coverage("Nvidia's ROE is 25.1%; its ROA is strong.", F4)
    line = "golden coverage 1 of 3 from the text (roe 25.1%; named without a value: roa)"
    assert coverage_text(cov) == line
    assert coverage_text(golden_coverage("", F4)) == (
        "golden coverage 0 of 3 from the text (none stated)"
    )
    assert coverage_text(golden_coverage("ROE 1%", [])) == (
        "golden coverage: no golden indicators annotated"
    )
    prf = {"metrics_canonical": ["earnings_price", "roa", "roe"], "metrics_unmapped": ["P/E"]}
    judge = {"status": "ok", "detail": {"golden_prf": prf}}
    # no coverage stored by the judge: the one read from the text shows, the judge's list beside
    assert golden_line(cov, judge) == line + "; the judge listed: earnings_price, roa, roe, P/E"
    assert golden_line(cov, None) == line  # no judge: the text alone
    failed = {"status": "failure", "detail": {"error": "x"}}
    assert golden_line(cov, failed) == line
    assert golden_line(None, None) is None
    assert golden_line(golden_coverage("ROE 1%", []), None) is None  # a FinQA question: no line
    stored = {"status": "ok", "detail": {"golden_prf": prf, "golden_coverage": cov}}
    assert golden_line(None, stored).startswith(line + "; the judge listed:")
