"""Point-in-time queries room: snapshot, signals, facts, fundamentals (all parameterized SQL).

"As of D" means after the close of D: the close of D and filings filed on D are visible,
nothing later is. Filing-derived fundamentals come first; other sources fill gaps.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.fundamentals.concepts import RATIOS
from fintrade_tui.signals.compute import SIGNALS

# lower is preferred when several sources have a ratio; ingest stores the measured order in
# fundamentals.source_rank (filings, then vendors by agreement with the filings)
SOURCE_RANK = {"filing": 0, "fintradebench_precomputed": 1, "sec_pit": 2, "polygon": 3}
_DEFAULT_RANK = " ".join(f"WHEN '{s}' THEN {r}" for s, r in SOURCE_RANK.items())
# a ratio whose latest period ended longer ago than this is no longer the company's current one
# (a year and a filing deadline): it is a gap with its reason, not a value
OUTDATED_DAYS = 455
# checks that say a value is probably wrong: a clean source's value wins over it
DEMOTING = ("scale_error", "sign_flip", "flow_sum")
# The one choice of a ratio's value among sources, shared by every point-in-time reader: a value
# before an explained gap; the latest period any source has; within it a clean value before one
# a check doubts, then the better-ranked source; then the latest filing. The last keys only make
# the choice total: a vendor that lists one period twice under two fiscal labels (polygon's ADSK
# and KHC earnings_price) must give the same value whichever query shape reads it.
BEST_ORDER = f"""(value IS NULL), period_end DESC NULLS LAST,
    (flags IS NOT NULL AND regexp_matches(flags, '{"|".join(DEMOTING)}')),
    coalesce(source_rank, CASE source {_DEFAULT_RANK} ELSE 9 END), available_from DESC,
    fiscal_year DESC NULLS LAST, fiscal_period DESC NULLS LAST, value DESC NULLS LAST"""


def row_dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """A query's result rows as dicts keyed by column name."""
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def check_ticker(con: duckdb.DuckDBPyConnection, ticker: str) -> str:
    t = ticker.strip().upper()
    hit = con.execute(
        "SELECT 1 FROM prices WHERE ticker = ?"
        " UNION ALL SELECT 1 FROM filings WHERE ticker = ? LIMIT 1",
        [t, t],
    ).fetchone()
    if not hit:
        raise UserError(
            f"ticker {ticker!r}",
            "is not in the store",
            "see `fintrade-tui snapshot` on a known ticker or re-run ingest",
        )
    return t


def snapshot(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date) -> dict[str, Any]:
    """Prices, signals and fundamentals of `ticker` visible after the close of `as_of`."""
    t = check_ticker(con, ticker)
    return snapshots(con, [t], as_of)[t]


def snapshots(
    con: duckdb.DuckDBPyConnection, tickers: list[str], as_of: date
) -> dict[str, dict[str, Any]]:
    """`snapshot` of each of `tickers` (upper case, as stored) in two queries, however many
    tickers: a market scan names a hundred. A ticker the store lacks gets an empty one."""
    tickers = list(dict.fromkeys(tickers))
    sig = ", ".join(f"s.{c}" for c in SIGNALS)
    # each ticker's last price day on or before as_of, and that day's one signal row
    rows = con.execute(
        f"""SELECT p.ticker, p.date, p.close, p.adj_close, p.source, {sig}
        FROM (SELECT ticker, max(date) AS date FROM prices
              WHERE list_contains(?::VARCHAR[], ticker) AND date <= ? GROUP BY ticker) m
        JOIN prices p ON p.ticker = m.ticker AND p.date = m.date
        LEFT JOIN signals s ON s.ticker = m.ticker AND s.date = m.date""",
        [tickers, as_of],
    ).fetchall()
    prices = {r[0]: r for r in rows}
    best = best_many(con, tickers, as_of)
    out = {}
    for t in tickers:
        px = prices.get(t)
        found, gaps = best.get(t, ({}, {}))
        out[t] = {
            "ticker": t,
            "as_of": as_of,
            "price_date": px[1] if px else None,
            "close": px[2] if px else None,
            "adj_close": px[3] if px else None,
            "price_source": px[4] if px else None,
            "signals": dict(zip(SIGNALS, px[5:] if px else [None] * len(SIGNALS), strict=True)),
            "fundamentals": {name: found.get(name) for name in RATIOS},
            "fundamentals_gaps": gaps,
        }
    return out


def fundamentals_as_of(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date) -> dict[str, Any]:
    """Per ratio, the latest value available on `as_of` from the best source that has one
    (`BEST_ORDER`), with its `flags` and `contested` notes; None where no source has one."""
    return _best(con, ticker, as_of)[0]


def fundamentals_gaps(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date) -> dict[str, str]:
    """Per ratio, why it has no value on `as_of`: the latest period available has none, for a
    known reason (a stale input, no source with debt, ...). An older period's value does not
    stand in for it: those ratios are None in `fundamentals_as_of`."""
    return _best(con, ticker, as_of)[1]


