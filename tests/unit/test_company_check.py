"""The company check: an answer about another company than the question's is flagged, and the
audit summary the judge reads says so; comparisons that name the asked company are not."""

from __future__ import annotations

from fintrade_tui.audits.company import company_check
from fintrade_tui.audits.numeric import summary_line


def test_an_answer_about_another_company_is_flagged() -> None:
    got = company_check("Microsoft's ROE of 0.35 shows MSFT is efficient.", ["AAPL"])
    assert got == {"asked": ["AAPL"], "named": ["MSFT"], "other": ["MSFT"], "off_company": True}
    line = summary_line({"claims": [], "summary": {}, "companies": got})
    assert line == "no figures to check; about MSFT, not the question's AAPL"


def test_naming_the_asked_company_beside_others_is_not_flagged() -> None:
    got = company_check("Apple's margin beats Microsoft's and Nvidia's.", ["AAPL"])
    assert got["named"] == ["AAPL", "MSFT", "NVDA"] and not got["off_company"]
    assert not company_check("GOOGL trades above its 50-day average.", ["GOOG"])["off_company"]
    assert not company_check("The index rose 2%.", ["AAPL"])["off_company"]  # names nobody
    assert company_check("Apple rose.", []) is None  # a market scan asks about no company


def test_the_summary_states_the_reference_coverage_without_figures() -> None:
    s = {"reference_figures": 2, "reference_stated": 0}
    line = summary_line({"claims": [], "summary": s})
    assert line == "no figures to check; states 0 of the reference's 2 figures"
