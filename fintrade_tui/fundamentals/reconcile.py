"""Reconciliation room: every source against the others, where they give the same thing.

Two levels, both agreeing within `tolerance` (relative to the larger absolute value):
- inputs -- the same figure for the same company and quarter: net income, total assets, equity
  and operating cash flow in the filings (`quarter_inputs`) vs `sec_pit`; polygon's quarterly
  net income vs `sec_pit` (tied through the filing date) and vs the filings (the 10-Q filed that
  day). Each pair is a `reconciliation` row, `agree` or `conflict` with both values.
- ratios -- the same accounting ratio of the same report in two sources (same ticker, ratio
  and availability date; same period end where both know it). Price-based ratios (Book/Price,
  Earnings/Price, dividend yield) are left out: sources count shares differently (the cover
  page's count vs the vendor's), about 1.5% apart, which is a definition, not an error; their
  notes name the share count used.
`agreement` measures each vendor source against the filings (both levels) and `rank` orders the
sources for snapshots: the filings, then the vendors by how often they agree with the filings,
then those never compared, in the default order. `contested` says, per fundamentals row, which
other sources disagreed with it or with its inputs.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

FILINGS = "filing"  # the fundamentals source name of the filing-derived ratios
DEFAULT_ORDER = ("filing", "fintradebench_precomputed", "sec_pit", "polygon")
_ITEMS = {  # sec_pit column -> quarter_inputs item
    "net_income": "net_income",
    "total_assets": "total_assets",
    "equity": "shareholders_equity",
    "operating_cf": "operating_cash_flow",
}
_RATIO_INPUTS = {
    "roa": ("net_income", "total_assets"),
    "roe": ("net_income", "equity"),
    "cashflow_assets": ("operating_cf", "total_assets"),
    "sales_assets": ("total_assets",),
    "book_price": ("equity",),
    "earnings_price": ("net_income",),
}
PRICE_BASED = ("book_price", "earnings_price", "dividend_yield")
RECON_COLUMNS = ["ticker", "period_end", "item", "source_a", "value_a", "source_b", "value_b"]


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }


def input_pairs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every (company, quarter, figure) two sources both give, with both values."""
    have = _tables(con)
    parts: list[str] = []
    if {"quarter_inputs", "sec_pit_rows"} <= have:
        for col, item in _ITEMS.items():
            parts.append(
                f"""SELECT q.ticker, q.period_end, '{col}' AS item, 'filing' AS source_a,
                    q.value AS value_a, 'sec_pit' AS source_b, s.{col} AS value_b
                FROM quarter_inputs q JOIN sec_pit_rows s
                  ON s.ticker = q.ticker AND s.period_end = q.period_end
                WHERE q.item = '{item}' AND s.{col} IS NOT NULL"""
            )
    poly_q = """SELECT ticker, filing_date, net_income FROM polygon_fundamentals
                WHERE period LIKE 'Q%' AND net_income IS NOT NULL"""
    if {"polygon_fundamentals", "sec_pit_rows"} <= have:
        parts.append(
            f"""SELECT s.ticker, s.period_end, 'net_income', 'polygon', p.net_income,
                'sec_pit', s.net_income
            FROM ({poly_q}) p JOIN sec_pit_rows s
              ON s.ticker = p.ticker AND s.available_date = p.filing_date
            WHERE s.net_income IS NOT NULL AND s.period_end < p.filing_date
            -- the quarter the 10-Q reports; rows filed with it for earlier periods restate them
            QUALIFY row_number() OVER (PARTITION BY s.ticker, p.filing_date
                                       ORDER BY s.period_end DESC) = 1"""
        )
    if {"polygon_fundamentals", "filings", "quarter_inputs"} <= have:
        parts.append(
            f"""SELECT q.ticker, q.period_end, 'net_income', 'filing', q.value, 'polygon',
                p.net_income
            FROM ({poly_q}) p JOIN filings f
              ON f.ticker = p.ticker AND f.filed = p.filing_date AND f.form = '10-Q'
            JOIN quarter_inputs q ON q.accession = f.accession AND q.item = 'net_income'"""
        )
    if not parts:
        return pd.DataFrame(columns=RECON_COLUMNS)
    df = con.execute(" UNION ALL ".join(parts)).df()
    df.columns = RECON_COLUMNS
    return df


def judge(df: pd.DataFrame, a: str, b: str, tolerance: float) -> pd.Series:
    """'agree' where two values are within `tolerance` of the larger, else 'conflict'."""
    x, y = df[a].astype(float), df[b].astype(float)
    scale = pd.concat([x.abs(), y.abs()], axis=1).max(axis=1)
    close = (x - y).abs() <= tolerance * scale
    return close.map({True: "agree", False: "conflict"})


def reconcile(con: duckdb.DuckDBPyConnection, tolerance: float) -> pd.DataFrame:
    """The input-level pairs with their status and relative difference."""
    df = input_pairs(con)
    if df.empty:
        return df.assign(status=pd.Series(dtype=str), rel_diff=pd.Series(dtype=float))
    scale = pd.concat([df["value_a"].abs(), df["value_b"].abs()], axis=1).max(axis=1)
    df["rel_diff"] = ((df["value_a"] - df["value_b"]).abs() / scale.where(scale > 0)).fillna(0.0)
    df["status"] = judge(df, "value_a", "value_b", tolerance)
    return df


