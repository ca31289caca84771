"""Data-quality checks (`fundamentals.quality`): each check on small hand-built frames, hit and
near miss, then the whole run over the sample bundle, its findings verified against the CSV
files read independently with the `csv` module."""

from __future__ import annotations

import csv
from datetime import date, timedelta
from functools import cache

import pandas as pd
import pytest

from fintrade_tui.fundamentals import sec_pit, sources
from fintrade_tui.fundamentals.quality import CHECKS, FINDING_COLUMNS, run_checks
from tests.conftest import BUNDLE, needs_bundle

ENDS = [date(2020 + i // 4, 3 * (i % 4) + 1, 1) - timedelta(days=1) for i in range(1, 13)]
# 2020-03-31, 2020-06-30, 2020-09-30, 2020-12-31, 2021-03-31, ... 2022-12-31
NO_ANNUAL = pd.DataFrame(columns=["ticker", "period_end", "item", "value", "source"])
NO_POLYGON = pd.DataFrame(
    columns=["ticker", "period", "filing_date", "revenue", "net_income", "shares_outstanding"]
)


def sec_frame(ticker: str = "TT", n: int = 8, **items: list) -> pd.DataFrame:
    """n calendar quarters from 2020-03-31, filed 35 days later; values move unless given."""
    ends = ENDS[:n]
    base = {
        "net_income": [100e6 + 7e6 * i for i in range(n)],
        "operating_cf": [150e6 + 5e6 * i for i in range(n)],
        "total_assets": [5e9 + 1e8 * i for i in range(n)],
        "equity": [2e9 + 3e7 * i for i in range(n)],
    }
    base |= items
    return pd.DataFrame(
        {
            "ticker": ticker,
            "period_end": ends,
            "available_date": [e + timedelta(days=35) for e in ends],
            **base,
            "capex": None,
            "free_cash_flow": None,
            "file": f"/bundle/fundamentals-sec/{ticker}.csv",
            "line": range(2, n + 2),
        }
    )


def polygon_frame(rows: list[tuple[str, date, float | None, float | None]]) -> pd.DataFrame:
    """(period, filing_date, net_income, revenue) rows of ticker TT."""
    return pd.DataFrame(
        [
            {"ticker": "TT", "period": p, "filing_date": f, "revenue": r, "net_income": ni}
            | {"shares_outstanding": 1e9, "market_cap": None}
            for p, f, ni, r in rows
        ]
    )


def hits(findings: pd.DataFrame, check: str) -> pd.DataFrame:
    return findings[findings["check"] == check]


# ------------------------------------------------------------------ stale_carry_forward


def test_stale_run_of_five_flags_all_but_the_first() -> None:
    eq = [2.0e9, 2.1e9, 2.2e9, 2.2e9, 2.2e9, 2.2e9, 2.2e9, 2.5e9]
    f = hits(run_checks(sec_frame(equity=eq), NO_POLYGON, NO_ANNUAL), "stale_carry_forward")
    assert f["line"].tolist() == [5, 6, 7, 8]  # rows 4..7 of the frame; row 3 is genuine
    assert set(f["item"]) == {"equity"} and set(f["value"]) == {2.2e9}
    assert set(f["source"]) == {"sec_pit"}
    assert f["period_end"].tolist() == ENDS[3:7]
    assert (
        "2,200,000,000 unchanged for 5 quarters (2020-09-30 .. 2021-09-30)" in f["reason"].iloc[0]
    )
    assert "net income moved" in f["reason"].iloc[0]


def test_three_quarter_repeat_is_not_stale() -> None:
    eq = [2.0e9, 2.2e9, 2.2e9, 2.2e9, 2.5e9, 2.6e9, 2.7e9, 2.8e9]
    ta = [5e9, 6e9, 6e9, 6e9, 7e9, 8e9, 9e9, 9.5e9]
    f = run_checks(sec_frame(equity=eq, total_assets=ta), NO_POLYGON, NO_ANNUAL)
    assert hits(f, "stale_carry_forward").empty


def test_repeat_while_nothing_else_moves_is_not_stale() -> None:
    f = run_checks(
        sec_frame(n=6, equity=[2e9] * 6, total_assets=[5e9] * 6, net_income=[1e8] * 6),
        NO_POLYGON,
        NO_ANNUAL,
    )
    assert hits(f, "stale_carry_forward").empty


def test_repeat_while_only_the_other_stock_moves_is_stale() -> None:
    f = run_checks(sec_frame(n=5, equity=[2e9] * 5, net_income=[1e8] * 5), NO_POLYGON, NO_ANNUAL)
    s = hits(f, "stale_carry_forward")
    assert s["line"].tolist() == [3, 4, 5, 6] and set(s["item"]) == {"equity"}
    assert "while total assets moved" in s["reason"].iloc[0]


def test_empty_value_breaks_a_run_and_tickers_do_not_chain() -> None:
    eq = [2e9, 2e9, None, 2e9, 2e9, 2e9, 3e9, 3e9]
    two = pd.concat(
        [sec_frame("AA", n=2, equity=[2e9] * 2), sec_frame("BB", n=3, equity=[2e9] * 3)]
    )
    for frame in (sec_frame(equity=eq), two):
        assert hits(run_checks(frame, NO_POLYGON, NO_ANNUAL), "stale_carry_forward").empty


# ------------------------------------------------------------------ scale_error


@pytest.mark.parametrize(
    ("factor", "flagged"), [(1000.0, True), (1 / 1e6, True), (1100.0, True), (2.0, False)]
)
def test_scale_against_both_neighbours(factor: float, flagged: bool) -> None:
    ta = [5e9 + 1e8 * i for i in range(8)]
    ta[4] *= factor
    f = hits(run_checks(sec_frame(total_assets=ta), NO_POLYGON, NO_ANNUAL), "scale_error")
    if flagged:
        assert f["line"].tolist() == [6] and f["item"].tolist() == ["total_assets"]
        assert f["value"].iloc[0] == ta[4] and "neighbouring quarters" in f["reason"].iloc[0]
    else:
        assert f.empty


def test_scale_against_one_neighbour_only_is_not_flagged() -> None:
    eq = [2e9 + 3e7 * i for i in range(8)]
    eq[-1] *= 1000  # the last quarter has no next neighbour
    eq[0] /= 1000  # nor the first a previous one
    f = hits(run_checks(sec_frame(equity=eq), NO_POLYGON, NO_ANNUAL), "scale_error")
    assert f.empty


def _poly_quarters(ni: list[float | None], revenue: float | None = 1e9) -> pd.DataFrame:
    """Polygon Q rows filed on the sec_frame's available dates (2020 Q1 .. )."""
    rows = []
    for i, v in enumerate(ni):
        end = ENDS[i]
        rows.append((f"Q{i % 4 + 1} {end.year}", end + timedelta(days=35), v, revenue))
    return polygon_frame(rows)


@pytest.mark.parametrize(("factor", "flagged"), [(1e3, True), (1e-6, True), (2.0, False)])
def test_scale_against_polygon(factor: float, flagged: bool) -> None:
    sec = sec_frame(n=4)
    ni = sec["net_income"].tolist()
    poly = _poly_quarters([ni[0], ni[1] * factor, ni[2], ni[3]])
    every = hits(run_checks(sec, poly, NO_ANNUAL), "scale_error")
    f = every[every["source"] == "sec_pit"]
    if flagged:  # polygon's odd quarter is also off against its own neighbours
        assert every.loc[every["source"] == "polygon", "line"].tolist() == [None]
        assert f["line"].tolist() == [3] and f["other_source"].tolist() == ["polygon"]
        assert f["value"].iloc[0] == ni[1] and f["other_value"].iloc[0] == ni[1] * factor
    else:
        assert f.empty


def test_polygon_revenue_scale_against_its_neighbours() -> None:
    poly = _poly_quarters([1e8] * 5)
    poly.loc[2, "revenue"] = 1e12
    f = hits(run_checks(sec_frame(n=2), poly, NO_ANNUAL), "scale_error")
    assert len(f) == 1 and f["source"].iloc[0] == "polygon" and f["item"].iloc[0] == "revenue"
    assert f["file"].iloc[0] is None and f["line"].iloc[0] is None
    assert f["available_date"].iloc[0] == ENDS[2] + timedelta(days=35)


# ------------------------------------------------------------------ sign_flip


@pytest.mark.parametrize(
    ("sec_ni", "poly_ni", "flagged"),
    [(100e6, -95e6, True), (-40e6, 40e6, True), (100e6, -50e6, False), (100e6, 95e6, False)],
)
def test_sign_flip(sec_ni: float, poly_ni: float, flagged: bool) -> None:
    sec = sec_frame(n=3, net_income=[80e6, sec_ni, 90e6])
    f = hits(run_checks(sec, _poly_quarters([80e6, poly_ni, 90e6]), NO_ANNUAL), "sign_flip")
    assert f["line"].tolist() == ([3] if flagged else [])
    if flagged:
        assert f["other_value"].iloc[0] == poly_ni and "other sign" in f["reason"].iloc[0]


def test_zero_is_no_sign_flip() -> None:
    sec = sec_frame(n=2, net_income=[0.0, 5e6])
    f = run_checks(sec, _poly_quarters([-0.0, -5e6 * 1.01]), NO_ANNUAL)
    assert hits(f, "sign_flip")["line"].tolist() == [3]  # the second quarter only


def test_polygon_row_matches_the_filings_own_quarter_not_its_comparative() -> None:
    """Two sec_pit rows filed the same day: the year-old comparative and the filing's own
    quarter. Polygon's value is the own quarter's, so it is compared with that one."""
    sec = sec_frame(n=5, net_income=[-100e6, 50e6, 60e6, 70e6, 100e6])
    sec.loc[0, "available_date"] = sec.loc[4, "available_date"]  # comparative of 2021-03-31
    poly = polygon_frame([("Q1 2021", sec.loc[4, "available_date"], 100e6, 1e9)])
    f = run_checks(sec, poly, NO_ANNUAL)
    assert hits(f, "sign_flip").empty
    poly.loc[0, "net_income"] = -100e6
    assert hits(run_checks(sec, poly, NO_ANNUAL), "sign_flip")["line"].tolist() == [6]


# ------------------------------------------------------------------ flow_sum


def _annual(value: float, end: date = ENDS[7], item: str = "net_income") -> pd.DataFrame:
    return pd.DataFrame(
        [{"ticker": "TT", "period_end": end, "item": item, "value": value, "source": "filings"}]
    )


@pytest.mark.parametrize(("off", "flagged"), [(0.05, True), (-0.05, True), (0.01, False)])
def test_flow_sum_against_filings(off: float, flagged: bool) -> None:
    sec = sec_frame()
    year = sum(sec["operating_cf"].iloc[4:8])  # 2021's four quarters
    f = hits(
        run_checks(sec, NO_POLYGON, _annual(year * (1 + off), item="operating_cf")), "flow_sum"
    )
    if flagged:
        assert f["line"].tolist() == [9] and f["period_end"].tolist() == [ENDS[7]]
        assert f["item"].iloc[0] == "operating_cf" and f["other_source"].iloc[0] == "filings"
        assert f["value"].iloc[0] == pytest.approx(year)
        assert f["other_value"].iloc[0] == pytest.approx(year * (1 + off))
        assert "2021-03-31 .. 2021-12-31" in f["reason"].iloc[0]
        assert "(filings)" in f["reason"].iloc[0]
    else:
        assert f.empty


def test_flow_sum_needs_four_quarters_with_values() -> None:
    ni = [100e6 + 7e6 * i for i in range(8)]
    ni[5] = None
    sec = sec_frame(net_income=ni)
    assert hits(run_checks(sec, NO_POLYGON, _annual(1.0)), "flow_sum").empty
    gap = sec_frame().drop(index=5)  # a missing quarter: the three before Q4 span 15 months
    assert hits(run_checks(gap, NO_POLYGON, _annual(1.0)), "flow_sum").empty
    assert len(hits(run_checks(sec_frame(), NO_POLYGON, _annual(1.0)), "flow_sum")) == 1


def test_flow_sum_uses_polygon_fy_only_where_filings_lack_the_year() -> None:
    sec = sec_frame()
    y2020, y2021 = (sum(sec["net_income"].iloc[k : k + 4]) for k in (0, 4))
    fy = [("FY 2020", ENDS[3] + timedelta(days=35), y2020 * 1.1, 4e9)]
    fy.append(("FY 2021", ENDS[7] + timedelta(days=35), y2021 * 1.1, 4e9))
    f = hits(run_checks(sec, polygon_frame(fy), _annual(y2021)), "flow_sum")
    assert f["period_end"].tolist() == [ENDS[3]] and f["other_source"].tolist() == ["polygon"]
    assert f["other_value"].iloc[0] == pytest.approx(y2020 * 1.1)
    both = hits(run_checks(sec, polygon_frame(fy), NO_ANNUAL), "flow_sum")
    assert both["period_end"].tolist() == [ENDS[3], ENDS[7]]


# ------------------------------------------------------------------ available_date


def test_available_date_before_and_late_but_not_normal_lag() -> None:
    sec = sec_frame(n=4)
    sec.loc[0, "available_date"] = ENDS[0] - timedelta(days=3)
    sec.loc[1, "available_date"] = ENDS[1] + timedelta(days=400)
    sec.loc[2, "available_date"] = ENDS[2] + timedelta(days=150)  # late but not too late
    f = hits(run_checks(sec, NO_POLYGON, NO_ANNUAL), "available_date")
    assert f["line"].tolist() == [2, 3] and f["value"].tolist() == [-3.0, 400.0]
    assert "before the period ended" in f["reason"].iloc[0]
    assert "400 days after the period end" in f["reason"].iloc[1]
    assert "comparative" in f["reason"].iloc[1]


def test_clean_or_empty_inputs_give_an_empty_frame() -> None:
    for sec in (sec_frame(), pd.DataFrame(columns=list(sec_pit.COLUMNS))):
        f = run_checks(sec, NO_POLYGON, NO_ANNUAL)
        assert f.empty and tuple(f.columns) == FINDING_COLUMNS
    assert run_checks(sec_frame(), pd.DataFrame(), pd.DataFrame()).empty


# ------------------------------------------------------------------ the sample bundle


@pytest.fixture(scope="module")
def bundle_run() -> pd.DataFrame:
    """The checks over the bundle's SEC and polygon rows (their speed: benchmarks/bench_store)."""
    if not BUNDLE.is_dir():
        pytest.skip("sample bundle not at ../shared/data")
    sec, _ = sec_pit.read(BUNDLE)
    return run_checks(sec, sources.polygon(BUNDLE), NO_ANNUAL)


@cache
def csv_rows(path: str) -> list[dict[str, str]]:
    """The file's rows, each with its 1-based line number (the header is line 1)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return [row | {"_line": str(n)} for n, row in enumerate(csv.DictReader(fh), start=2)]


def same(a: str, b: str) -> bool:
    """Two CSV cells hold the same number (both non-empty)."""
    return bool(a.strip() and b.strip()) and float(a) == float(b)


@needs_bundle
def test_bundle_run_names_only_known_checks_and_columns(bundle_run) -> None:
    findings = bundle_run
    assert tuple(findings.columns) == FINDING_COLUMNS
    assert set(findings["check"]) <= set(CHECKS) and len(findings)
    assert findings["reason"].str.len().gt(20).all()


@needs_bundle
def test_bundle_stale_values_really_repeat(bundle_run) -> None:
    findings = bundle_run
    stale = hits(findings, "stale_carry_forward")
    assert stale["ticker"].nunique() >= 1
    for (ticker, item), f in stale.groupby(["ticker", "item"]):
        rows = sorted(csv_rows(f["file"].iloc[0]), key=lambda r: r["period_end"])
        at = {int(r["_line"]): k for k, r in enumerate(rows)}
        flagged = {at[line] for line in f["line"]}
        for k in flagged:
            assert same(rows[k][item], rows[k - 1][item]), (ticker, item, rows[k]["period_end"])
            start = k - 1
            while start > 0 and same(rows[start - 1][item], rows[k][item]):
                start -= 1
            end = k
            while end + 1 < len(rows) and same(rows[end + 1][item], rows[k][item]):
                end += 1
            run = rows[start : end + 1]
            assert len(run) >= 4, (ticker, item, rows[k]["period_end"])
            assert start not in flagged and set(range(start + 1, end + 1)) <= flagged
            assert len({float(r["net_income"]) for r in run if r["net_income"]}) >= 2


@needs_bundle
def test_bundle_findings_point_at_their_csv_line(bundle_run) -> None:
    findings = bundle_run
    sec_rows = findings[findings["source"] == "sec_pit"]
    assert sec_rows["file"].notna().all() and len(sec_rows)
    for path, line, ticker, end in sec_rows[["file", "line", "ticker", "period_end"]].itertuples(
        index=False
    ):
        row = csv_rows(path)[line - 2]
        assert row["_line"] == str(line)
        assert row["period_end"].strip() == str(end) and row["ticker"].upper() == ticker
    assert findings.loc[findings["source"] != "sec_pit", "file"].isna().all()
