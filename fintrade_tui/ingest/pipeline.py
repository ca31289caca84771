"""Ingest pipeline room: bundle -> a new store, swapped in atomically when everything succeeded."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Protocol

import pandas as pd

from fintrade_tui.config import Config
from fintrade_tui.errors import Quarantined, UserError
from fintrade_tui.fundamentals import derive, sec_pit, sources
from fintrade_tui.ingest import filings as filing_io
from fintrade_tui.ingest import parse_cache, reconciled, reference
from fintrade_tui.ingest import prices as price_io
from fintrade_tui.kill_points import stop_at
from fintrade_tui.signals import compute
from fintrade_tui.store.company import universe
from fintrade_tui.store.db import STORE_VERSION, building


class Reporter(Protocol):
    def start(self, label: str, total: int | None) -> Callable[[int], None]: ...


def _no_tick(n: int = 1) -> None:
    """A progress tick nobody shows."""


class _Silent:
    def start(self, label: str, total: int | None) -> Callable[[int], None]:
        return _no_tick


@dataclass
class Summary:
    tickers: int = 0
    price_rows: int = 0
    series_rows: int = 0
    filings: int = 0
    filings_cached: int = 0  # of them, read from the parse cache instead of parsed again
    facts: int = 0
    fundamentals: int = 0
    signals: int = 0
    quarantined: list[Quarantined] = field(default_factory=list)
    agreement: list[dict] = field(default_factory=list)  # per vendor source vs the filings
    findings: dict[str, int] = field(default_factory=dict)  # quality check -> rows hit
    conflicts: int = 0  # input pairs two sources disagree on
    coverage: dict[str, int] = field(default_factory=dict)  # tickers: filings | vendor | none


def price_lookup(series: pd.DataFrame) -> Callable[[str, date], tuple[date, float] | None]:
    """(price date, close) of the last trading day on or before a date, per ticker."""
    index = {
        t: (list(g["date"]), list(g["close"]))
        for t, g in series.sort_values("date").groupby("ticker")
    }

    def at(ticker: str, when: date) -> tuple[date, float] | None:
        dates, closes = index.get(ticker, ([], []))
        k = bisect.bisect_right(dates, when) - 1
        return (dates[k], closes[k]) if k >= 0 else None

    return at


def load_prices(
    cfg: Config, report: Reporter
) -> tuple[list[price_io.PriceFile], pd.DataFrame, list]:
    found = price_io.discover(cfg.bundle)
    tick = report.start("prices: read", len(found))
    files = []
    for source, ticker, path in found:
        files.append(price_io.read_price_file(source, ticker, path))
        tick(1)
    kept, bad = price_io.check_sources(
        files, cfg.prices.source_priority, cfg.prices.ratio_tolerance, cfg.prices.min_agreement
    )
    by_ticker: dict[str, list[price_io.PriceFile]] = {}
    for f in kept:
        by_ticker.setdefault(f.ticker, []).append(f)
    tick = report.start("prices: merge", len(by_ticker))
    merged = []
    for group in by_ticker.values():
        merged.append(price_io.merge_series(group))
        tick(1)
    series = pd.concat(merged, ignore_index=True) if merged else pd.DataFrame()
    return files, series, bad


def run_ingest(cfg: Config, report: Reporter | None = None, strict: bool = False) -> Summary:
    """Build the store from the bundle. Any error leaves the previous store untouched."""
    report = report or _Silent()
    bundle = cfg.check_bundle()
    files, series, quarantined = load_prices(cfg, report)
    if strict and quarantined:
        q = quarantined[0]
        raise UserError(q.file, f"quarantined: {q.reason}", "remove or replace the file")
    paths = filing_io.discover(bundle)
    tick = report.start("filings: parse iXBRL and sections", len(paths))
    cache = parse_cache.folder(cfg.parse_cache)
    parsed, cached = filing_io.parse_all(paths, progress=lambda: tick(1), cache=cache)
    filings = pd.DataFrame([p[0] for p in parsed])
    facts = pd.DataFrame([f for p in parsed for f in p[1]])
    section_rows = pd.DataFrame([s for p in parsed for s in p[2]])
    dup = filings[filings["accession"].duplicated()] if len(filings) else filings
    if len(dup):
        raise UserError(dup["path"].iloc[0], "accession appears twice", "keep one copy") from None

    tickers = set(series["ticker"]) if len(series) else set()
    tickers |= set(filings["ticker"]) if len(filings) else set()
    companies = reference.companies(bundle, tickers)
    membership = reference.membership(bundle)
    at = price_lookup(series) if len(series) else (lambda t, d: None)

    tick = report.start("fundamentals", 3)
    fund_parts = []
    inputs = pd.DataFrame()
    if len(filings):
        totals = facts[
            ~facts["dimensional"] | (facts["concept"] == "EntityCommonStockSharesOutstanding")
        ]
        totals = totals.drop_duplicates(
            ["accession", "concept", "start_date", "end_date", "instant", "segments", "unit"]
        )
        inputs, derived = derive.derive(filings, totals, at)
        fund_parts.append(derived)
    tick(1)
    fund_parts.append(
        sources.precomputed(
            bundle, filings if len(filings) else _no_filings(), cfg.fundamentals.estimated_lag_days
        )
    )
    tick(1)
    poly = sources.polygon(bundle)
    if len(poly):
        fund_parts.append(sources.polygon_ratios(poly, at))
    sec_rows, sec_bad = sec_pit.read(bundle)
    if strict and sec_bad:
        raise UserError(sec_bad[0].file, f"quarantined: {sec_bad[0].reason}", "fix the file")
    quarantined = [*quarantined, *sec_bad]
    tick(1)
    fundamentals = (
        pd.concat([p for p in fund_parts if len(p)], ignore_index=True)
        if any(len(p) for p in fund_parts)
        else pd.DataFrame()
    )

    summary = Summary(quarantined=quarantined, filings_cached=cached)
    with building(cfg.store) as con:
        tick = report.start("store: write", 4)
        raw = (
            pd.concat(
                [f.frame.assign(ticker=f.ticker, source=f.source, file=str(f.path)) for f in files],
                ignore_index=True,
            )
            if files
            else pd.DataFrame()
        )
        _insert(con, "price_rows", raw)
        _insert(con, "prices", series)
        _insert(con, "quarantine", pd.DataFrame([q.__dict__ for q in quarantined]))
        _insert(con, "companies", companies)
        _insert(con, "index_membership", membership)
        _insert(con, "sec_filers", reference.sec_filers(bundle))
        tick(1)
        _insert(con, "filings", filings)
        _insert(con, "facts", facts, distinct=True)
        _insert(con, "filing_sections", section_rows)
        stop_at("ingest.filings-written")  # the new store half written
        tick(1)
        _insert(con, "quarter_inputs", inputs)
        _insert(con, "polygon_fundamentals", poly)
        _insert(con, "sec_pit_rows", sec_rows)
        rec = reconciled.build(
            con, fundamentals, sec_rows, poly, at, cfg.fundamentals.reconcile_tolerance
        )
        _insert(con, "fundamentals", rec.fundamentals)
        _insert(con, "quality_findings", rec.findings)
        _insert(con, "reconciliation", rec.reconciliation)
        _insert(con, "source_rank", rec.ranks)
        summary.agreement = rec.ranks.dropna(subset=["compared"]).to_dict("records")
        summary.findings = rec.counts["findings"]
        summary.conflicts = rec.counts["conflicts"]
        tick(1)
        summary.signals = compute.build(con)
        summary.coverage = dict(Counter(r["coverage"] for r in universe(con)))
        tick(1)
        con.execute(
            "INSERT INTO meta VALUES ('bundle', ?), ('built_at', ?), ('store_version', ?)",
            [str(bundle), datetime.now().isoformat(timespec="seconds"), STORE_VERSION],
        )
        counts = con.execute("""SELECT (SELECT count(DISTINCT ticker) FROM prices),
            (SELECT count(*) FROM price_rows), (SELECT count(*) FROM prices),
            (SELECT count(*) FROM filings), (SELECT count(*) FROM facts),
            (SELECT count(*) FROM fundamentals)""").fetchone()
    assert counts is not None  # a SELECT without FROM returns one row
    (
        summary.tickers,
        summary.price_rows,
        summary.series_rows,
        summary.filings,
        summary.facts,
        summary.fundamentals,
    ) = counts
    return summary


def _no_filings() -> pd.DataFrame:
    return pd.DataFrame(
        columns=[
            "ticker",
            "period_end",
            "filed",
            "fiscal_year",
            "fiscal_period",
            "form",
            "accession",
        ]
    )


def _insert(con, table: str, df: pd.DataFrame, distinct: bool = False) -> None:
    """Insert a frame by column name (columns the table lacks are an error, missing ones NULL)."""
    if df is None or df.empty:
        return
    cols = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    use = [c for c in cols if c in df.columns]
    con.register("_frame", df[use])
    names = ", ".join(f'"{c}"' for c in use)  # quoted: "check" is an SQL keyword
    con.execute(
        f"INSERT INTO {table} ({names}) SELECT {'DISTINCT' if distinct else ''} {names} FROM _frame"
    )
    con.unregister("_frame")
