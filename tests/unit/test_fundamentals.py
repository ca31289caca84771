"""Facts and filing-derived fundamentals against Apple's published fiscal 2024 figures."""

from __future__ import annotations

import pytest

from fintrade_tui.store.queries import facts_for, fundamentals_for
from tests.conftest import needs_bundle

pytestmark = needs_bundle
ACC_10K = "0000320193-24-000123"


@pytest.mark.parametrize(
    ("concept", "millions"),
    [
        ("Assets", 364_980),
        ("NetIncomeLoss", 93_736),
        ("StockholdersEquity", 56_950),
        ("RevenueFromContractWithCustomerExcludingAssessedTax", 391_035),
        ("NetCashProvidedByUsedInOperatingActivities", 118_254),
    ],
)
def test_aapl_fy2024_10k_facts(con, concept: str, millions: int) -> None:
    rows = facts_for(con, "AAPL", concept)
    fy = [
        r
        for r in rows
        if r["accession"] == ACC_10K
        and str(r["end"] or r["instant"]) == "2024-09-28"
        and (r["start"] is None or str(r["start"]) == "2023-10-01")
    ]
    assert fy, f"no fiscal-2024 {concept} fact in the 10-K"
    assert {r["value"] for r in fy} == {millions * 1e6}
    assert fy[0]["form"] == "10-K" and str(fy[0]["filed"]) == "2024-11-01"


def test_q4_net_income_is_annual_minus_nine_months(con) -> None:
    row = con.execute(
        """SELECT value, method, concepts FROM quarter_inputs
        WHERE ticker = 'AAPL' AND period_end = DATE '2024-09-28' AND item = 'net_income'"""
    ).fetchone()
    assert row[0] == pytest.approx(14_736e6)
    assert row[1] == "annual - 9-month YTD"
    assert "0000320193-24-000081" in row[2]  # the third-quarter 10-Q


@pytest.mark.parametrize(
    ("ratio", "expected"),
    [
        ("roa", 0.04037),
        ("debt_equity", 1.8723),
        ("debt_assets", 0.2922),
        ("sales_assets", 0.2601),
        ("cashflow_assets", 0.0735),
    ],
)
def test_aapl_quarter_ended_2024_09_28(con, ratio: str, expected: float) -> None:
    rows = [
        r
        for r in fundamentals_for(con, "AAPL", "filing")
        if r["ratio"] == ratio and str(r["period_end"]) == "2024-09-28"
    ]
    assert len(rows) == 1
    r = rows[0]
    assert r["value"] == pytest.approx(expected, abs=5e-5)
    assert str(r["available_from"]) == "2024-11-01" and r["accession"] == ACC_10K
    assert r["fiscal_period"] == "Q4" and r["fiscal_year"] == 2024


def test_ten_q_uses_three_month_not_year_to_date(con) -> None:
    # Apple's Q3 FY2024 (quarter ended 2024-06-29): net income 21,448M; nine months 79,000M
    row = con.execute(
        """SELECT value, method FROM quarter_inputs WHERE ticker = 'AAPL'
        AND period_end = DATE '2024-06-29' AND item = 'net_income'"""
    ).fetchone()
    assert row == (pytest.approx(21_448e6), "3-month")


def test_nvda_split_brings_old_share_counts_to_todays_basis(con) -> None:
    # NVIDIA split 10-for-1 in June 2024: the May 2024 cover page shows ~2.46B shares
    shares = con.execute(
        """SELECT q.value FROM quarter_inputs q JOIN filings f USING (accession)
        WHERE q.ticker = 'NVDA' AND q.item = 'shares_outstanding' AND f.filed = DATE '2024-05-29'"""
    ).fetchone()[0]
    assert 24e9 < shares < 25e9


def test_vendor_rows_never_available_at_period_end(con) -> None:
    leaks = con.execute(
        """SELECT count(*) FROM fundamentals
        WHERE source <> 'filing' AND period_end IS NOT NULL AND available_from <= period_end"""
    ).fetchone()[0]
    assert leaks == 0
    est = con.execute(
        """SELECT min(available_from - period_end), bool_and(estimated) FROM fundamentals
        WHERE source = 'fintradebench_precomputed' AND accession IS NULL"""
    ).fetchone()
    assert est == (90, True)
