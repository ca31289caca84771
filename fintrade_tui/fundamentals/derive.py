"""Filing-derived fundamentals room: quarterly inputs from XBRL facts, then the Table 6 ratios.

Point-in-time by construction: a filing's row uses only facts from that filing and earlier ones
of the same company, and becomes available on the filing date.
Quarterly flows: a 10-Q's three-month value when reported; otherwise year-to-date minus the
previous quarter's year-to-date (same fiscal-year start). A 10-K's fourth quarter is the annual
value minus the nine-month year-to-date value of the third-quarter 10-Q.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pandas as pd

from fintrade_tui.fundamentals.concepts import (
    FLOWS,
    LONG_TERM_DEBT,
    SHARES,
    SHORT_TERM_DEBT,
    STOCKS,
)

PriceLookup = Callable[[str, date], tuple[date, float] | None]
QUARTER_DAYS = (80, 100)  # a 13- or 14-week fiscal quarter


def _days(start: Any, end: Any) -> int:
    return int((end - start).days) + 1


class _Pool:
    """Company-total facts visible at one filing: its own first, then earlier filings'."""

    def __init__(self, facts: pd.DataFrame, own: str) -> None:
        # own filing first so restated values win over older ones
        self.df = facts.assign(_own=facts["accession"] != own).sort_values(
            ["_own", "filed"], ascending=[True, False]
        )

    def instant(self, concept: str, when: date) -> tuple[float, str] | None:
        hit = self.df[(self.df["concept"] == concept) & (self.df["instant"] == when)]
        return (float(hit["value"].iloc[0]), str(hit["accession"].iloc[0])) if len(hit) else None

    def durations(self, concept: str, end: date) -> pd.DataFrame:
        d = self.df[(self.df["concept"] == concept) & (self.df["end_date"] == end)]
        return d.assign(
            days=[_days(s, e) for s, e in zip(d["start_date"], d["end_date"], strict=True)]
        )

    def ytd_before(self, concept: str, start: date, end: date) -> pd.Series | None:
        """The year-to-date fact with the same start, ending one quarter before `end`."""
        d = self.df[(self.df["concept"] == concept) & (self.df["start_date"] == start)]
        gap = [(end - e).days for e in d["end_date"]]
        d = d[[QUARTER_DAYS[0] <= g <= QUARTER_DAYS[1] for g in gap]]
        return d.iloc[0] if len(d) else None


def quarterly_flow(pool: _Pool, concepts: list[str], form: str, end: date) -> dict[str, Any] | None:
    for concept in concepts:
        d = pool.durations(concept, end)
        if d.empty:
            continue
        if form == "10-Q":
            q = d[d["days"].between(*QUARTER_DAYS)]
            if len(q):
                r = q.iloc[0]
                return {
                    "value": float(r["value"]),
                    "concepts": f"{concept}@{r['accession']}",
                    "method": "3-month",
                }
        ytd = d.sort_values("days", ascending=False).iloc[0]
        if form == "10-Q" and ytd["days"] <= QUARTER_DAYS[1]:
            continue
        prior = pool.ytd_before(concept, ytd["start_date"], end)
        if prior is None:
            continue
        label = "annual - 9-month YTD" if form == "10-K" else "YTD - prior YTD"
        return {
            "value": float(ytd["value"]) - float(prior["value"]),
            "concepts": f"{concept}@{ytd['accession']} - {concept}@{prior['accession']}",
            "method": label,
            "annual": float(ytd["value"]) if form == "10-K" else None,
        }
    return None


def _stock(pool: _Pool, concepts: list[str], when: date) -> dict[str, Any] | None:
    for concept in concepts:
        hit = pool.instant(concept, when)
        if hit:
            return {"value": hit[0], "concepts": f"{concept}@{hit[1]}", "method": "period-end"}
    return None


def _debt(pool: _Pool, when: date) -> dict[str, Any] | None:
    """Total debt at `when` (see concepts.LONG_TERM_DEBT); `?` marks an optional part."""
    parts: list[tuple[str, tuple[float, str]]] = []
    for option in LONG_TERM_DEBT:
        got = [(c.rstrip("?"), pool.instant(c.rstrip("?"), when)) for c in option]
        if all(h for c, (_, h) in zip(option, got, strict=True) if not c.endswith("?")):
            parts = [(c, h) for c, h in got if h]
            break
    parts += [(c, h) for c in SHORT_TERM_DEBT if (h := pool.instant(c, when))]
    if not parts:
        return None
    return {
        "value": sum(h[0] for _, h in parts),
        "concepts": " + ".join(f"{c}@{h[1]}" for c, h in parts),
        "method": "period-end sum",
    }


def _reports(facts: pd.DataFrame, accession: str, concepts: list[str]) -> bool:
    return bool(((facts["accession"] == accession) & facts["concept"].isin(concepts)).any())


def _shares(facts: pd.DataFrame, accession: str) -> float | None:
    """Cover-page shares outstanding, summed over share classes at the latest date given."""
    d = facts[(facts["accession"] == accession) & (facts["concept"] == SHARES)]
    if d.empty:
        return None
    latest = d["instant"].max()
    return float(d[d["instant"] == latest].drop_duplicates(["segments", "value"])["value"].sum())


def split_factors(shares: list[float | None]) -> list[float]:
    """Factor bringing each filing's share count to the basis of the last one.

    A jump between consecutive filings' share counts close to an integer ratio >= 2 is a split.
    """
    factors = [1.0] * len(shares)
    acc = 1.0
    for i in range(len(shares) - 1, 0, -1):
        a, b = shares[i - 1], shares[i]
        if a and b:
            up, down = round(b / a), round(a / b)
            if up >= 2 and abs(b / a - up) < 0.05 * up:
                acc *= up
            elif down >= 2 and abs(a / b - down) < 0.05 * down:
                acc /= down
        factors[i - 1] = acc
    return factors