def ratio_pairs(fund: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    """Rows of two sources for the same report and ratio (both valued, neither estimated)."""
    cols = ["ticker", "ratio", "available_from", "period_end", "source", "value"]
    keep = fund["value"].notna() & ~fund["estimated"].fillna(False).astype(bool)
    f = fund[keep & ~fund["ratio"].isin(PRICE_BASED)][cols]
    f = f.reset_index().rename(columns={"index": "row"})
    if f.empty:
        return pd.DataFrame(columns=["row_a", "source_a", "source_b", "value_b", "status"])
    m = f.merge(f, on=["ticker", "ratio", "available_from"], suffixes=("_a", "_b"))
    same_period = (
        m["period_end_a"].isna()
        | m["period_end_b"].isna()
        | (m["period_end_a"] == m["period_end_b"])
    )
    m = m[(m["source_a"] != m["source_b"]) & same_period].copy()
    m["status"] = judge(m, "value_a", "value_b", tolerance)
    return m


def agreement(recon: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """source, compared, agreed, rate: each vendor source against the filings."""
    parts = []
    if not recon.empty:
        r = recon[recon["source_a"] == FILINGS]
        parts.append(r[["source_b", "status"]].rename(columns={"source_b": "source"}))
    if not pairs.empty:
        p = pairs[pairs["source_a"] == FILINGS]
        parts.append(p[["source_b", "status"]].rename(columns={"source_b": "source"}))
    if not parts:
        return pd.DataFrame(columns=["source", "compared", "agreed", "rate"])
    both = pd.concat(parts, ignore_index=True)
    g = both.groupby("source")["status"]
    out = pd.DataFrame({"compared": g.size(), "agreed": g.apply(lambda s: (s == "agree").sum())})
    out["rate"] = out["agreed"] / out["compared"]
    return out.reset_index()


def rank(agree: pd.DataFrame, sources: list[str]) -> pd.DataFrame:
    """source, rank: the filings first, then by agreement with them, then the unmeasured."""
    measured = agree.sort_values(["rate", "compared"], ascending=False)["source"].tolist()
    rest = [s for s in DEFAULT_ORDER if s not in measured and s != FILINGS]
    rest += sorted(set(sources) - set(measured) - set(rest) - {FILINGS})
    order = [FILINGS, *[s for s in measured if s != FILINGS], *rest]
    return pd.DataFrame({"source": order, "rank": range(len(order))})


def contested(fund: pd.DataFrame, recon: pd.DataFrame, pairs: pd.DataFrame) -> pd.Series:
    """Per fundamentals row (same index), the other sources that disagreed, or None."""
    notes: dict[int, list[str]] = {}
    for row, other, value in pairs[pairs["status"] == "conflict"][
        ["row_a", "source_b", "value_b"]
    ].itertuples(index=False):
        notes.setdefault(row, []).append(f"{other} {value:.4g}")
    if not recon.empty:
        bad = recon[recon["status"] == "conflict"]
        by_key: dict[tuple[Any, ...], list[str]] = {}
        for t, end, item, sa, va, sb, vb in bad[RECON_COLUMNS].itertuples(index=False):
            for mine, theirs, v in ((sa, sb, vb), (sb, sa, va)):
                by_key.setdefault((t, end, item, mine), []).append(f"{item}: {theirs} {v:,.0f}")
        keys = fund[["ticker", "period_end", "ratio", "source"]].itertuples()
        for idx, t, end, ratio, source in keys:
            for item in _RATIO_INPUTS.get(ratio, ()):
                notes.setdefault(idx, []).extend(by_key.get((t, end, item, source), []))
    out = pd.Series([None] * len(fund), index=fund.index, dtype=object)
    for idx, items in notes.items():
        if items:
            out.at[idx] = "; ".join(dict.fromkeys(items))
    return out


def filing_annuals(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """ticker, period_end, item, value, source: each 10-K's own annual net income and operating
    cash flow (company totals, a 350-380-day duration ending at the year end), the first
    concept of the filings' list that has one."""
    from fintrade_tui.fundamentals.concepts import FLOWS

    parts = [
        (col, priority, concept)
        for col, item in (("net_income", "net_income"), ("operating_cf", "operating_cash_flow"))
        for priority, concept in enumerate(FLOWS[item])
    ]
    if not {"facts", "filings"} <= _tables(con):
        return pd.DataFrame(columns=["ticker", "period_end", "item", "value", "source"])
    con.register("_concepts", pd.DataFrame(parts, columns=["item", "priority", "concept"]))
    try:
        return con.execute(
            """SELECT f.ticker, f.period_end, c.item, x.value, 'filings' AS source
            FROM filings f JOIN facts x ON x.accession = f.accession
            JOIN _concepts c ON c.concept = x.concept
            WHERE f.form = '10-K' AND NOT x.dimensional AND x.end_date = f.period_end
              AND date_diff('day', x.start_date, x.end_date) BETWEEN 350 AND 380
            QUALIFY row_number() OVER (PARTITION BY f.ticker, f.period_end, c.item
                                       ORDER BY c.priority) = 1"""
        ).df()
    finally:
        con.unregister("_concepts")
