"""Vendor fundamentals room: the paper's precomputed `F_` values and the polygon fundamentals.

Neither may be used from its period end (that leaks the future): each row becomes available on
the filing date of the matching filing when the store knows it, else `estimated_lag_days` after
the period end, flagged `estimated`.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import cast

import pandas as pd

from fintrade_tui.errors import UserError
from fintrade_tui.fundamentals.concepts import PRECOMPUTED_COLUMNS
from fintrade_tui.fundamentals.derive import PriceLookup, split_factors

MATCH_DAYS = 7  # a vendor value dated the first trading day after the fiscal period end


def _match_filing(filings: pd.DataFrame, ticker: str, when: date) -> pd.Series | None:
    f = filings[(filings["ticker"] == ticker) & (filings["period_end"] <= when)]
    f = f[[(when - pe).days <= MATCH_DAYS for pe in f["period_end"]]]
    return f.sort_values("filed").iloc[0] if len(f) else None


def precomputed(bundle: Path, filings: pd.DataFrame, lag_days: int) -> pd.DataFrame:
    """One row per (ticker, period, ratio) where a precomputed `F_` value starts."""
    rows = []
    folder = bundle / "fintradebench" / "precomputed"
    for path in sorted(folder.glob("*-daily_with_fundamentals.csv")):
        ticker = path.name.split("-")[0].upper()
        cols = ["Date", *PRECOMPUTED_COLUMNS]
        try:
            df = pd.read_csv(path, usecols=cols.__contains__)
        except Exception as exc:
            raise UserError(
                str(path), f"cannot be read ({type(exc).__name__})", "restore it"
            ) from None
        if "Date" not in df.columns:
            raise UserError(str(path), "missing column Date", "restore the file")
        df["Date"] = pd.to_datetime(df["Date"], format="mixed", errors="coerce").dt.date
        for col, ratio in PRECOMPUTED_COLUMNS.items():
            if col not in df.columns:
                continue
            s = df[["Date", col]].dropna()
            starts = s[s[col].ne(s[col].shift())]
            for when, value in zip(starts["Date"], starts[col], strict=True):
                f = _match_filing(filings, ticker, when)
                rows.append(
                    {
                        "ticker": ticker,
                        "fiscal_year": int(f["fiscal_year"]) if f is not None else None,
                        "fiscal_period": ("Q4" if f["form"] == "10-K" else f["fiscal_period"])
                        if f is not None
                        else None,
                        "period_end": f["period_end"] if f is not None else when,
                        "ratio": ratio,
                        "value": float(value),
                        "source": "fintradebench_precomputed",
                        "available_from": f["filed"]
                        if f is not None
                        else when + timedelta(days=lag_days),
                        "estimated": f is None,
                        "accession": f["accession"] if f is not None else None,
                        "concepts": col,
                        "price_date": None,
                        "note": f"{path.name}: value starts {when}"
                        + ("" if f is not None else f"; available after a {lag_days}-day lag"),
                    }
                )
    return pd.DataFrame(rows)


def polygon(bundle: Path) -> pd.DataFrame:
    """The raw polygon rows (revenue, net income, shares) per filing."""
    rows = []
    for path in sorted((bundle / "fundamentals-polygon").glob("*.json")):
        try:
            items = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise UserError(
                f"{path} line {exc.lineno}", "is not valid JSON", "restore it"
            ) from None
        for k, it in enumerate(items):
            try:
                filed = date.fromisoformat(str(it["filing_date"]))
            except (KeyError, ValueError):
                raise UserError(
                    f"{path} item {k}", "missing or bad filing_date", "use YYYY-MM-DD"
                ) from None
            rows.append(
                {
                    "ticker": str(it.get("ticker") or path.stem).upper(),
                    "period": it.get("period"),
                    "filing_date": filed,
                    "revenue": it.get("revenue"),
                    "net_income": it.get("net_income"),
                    "shares_outstanding": it.get("shares_outstanding"),
                    "market_cap": it.get("market_cap"),
                }
            )
    return pd.DataFrame(rows)


def fourth_quarter(
    quarters: dict[tuple[int, int], float], year: int, annual: float
) -> float | None:
    """A flow's fourth quarter from polygon's "FY" value: the year minus its first three
    quarters ((year, quarter) -> value), or None when one of them is missing."""
    first = [v for q in (1, 2, 3) if (v := quarters.get((year, q))) is not None]
    return None if len(first) < 3 else annual - sum(first)


def polygon_ratios(raw: pd.DataFrame, price_at: PriceLookup) -> pd.DataFrame:
    """Earnings/Price from polygon: trailing-12-month net income / (close x shares) at filing.

    Quarterly net income comes from `Qn YYYY` rows; an `FY YYYY` row is the annual value, so
    TTM at an FY filing is that value and at a quarter the sum of the last four quarters, where
    the missing fourth quarter is FY minus Q1-Q3 of the same year.
    """
    rows = []
    for key, g in raw.sort_values("filing_date").groupby("ticker"):
        ticker = cast(str, key)
        quarters: dict[tuple[int, int], float] = {}
        # share counts before a split are brought to the price series' (split-adjusted) basis
        g = g.assign(
            split=split_factors([None if pd.isna(s) else s for s in g["shares_outstanding"]])
        )
        for _, it in g.iterrows():
            try:
                kind, year_text = str(it["period"]).split()
                year = int(year_text)
            except ValueError:
                continue
            ni = it["net_income"]
            if ni is None or pd.isna(ni):
                continue
            if kind == "FY":
                q4 = fourth_quarter(quarters, year, ni)
                if q4 is not None:
                    quarters[(year, 4)] = q4
                ttm, how = ni, "FY net income"
            elif kind.startswith("Q") and kind[1:].isdigit():
                q = int(kind[1:])
                quarters[(year, q)] = ni
                keys = [(year - (1 if q - k <= 0 else 0), (q - k - 1) % 4 + 1) for k in range(4)]
                got = [x for k in keys if (x := quarters.get(k)) is not None]
                if len(got) < len(keys):
                    continue
                ttm, how = sum(got), "sum of last 4 quarters"
            else:
                continue
            px = price_at(ticker, it["filing_date"])
            sh = it["shares_outstanding"] * it["split"]
            if not px or not sh or pd.isna(sh):
                continue
            rows.append(
                {
                    "ticker": ticker,
                    "fiscal_year": year,
                    "fiscal_period": "Q4" if kind == "FY" else kind,
                    "period_end": None,
                    "ratio": "earnings_price",
                    "value": ttm / (px[1] * sh),
                    "source": "polygon",
                    "available_from": it["filing_date"],
                    "estimated": False,
                    "accession": None,
                    "concepts": "net_income, shares_outstanding",
                    "price_date": px[0],
                    "note": f"{it['period']}: TTM {how}; close {px[1]:.4g} x shares {sh:.6g}",
                }
            )
    return pd.DataFrame(rows)
