"""FinAR tasks from the store's 10-K facts, checked against Apple's published FY2024 10-K."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.questions.finar import finar_tasks
from tests.conftest import ROOT, needs_bundle

ACCESSION = "0000320193-24-000123"
M = 1_000_000
# Apple FY2024 10-K, hand-entered in $ millions (FY2024, FY2023); EPS in USD/share
APPLE = {
    "revenue": (391_035, 383_285),
    "net_income": (93_736, 96_995),
    "total_assets": (364_980, 352_583),
    "total_liabilities": (308_030, 290_437),
    "shareholders_equity": (56_950, 62_146),
    "operating_cash_flow": (118_254, 110_543),
    "current_assets": (152_987, 143_566),
    "current_liabilities": (176_392, 145_308),
}


def _by(tasks: list, kind: str) -> dict:
    return {q.extra["item"]: q for q in tasks if q.category == kind}


@pytest.fixture
def aapl(con: duckdb.DuckDBPyConnection) -> list:
    return finar_tasks(con, "AAPL", 2024)


@needs_bundle
def test_fact_tasks_match_the_published_10k(aapl: list) -> None:
    facts = _by(aapl, "fact")
    for key, (fy24, fy23) in APPLE.items():
        truth = facts[key].extra["ground_truth"]
        assert truth == {"FY2024": pytest.approx(fy24 * M), "FY2023": pytest.approx(fy23 * M)}
        assert facts[key].extra["unit"] == "USD"
    eps = facts["eps_diluted"]
    assert eps.extra["ground_truth"] == {"FY2024": 6.08, "FY2023": 6.13}
    assert eps.extra["unit"] == "USD/share"
    assert eps.reference_answer == "FY2024: 6.08 USD/share; FY2023: 6.13 USD/share"
    assert facts["revenue"].reference_answer.startswith("FY2024: 391,035,000,000 USD")
    assert facts["revenue"].text == (
        "From Apple Inc.'s fiscal 2024 10-K, extract Revenue for fiscal 2024 and fiscal 2023."
    )
    assert "cash" in facts


@needs_bundle
def test_indicator_tasks(aapl: list) -> None:
    ind = _by(aapl, "indicator")
    expected = {
        "roe": 1.6459,  # 93,736 / 56,950
        "roa": 0.2568,  # 93,736 / 364,980
        "current_ratio": 0.8673,  # 152,987 / 176,392
        "debt_to_assets": round(308_030 / 364_980, 4),
        "net_profit_margin": round(93_736 / 391_035, 4),
        "asset_turnover": round(391_035 / 364_980, 4),
        "ocf_ratio": round(118_254 / 176_392, 4),
    }
    assert {k: q.extra["ground_truth"] for k, q in ind.items()} == expected
    assert ind["roe"].reference_answer == "1.6459"
    assert ind["roe"].extra["value_unrounded"] == pytest.approx(93_736 / 56_950)


@needs_bundle
def test_reasoning_tasks(aapl: list) -> None:
    rea = _by(aapl, "reasoning")
    assert {k: q.extra["ground_truth"] for k, q in rea.items()} == {
        "roe_increases": True,  # 1.5608 -> 1.6459
        "current_ratio_increases": False,  # 0.9880 -> 0.8673
        "revenue_growth_positive": True,
        "net_profit_margin_increases": False,  # 0.2531 -> 0.2397
        "debt_to_assets_decreases": False,  # 0.8237 -> 0.8440
    }
    roe = rea["roe_increases"]
    assert roe.reference_answer == "True"
    assert roe.extra["values"]["FY2023"] == pytest.approx(96_995 / 62_146)
    assert "ROE increases from FY2023 to FY2024" in roe.text


@needs_bundle
def test_every_task_cites_the_10k_and_its_dates(aapl: list) -> None:
    assert [q.category for q in aapl].count("fact") == 10
    assert len({q.id for q in aapl}) == len(aapl)
    assert "FINAR-AAPL-FY2024-indicator-1" in {q.id for q in aapl}
    for q in aapl:
        assert q.source == "finar_generated" and q.tickers == ["AAPL"]
        assert q.as_of == date(2024, 11, 1)
        assert (q.window_start, q.window_end) == (date(2023, 10, 1), date(2024, 9, 28))
        assert q.extra["task_type"] == q.category and q.extra["fiscal_year"] == 2024
        assert q.extra["facts"] and all(f["accession"] == ACCESSION for f in q.extra["facts"])


@needs_bundle
@pytest.mark.parametrize(("ticker", "year"), [("AAPL", 2019), ("ZZZZ", 2024)])
def test_missing_10k_is_a_one_line_user_error(
    con: duckdb.DuckDBPyConnection, ticker: str, year: int
) -> None:
    with pytest.raises(UserError) as err:
        finar_tasks(con, ticker, year)
    msg = str(err.value)
    assert "\n" not in msg and ticker in msg and str(year) in msg
    assert f"fintrade-tui facts {ticker} --concept" in msg


def test_concept_fallbacks_and_unreported_items() -> None:
    """Revenue falls back to the next concept; no `Liabilities` -> no debt-to-assets tasks."""
    c = duckdb.connect()
    c.execute((ROOT / "fintrade_tui/store/schema.sql").read_text())
    c.execute(
        "INSERT INTO filings VALUES ('A-1', 'XYZ', 1, '10-K', DATE '2024-02-01',"
        " DATE '2023-12-31', 2023, 'FY', 'x.htm')"
    )
    y1, y0 = (date(2023, 1, 1), date(2023, 12, 31)), (date(2022, 1, 1), date(2022, 12, 31))
    rows = [
        ("RevenueFromContractWithCustomerExcludingAssessedTax", 200.0, *y1, None),
        ("RevenueFromContractWithCustomerExcludingAssessedTax", 100.0, *y0, None),
        ("NetIncomeLoss", 20.0, *y1, None),
        ("NetIncomeLoss", 10.0, date(2023, 10, 1), y1[1], None),  # a quarter: ignored
        ("Assets", 400.0, None, None, y1[1]),
    ]
    for concept, value, start, end, instant in rows:
        c.execute(
            "INSERT INTO facts VALUES ('A-1', 'XYZ', ?, 'us-gaap', ?, 'iso4217:USD', ?, ?, ?,"
            " false, NULL, '0')",
            [concept, value, start, end, instant],
        )
    tasks = finar_tasks(c, "xyz", 2023)
    assert [q.extra["item"] for q in tasks if q.category == "fact"] == ["revenue"]
    assert _by(tasks, "indicator")["roa"].extra["ground_truth"] == 0.05
    assert set(_by(tasks, "indicator")) == {"roa", "net_profit_margin", "asset_turnover"}
    assert set(_by(tasks, "reasoning")) == {"revenue_growth_positive"}
    assert tasks[0].extra["facts"][0]["concept"].startswith("RevenueFromContract")
    assert tasks[0].reference_answer == "FY2023: 200 USD; FY2022: 100 USD"
    assert tasks[0].text.startswith("From XYZ's fiscal 2023 10-K")  # no companies row