def derive(
    filings: pd.DataFrame, facts: pd.DataFrame, price_at: PriceLookup
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(quarter_inputs, fundamentals) for every filing; facts must be company totals."""
    facts = facts.merge(filings[["accession", "filed"]], on="accession")
    inputs: list[dict[str, Any]] = []
    ratios: list[dict[str, Any]] = []
    for ticker, group in filings.sort_values("filed").groupby("ticker", sort=True):
        group = group.reset_index(drop=True)
        tf = facts[facts["ticker"] == ticker]
        shares = [_shares(tf, a) for a in group["accession"]]
        factors = split_factors(shares)
        quarters: list[dict[str, Any]] = []
        for i, (_, f) in enumerate(group.iterrows()):
            pool = _Pool(tf[tf["filed"] <= f["filed"]], f["accession"])
            end = f["period_end"]
            fp = "Q4" if f["form"] == "10-K" else f["fiscal_period"]
            vals: dict[str, dict[str, Any] | None] = {
                k: quarterly_flow(pool, c, f["form"], end) for k, c in FLOWS.items()
            }
            if vals["dividends_paid"] is None and not _reports(
                tf, f["accession"], FLOWS["dividends_paid"]
            ):
                vals["dividends_paid"] = {
                    "value": 0.0,
                    "concepts": "no dividend facts in filing",
                    "method": "none reported",
                }
            vals |= {k: _stock(pool, c, end) for k, c in STOCKS.items()}
            vals["total_debt"] = _debt(pool, end)
            share = shares[i]
            if share:
                vals["shares_outstanding"] = {
                    "value": share * factors[i],
                    "concepts": f"dei:{SHARES}@{f['accession']}",
                    "method": f"cover page x split factor {factors[i]:g}",
                }
            base: dict[str, Any] = {
                "ticker": ticker,
                "accession": f["accession"],
                "fiscal_year": int(f["fiscal_year"]),
                "fiscal_period": fp,
                "period_end": end,
            }
            for item, v in vals.items():
                if v:
                    inputs.append(
                        base
                        | {
                            "item": item,
                            "value": v["value"],
                            "concepts": v["concepts"],
                            "method": v["method"],
                        }
                    )
            quarters.append({"end": end, "vals": vals})
            ratios.extend(_ratios(base, f["filed"], vals, quarters, price_at))
    return pd.DataFrame(inputs), pd.DataFrame(ratios)


def _ttm(quarters: list[dict[str, Any]], item: str) -> tuple[float, str] | None:
    """Trailing twelve months: a 10-K's annual value, else the last four quarters' sum."""
    last = quarters[-1]["vals"].get(item)
    if last and last.get("annual") is not None:
        return last["annual"], "annual"
    recent = quarters[-4:]
    if len(recent) < 4 or (recent[-1]["end"] - recent[0]["end"]).days > 300:
        return None
    got = [q["vals"].get(item) for q in recent]
    if not all(got):
        return None
    return sum(g["value"] for g in got), "sum of last 4 quarters"


def _ratios(
    base: dict[str, Any],
    filed: date,
    vals: dict[str, Any],
    quarters: list[dict[str, Any]],
    price_at: PriceLookup,
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def put(
        name: str, num: str, den: str, value: float | None, extra: dict[str, Any] | None = None
    ) -> None:
        if value is None:
            return
        used = " / ".join(vals[k]["concepts"] for k in (num, den) if vals.get(k))
        out.append(
            base
            | {
                "ratio": name,
                "value": value,
                "source": "filing",
                "available_from": filed,
                "estimated": False,
                "concepts": used,
                "price_date": None,
                "note": None,
            }
            | (extra or {})
        )

    def div(a: str, b: str) -> float | None:
        x, y = vals.get(a), vals.get(b)
        return x["value"] / y["value"] if x and y and y["value"] else None

    put("roa", "net_income", "total_assets", div("net_income", "total_assets"))
    put("roe", "net_income", "shareholders_equity", div("net_income", "shareholders_equity"))
    put("sales_assets", "revenue", "total_assets", div("revenue", "total_assets"))
    put("debt_assets", "total_debt", "total_assets", div("total_debt", "total_assets"))
    put(
        "debt_equity", "total_debt", "shareholders_equity", div("total_debt", "shareholders_equity")
    )
    put(
        "cashflow_assets",
        "operating_cash_flow",
        "total_assets",
        div("operating_cash_flow", "total_assets"),
    )

    px = price_at(base["ticker"], filed)
    sh = vals.get("shares_outstanding")
    if not px or not sh:
        return out
    price_date, close = px
    mcap = close * sh["value"]
    stamp: dict[str, Any] = {
        "price_date": price_date,
        "note": f"market cap = close {close:.4g} x shares {sh['value']:.6g}",
    }
    ni = _ttm(quarters, "net_income")
    if ni:
        put(
            "earnings_price",
            "net_income",
            "shares_outstanding",
            ni[0] / mcap,
            stamp | {"note": stamp["note"] + f"; earnings: {ni[1]}"},
        )
    eq = vals.get("shareholders_equity")
    if eq:
        put("book_price", "shareholders_equity", "shares_outstanding", eq["value"] / mcap, stamp)
    dv = _ttm(quarters, "dividends_paid")
    if dv:
        note = stamp["note"] + f"; dividends: {dv[1]}"
        put(
            "dividend_yield",
            "dividends_paid",
            "shares_outstanding",
            dv[0] / mcap,
            stamp | {"note": note},
        )
    return out
