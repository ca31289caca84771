"""Numeric audit: figures in an answer checked against the store at the question's as_of."""

from __future__ import annotations

from datetime import date

import pytest

from fintrade_tui.audits.indicator_mentions import indicator_mentions
from fintrade_tui.audits.numeric import audit, summary_line
from fintrade_tui.store.queries import snapshot
from fintrade_tui.workspace.questions import Question
from tests.conftest import needs_bundle

pytestmark = needs_bundle

NOV1 = date(2024, 11, 1)  # the FY2024 10-K's filing day
SEP30 = date(2025, 9, 30)


def question(as_of: date, *tickers: str) -> Question:
    return Question(
        id="q1",
        source="jsonl",
        category="F",
        text="How does the company look?",
        tickers=list(tickers or ["AAPL"]),
        as_of=as_of,
    )


def claims(result: dict) -> list[tuple[str | None, str | None, str]]:
    return [(c["indicator"], c["ticker"], c["verdict"]) for c in result["claims"]]


def test_a_false_roe_is_contradicted_with_provenance(con) -> None:
    roe = snapshot(con, "AAPL", NOV1)["fundamentals"]["roe"]
    result = audit("Apple's ROE is 0.90 [E1].", question(NOV1), con)
    (c,) = result["claims"]
    assert (c["indicator"], c["ticker"], c["verdict"]) == ("roe", "AAPL", "CONTRADICTED")
    assert c["value"] == 0.90 and c["unit"] == ""
    assert c["store_value"] == pytest.approx(roe["value"])
    assert roe["accession"] in c["source"]
    assert c["rel_error"] > 0.5
    assert result["as_of"] == "2024-11-01"
    assert summary_line(result).startswith("1 figure: 0 supported, 1 contradicted (ROE 0.90 vs")


@pytest.mark.parametrize("as_of", [NOV1, SEP30])
def test_the_true_roe_is_supported_as_a_fraction_and_a_percentage(con, as_of: date) -> None:
    v = snapshot(con, "AAPL", as_of)["fundamentals"]["roe"]["value"]
    answer = (
        f"Apple's ROE was {v:.2f}. Its return on equity of {round(v * 100)} percent is high. "
        f"ROE stood at {v * 100:.1f}%. The ROE {v * 100:.1f} is strong."
    )
    result = audit(answer, question(as_of), con)
    assert claims(result) == [("roe", "AAPL", "SUPPORTED")] * 4
    assert [c["unit"] for c in result["claims"]] == ["", "%", "%", ""]


def test_rounded_percent_matches_the_store_at_its_precision(con) -> None:
    # 0.3560 in the store: "36%" is the store value rounded to the stated precision
    result = audit("AAPL's ROE of 36% and 0.36.", question(SEP30), con)
    assert [c["verdict"] for c in result["claims"]] == ["SUPPORTED", "SUPPORTED"]


def test_point_in_time_uses_only_values_visible_at_as_of(con) -> None:
    after = snapshot(con, "AAPL", NOV1)["fundamentals"]["roe"]["value"]
    before = snapshot(con, "AAPL", date(2024, 10, 31))["fundamentals"]["roe"]["value"]
    assert abs(after - before) > 0.05
    answer = f"Apple's ROE is {after:.3f}."
    assert claims(audit(answer, question(date(2024, 10, 31)), con))[0][2] == "CONTRADICTED"
    assert claims(audit(answer, question(NOV1), con))[0][2] == "SUPPORTED"


def test_an_unknown_metric_is_not_found(con) -> None:
    result = audit(
        "Apple's customer happiness index of 87 is high. ROE is 0.26 and the loyalty score 91. "
        "Its ROE beats the sector's 12%.",
        question(NOV1),
        con,
    )
    cs = result["claims"]
    assert [c["verdict"] for c in cs] == ["NOT_FOUND", "SUPPORTED", "NOT_FOUND", "NOT_FOUND"]
    assert cs[0]["indicator"] is None and cs[0]["store_value"] is None
    assert "no store indicator" in cs[0]["why"]
    assert "score" in cs[2]["why"] and "sector" in cs[3]["why"]


def test_years_dates_labels_citations_and_windows_are_not_claims(con) -> None:
    ma = snapshot(con, "AAPL", NOV1)["signals"]["ma_20"]
    answer = (
        "1. In 2024, as of 2024-11-01 (Sep 30, Q3, FY2024, the 10-K filed November 1, 2024) [E1]\n"
        f"2. the 20-day MA was ${ma:.2f} [E2, E3]; RSI(14), MA20 and the 60-day window "
        "(accession 0000320193-24-000123, S&P 500) over 20 trading days."
    )
    result = audit(answer, question(NOV1), con)
    assert claims(result) == [("ma_20", "AAPL", "SUPPORTED")]
    assert answer[slice(*result["claims"][0]["span"])] == f"${ma:.2f}"