def _newer(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a["period_end"] and b["period_end"]:
        return bool(a["period_end"] > b["period_end"])
    return bool(a["filed"] > b["filed"])


def _best(
    con: duckdb.DuckDBPyConnection, ticker: str, as_of: date
) -> tuple[dict[str, Any], dict[str, str]]:
    found, gaps = best_many(con, [ticker], as_of).get(ticker, ({}, {}))
    return {name: found.get(name) for name in RATIOS}, gaps


def best_many(
    con: duckdb.DuckDBPyConnection,
    tickers: list[str],
    as_of: date,
    ratios: list[str] | None = None,
) -> dict[str, tuple[dict[str, Any], dict[str, str]]]:
    """Per ticker: (ratio -> the value a snapshot shows, ratio -> why there is none), in one
    query for many tickers. `BEST_ORDER` picks the row; a newer period known to be unusable
    (a stale input, no source with debt) or a value older than `OUTDATED_DAYS` is a gap."""
    rows = row_dicts(
        con.execute(
            f"""SELECT ticker, ratio, value, fiscal_year, fiscal_period, period_end,
                   available_from AS filed, accession, source, estimated, price_date, concepts,
                   flags, contested, note
            FROM fundamentals
            WHERE list_contains(?::VARCHAR[], ticker) AND available_from <= ?
              AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], ratio))
              AND (value IS NOT NULL OR note IS NOT NULL)
            QUALIFY row_number() OVER (
                PARTITION BY ticker, ratio, value IS NULL ORDER BY {BEST_ORDER}) = 1""",
            [tickers, as_of, ratios, ratios],
        )
    )
    out: dict[str, tuple[dict[str, Any], dict[str, str]]] = {}
    for r in rows:
        out.setdefault(r["ticker"], ({}, {}))
    for r in rows:
        if r["value"] is not None:
            out[r["ticker"]][0][r["ratio"]] = r
    for r in rows:
        found, gaps = out[r["ticker"]]
        shown = found.get(r["ratio"])
        if r["value"] is None and (shown is None or _newer(r, shown)):
            # the latest period's value is known to be unusable: no older one stands in for it
            gaps[r["ratio"]] = f"{r['source']} {r['period_end']}: {r['note']}"
            found.pop(r["ratio"], None)
    for found, gaps in out.values():
        for name, r in list(found.items()):
            when = r["period_end"] or r["filed"]
            if when < as_of - timedelta(days=OUTDATED_DAYS):  # not the current value any more
                gaps[name] = (
                    f"the latest value is {r['source']}'s for {when}, more than "
                    f"{OUTDATED_DAYS} days before {as_of}: no source has a newer one"
                )
                del found[name]
                continue
            for k in ("ticker", "ratio", "note"):
                r.pop(k)
    return out


def signals_between(
    con: duckdb.DuckDBPyConnection, ticker: str, start: date | None, end: date | None
) -> list[dict[str, Any]]:
    t = check_ticker(con, ticker)
    return row_dicts(
        con.execute(
            f"""SELECT date, adj_close, {", ".join(SIGNALS)} FROM signals
            WHERE ticker = ? AND (? IS NULL OR date >= ?) AND (? IS NULL OR date <= ?)
            ORDER BY date""",
            [t, start, start, end, end],
        )
    )


def facts_for(
    con: duckdb.DuckDBPyConnection, ticker: str, concept: str, dimensional: bool = False
) -> list[dict[str, Any]]:
    t = check_ticker(con, ticker)
    return row_dicts(
        con.execute(
            """SELECT f.concept, f.value, f.unit, f.start_date AS start, f.end_date AS "end",
                   f.instant, f.accession, g.form, g.filed, f.segments
            FROM facts f JOIN filings g USING (accession)
            WHERE f.ticker = ? AND lower(f.concept) = lower(?) AND (? OR NOT f.dimensional)
            ORDER BY g.filed, coalesce(f.end_date, f.instant), f.start_date""",
            [t, concept.split(":")[-1], dimensional],
        )
    )


def fundamentals_for(
    con: duckdb.DuckDBPyConnection, ticker: str, source: str | None = None
) -> list[dict[str, Any]]:
    t = check_ticker(con, ticker)
    return row_dicts(
        con.execute(
            """SELECT fiscal_year, fiscal_period, period_end, ratio, value, source, available_from,
                   estimated, accession, concepts, price_date, note, flags, contested
            FROM fundamentals WHERE ticker = ? AND (? IS NULL OR source = ?)
            ORDER BY coalesce(period_end, available_from), ratio, source""",
            [t, source, source],
        )
    )


def prior_values(
    con: duckdb.DuckDBPyConnection,
    ticker: str,
    ratio: str,
    as_of: date,
    before: date,
    annual: bool,
    n: int = 2,
) -> list[dict[str, Any]]:
    """The `n` periods of `ratio` ended before `before` (newest first), as known on `as_of`:
    per period the row a snapshot would pick (`BEST_ORDER`); fiscal years only when `annual`,
    else quarters only — an annual and a quarterly ratio of a flow are not comparable."""
    return row_dicts(
        con.execute(
            f"""SELECT ticker, ratio, value, fiscal_year, fiscal_period, period_end,
                   available_from, accession, source, estimated
            FROM fundamentals
            WHERE ticker = ? AND ratio = ? AND available_from <= ? AND value IS NOT NULL
              AND period_end < ? AND (fiscal_period = 'FY') = ?
            QUALIFY row_number() OVER (PARTITION BY period_end ORDER BY {BEST_ORDER}) = 1
            ORDER BY period_end DESC
            LIMIT ?""",
            [ticker, ratio, as_of, before, annual, n],
        )
    )
