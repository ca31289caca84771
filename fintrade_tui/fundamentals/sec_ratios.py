"""SEC point-in-time ratios room: Table 6 ratios from the `sec_pit` rows, available from each
row's `available_date` (its filing's date), never from the period end.

Per quarter of `sec_pit_rows`, with polygon's revenue and share count from the filing of the
same day and the close of that day:
- roa = net income / total assets; roe = net income / equity; cashflow_assets = operating cash
  flow / total assets (the quarter's own flows, period-end stocks, as the filings' ratios);
- sales_assets = polygon's quarter revenue (a "FY" row's fourth quarter is the year minus its
  first three) / total assets;
- book_price = equity / (close x shares); earnings_price = net income of the last four quarters
  (four consecutive quarters ending here) / (close x shares);
- debt_assets and debt_equity: no source in the bundle has these companies' debt, so the rows
  say so and carry no value.
Quality findings (`quality.run_checks`) travel with the inputs they hit: a stale carried-forward
equity or asset value is not used at all (the ratio row keeps the reason, no value); a value
whose check says it is wrong (scale, sign, quarters not adding up) is kept but flagged, so a
clean source wins over it; a late `available_date` is flagged and kept.
Fiscal year and quarter come from the company's fiscal calendar (`questions.fiscal`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any, cast

import pandas as pd

from fintrade_tui.fundamentals.derive import split_factors
from fintrade_tui.fundamentals.sources import fourth_quarter

SOURCE = "sec_pit"
BLOCKING = {"stale_carry_forward"}  # the value is not this period's: never used
DEMOTING = {"scale_error", "sign_flip", "flow_sum"}  # probably wrong: a clean source wins
NO_DEBT = "no source in the bundle has this company's total debt"
_INPUTS = {
    "roa": ("net_income", "total_assets"),
    "roe": ("net_income", "equity"),
    "cashflow_assets": ("operating_cf", "total_assets"),
    "sales_assets": ("revenue", "total_assets"),
    "book_price": ("equity", "market_cap"),
    "earnings_price": ("ttm_net_income", "market_cap"),
}
PriceLookup = Callable[[str, date], tuple[date, float] | None]
Labeller = Callable[[str, date], tuple[int, int] | None]


def _polygon_by_filing(polygon: pd.DataFrame) -> dict[tuple[str, date], dict[str, Any]]:
    """(ticker, filing date) -> quarter revenue and split-adjusted shares of that filing."""
    out: dict[tuple[str, date], dict[str, Any]] = {}
    if polygon.empty:
        return out
    for key, g in polygon.sort_values("filing_date").groupby("ticker"):
        ticker = cast(str, key)
        shares = [None if pd.isna(s) else s for s in g["shares_outstanding"]]
        factors = split_factors(shares)
        quarters: dict[tuple[int, int], float] = {}
        for (_, it), factor in zip(g.iterrows(), factors, strict=True):
            kind, _, year = str(it["period"] or "").partition(" ")
            revenue = None if pd.isna(it["revenue"]) else float(it["revenue"])
            if year.isdigit() and revenue is not None:
                y = int(year)
                if kind.startswith("Q") and kind[1:].isdigit():
                    quarters[(y, int(kind[1:]))] = revenue
                elif kind == "FY":
                    revenue = fourth_quarter(quarters, y, revenue)
            sh = it["shares_outstanding"]
            out[(ticker, it["filing_date"])] = {
                "revenue": revenue,
                "shares": None if pd.isna(sh) else float(sh) * factor,
                "period": it["period"],
            }
    return out


def _ttm(rows: list[dict[str, Any]], i: int) -> float | None:
    """Net income of the four consecutive quarters ending at rows[i] (each 80-100 days apart)."""
    if i < 3:
        return None
    window = rows[i - 3 : i + 1]
    for a, b in zip(window, window[1:], strict=False):
        if not 80 <= (b["period_end"] - a["period_end"]).days <= 100:
            return None
    values = [r["net_income"] for r in window]
    return None if any(v is None for v in values) else float(sum(values))


def _flags(findings: pd.DataFrame) -> dict[tuple[str, date, str], list[tuple[str, str]]]:
    out: dict[tuple[str, date, str], list[tuple[str, str]]] = {}
    if findings is None or findings.empty:
        return out
    hit = findings[findings["source"] == SOURCE]
    for t, end, item, check, reason in hit[
        ["ticker", "period_end", "item", "check", "reason"]
    ].itertuples(index=False):
        out.setdefault((t, end, item), []).append((check, reason))
    return out


def sec_ratios(
    sec: pd.DataFrame,
    polygon: pd.DataFrame,
    price_at: PriceLookup,
    label_of: Labeller,
    findings: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """`fundamentals` rows of source sec_pit for every quarter of every sec_pit ticker."""
    poly = _polygon_by_filing(polygon)
    flags = _flags(findings if findings is not None else pd.DataFrame())
    out: list[dict[str, Any]] = []
    clean = sec.drop_duplicates(["ticker", "period_end"], keep="first")
    for key, g in clean.sort_values("period_end").groupby("ticker", sort=True):
        ticker = cast(str, key)
        rows: list[dict[str, Any]] = [
            {str(k): (None if pd.isna(v) else v) for k, v in r.items()}
            for r in g.to_dict("records")
        ]
        for i, r in enumerate(rows):
            out += _quarter(ticker, r, _ttm(rows, i), poly, price_at, label_of, flags)
    return pd.DataFrame(out)


def _quarter(
    ticker: str,
    r: dict[str, Any],
    ttm: float | None,
    poly: dict[tuple[str, date], dict[str, Any]],
    price_at: PriceLookup,
    label_of: Labeller,
    flags: dict[tuple[str, date, str], list[tuple[str, str]]],
) -> list[dict[str, Any]]:
    end, filed = r["period_end"], r["available_date"]
    p = poly.get((ticker, filed)) or {}
    px = price_at(ticker, filed)
    vals: dict[str, float | None] = {k: r.get(k) for k in ("net_income", "total_assets")}
    vals |= {"equity": r.get("equity"), "operating_cf": r.get("operating_cf")}
    vals |= {"revenue": p.get("revenue"), "ttm_net_income": ttm}
    mcap = px[1] * p["shares"] if px and p.get("shares") else None
    vals["market_cap"] = mcap
    label = label_of(ticker, end)
    where = f"{r['file'].rsplit('/', 1)[-1]} line {r['line']}"
    base = {
        "ticker": ticker,
        "fiscal_year": label[0] if label else None,
        "fiscal_period": f"Q{label[1]}" if label else None,
        "period_end": end,
        "source": SOURCE,
        "available_from": filed,
        "estimated": False,
        "accession": None,
    }
    date_flags = flags.get((ticker, end, "available_date"), [])
    out = []
    for ratio, (num, den) in _INPUTS.items():
        a, b = vals.get(num), vals.get(den)
        hits = [*date_flags]
        for item in (num, den):
            hits += flags.get((ticker, end, "net_income" if item == "ttm_net_income" else item), [])
        checks = sorted({c for c, _ in hits})
        blocked = [reason for c, reason in hits if c in BLOCKING]
        value = a / b if a is not None and b and not blocked else None
        if value is None and not blocked:
            continue  # an input the vendor never tagged: no row, as for the filings
        note = f"{where}: {num} / {den}"
        if mcap is not None and den == "market_cap" and px:
            note += f"; market cap = close {px[1]:.4g} x shares {p['shares']:.6g}"
        if hits:
            note += "; " + "; ".join(f"{c}: {reason}" for c, reason in hits)
        out.append(
            base
            | {
                "ratio": ratio,
                "value": value,
                "concepts": f"{num} / {den}",
                "price_date": px[0] if px and den == "market_cap" else None,
                "note": ("not computed: " if blocked else "") + note,
                "flags": ",".join(checks) or None,
            }
        )
    for ratio in ("debt_assets", "debt_equity"):
        out.append(
            base
            | {
                "ratio": ratio,
                "value": None,
                "concepts": "total_debt",
                "price_date": None,
                "note": f"not computed: {NO_DEBT}",
                "flags": None,
            }
        )
    return out