def test_ma_inside_a_word_is_not_an_indicator(con) -> None:
    assert indicator_mentions("MAYBE in MAY the MAXIMUM was reached") == []
    assert [i.key for i in indicator_mentions("the MA and the moving average")] == [
        "ma_20",
        "ma_20",
    ]
    result = audit("MAYBE 240 is a fair value.", question(NOV1), con)
    assert claims(result) == [(None, "AAPL", "NOT_FOUND")]


def test_a_name_inside_a_hyphenated_word_is_not_an_indicator(con) -> None:
    """ "closed-book" (a condition's name) is no closing price; "RSI-14" still is RSI."""
    assert indicator_mentions("claude-3-5-sonnet under closed-book: the answer") == []
    found = [i.key for i in indicator_mentions("it closed at $190 and RSI-14 was 55")]
    assert found == ["close", "rsi_14"]


def test_a_window_the_store_does_not_keep_is_not_found(con) -> None:
    result = audit("The 50-day moving average of $230 is below the price.", question(NOV1), con)
    (c,) = result["claims"]
    assert c["verdict"] == "NOT_FOUND" and "50-day" in c["why"]


def test_rsi_claims_are_checked_against_the_signal(con) -> None:
    rsi = snapshot(con, "AAPL", SEP30)["signals"]["rsi_14"]
    answer = (
        f"Apple's RSI stood at {rsi:.1f}. Its 14-day RSI of {rsi + 20:.1f} is extreme. "
        f"The RSI is above {rsi - 10:.0f} and below {rsi - 5:.0f}."
    )
    cs = audit(answer, question(SEP30), con)["claims"]
    assert [(c["indicator"], c["verdict"]) for c in cs] == [
        ("rsi_14", "SUPPORTED"),
        ("rsi_14", "CONTRADICTED"),
        ("rsi_14", "SUPPORTED"),  # a lower bound the store value meets
        ("rsi_14", "CONTRADICTED"),  # an upper bound it does not
    ]
    assert cs[0]["store_value"] == pytest.approx(rsi)
    assert "signal on 2025-09-30" in cs[0]["source"]


def test_prices_percent_signals_and_multiples(con) -> None:
    s = snapshot(con, "AAPL", NOV1)
    de, mom = s["fundamentals"]["debt_equity"]["value"], s["signals"]["momentum_20d"]
    assert mom < 0
    answer = (
        f"Apple closed at ${s['close']:.2f}. Debt-to-equity of {de:.2f}x. "
        f"Momentum fell {abs(mom) * 100:.1f}% over the month."
    )
    cs = audit(answer, question(NOV1), con)["claims"]
    assert [(c["indicator"], c["unit"], c["verdict"]) for c in cs] == [
        ("close", "$", "SUPPORTED"),
        ("debt_equity", "x", "SUPPORTED"),
        ("momentum_20d", "%", "SUPPORTED"),
    ]


def test_two_tickers_tie_each_figure_to_the_named_company(con) -> None:
    a = snapshot(con, "AAPL", NOV1)["signals"]["rsi_14"]
    m = snapshot(con, "MSFT", NOV1)["signals"]["rsi_14"]
    assert abs(a - m) > 2
    answer = (
        f"Microsoft's RSI was {m:.1f} while Apple's RSI was {a:.1f}. "
        f"RSI: {a:.1f} for AAPL and {m:.1f} for MSFT. The RSI was 50."
    )
    cs = audit(answer, question(NOV1, "AAPL", "MSFT"), con)["claims"]
    assert [(c["ticker"], c["verdict"]) for c in cs] == [
        ("MSFT", "SUPPORTED"),
        ("AAPL", "SUPPORTED"),
        ("AAPL", "SUPPORTED"),
        ("MSFT", "SUPPORTED"),
        (None, "NOT_FOUND"),
    ]
    assert "no company named" in cs[-1]["why"]


def test_summary_counts_match_the_claims(con) -> None:
    s = snapshot(con, "AAPL", SEP30)
    roe, rsi = s["fundamentals"]["roe"]["value"], s["signals"]["rsi_14"]
    answer = (
        f"AAPL's ROE is 0.90, its RSI is {rsi:.1f} and ROE was {roe * 100:.1f}% in Q3 FY2025. "
        "The customer happiness index of 87 is unusual."
    )
    result = audit(answer, question(SEP30), con)
    verdicts = [c["verdict"] for c in result["claims"]]
    assert verdicts == ["CONTRADICTED", "SUPPORTED", "SUPPORTED", "NOT_FOUND"]
    assert result["summary"] == {"SUPPORTED": 2, "CONTRADICTED": 1, "NOT_FOUND": 1, "checked": 3}
    line = summary_line(result)
    assert line.startswith("4 figures: 2 supported, 1 contradicted, 1 not found (ROE 0.90 vs 0.356")
    assert summary_line({"claims": [], "summary": {}}) == "no figures to check"
