"""Reconciled-fundamentals step of ingest: the vendor rows checked, turned into ratios and
measured against the filings, inside the store being built.

Order matters: quality findings first (they decide which sec_pit inputs may be used), then the
sec_pit ratios on the companies' fiscal calendars, then every source's ratios and inputs
reconciled, which gives the source ranks snapshots use and the `contested` notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, cast

import duckdb
import pandas as pd

from fintrade_tui.fundamentals import quality, reconcile, sec_ratios
from fintrade_tui.fundamentals.sec_ratios import PriceLookup
from fintrade_tui.questions.fiscal import FiscalCalendar


@dataclass
class Reconciled:
    fundamentals: pd.DataFrame  # every source's rows, with flags and contested
    findings: pd.DataFrame
    reconciliation: pd.DataFrame
    ranks: pd.DataFrame  # source, rank, compared, agreed, rate
    counts: dict[str, Any] = field(default_factory=dict)


def build(
    con: duckdb.DuckDBPyConnection,
    fundamentals: pd.DataFrame,
    sec: pd.DataFrame,
    polygon: pd.DataFrame,
    price_at: PriceLookup,
    tolerance: float,
) -> Reconciled:
    """Needs `filings`, `facts`, `quarter_inputs`, `polygon_fundamentals`, `sec_pit_rows` in
    `con`; returns what the caller writes."""
    findings = quality.run_checks(sec, polygon, reconcile.filing_annuals(con))
    calendar = FiscalCalendar(con)
    sec_rows = sec_ratios.sec_ratios(sec, polygon, price_at, calendar.label_of, findings)
    parts = [p for p in (fundamentals, sec_rows) if len(p)]
    fund = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if len(fund):
        fund["period_end"] = polygon_period_ends(fund, calendar)
    recon = reconcile.reconcile(con, tolerance)
    if fund.empty:
        pairs = pd.DataFrame(columns=["row_a", "source_a", "source_b", "value_b", "status"])
        fund = fund.assign(flags=None, contested=None)
    else:
        if "flags" not in fund.columns:
            fund["flags"] = None
        pairs = reconcile.ratio_pairs(fund, tolerance)
        fund["contested"] = reconcile.contested(fund, recon, pairs)
    agree = reconcile.agreement(recon, pairs)
    sources = sorted(set(fund["source"])) if len(fund) else []
    ranks = reconcile.rank(agree, sources).merge(agree, on="source", how="left")
    if len(fund):
        fund["source_rank"] = fund["source"].map(dict(ranks[["source", "rank"]].values))
    counts = {
        "findings": findings.groupby("check").size().to_dict() if len(findings) else {},
        "conflicts": int((recon["status"] == "conflict").sum()) if len(recon) else 0,
    }
    return Reconciled(fund, findings, recon, ranks, counts)


def polygon_period_ends(fund: pd.DataFrame, calendar: FiscalCalendar) -> pd.Series:
    """`period_end` with polygon's gaps filled: polygon gives a label ("Q3 2025") and a filing
    date, no period end. The sec_pit row filed the same day gives it (its latest plausible
    period: the filing's own quarter), else the company's fiscal calendar does; a row neither
    can place keeps NULL. Snapshots order by period, so a vendor row needs one to compete."""
    ends = fund["period_end"].copy()
    todo = fund.index[(fund["source"] == "polygon") & fund["period_end"].isna()]
    for i in todo:
        # the cells' types as the columns hold them (pandas types `.at` as any scalar)
        t = cast(str, fund.at[i, "ticker"])
        fy, fp = cast(float, fund.at[i, "fiscal_year"]), fund.at[i, "fiscal_period"]
        end = calendar.reported_end(t, cast(date, fund.at[i, "available_from"]))
        if end is None and pd.notna(fy) and str(fp)[1:].isdigit():
            end = calendar.vendor_label_end(t, int(fy), int(str(fp)[1:]))
        if end is not None:
            ends.at[i] = end
    return ends
