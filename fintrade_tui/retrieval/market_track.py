"""Market-track room: monthly and quarterly text chunks built from the store's own numbers.

Each chunk states its date range and carries the same values as `prices`, `signals` and
`fundamentals_as_of` (what the dashboard shows), rounded by fixed rules so a reader can recompute
them: prices, MA/EMA and RSI to 2 decimals, volume and OBV in millions to 1 decimal, every other
ratio to 4 significant digits. A chunk covers trading days in [since, until] only and becomes
available on its last day (`available_from == end`).

Monthly chunk "mkt:<T>:<YYYY-MM>": one line per trading day plus a month summary; its parent is
the quarter chunk "mkt:<T>:<YYYY>-Q<q>": quarter return, high/low, quarter-end signals and the
fundamentals visible at the quarter's last day (nothing filed after it).
"""

from __future__ import annotations

import bisect
import calendar
from collections.abc import Iterator
from datetime import date
from itertools import groupby
from typing import Any

import duckdb
import numpy as np

from fintrade_tui.questions.indicators import LABEL
from fintrade_tui.retrieval.chunks import Chunk
from fintrade_tui.signals.compute import SIGNALS
from fintrade_tui.store.queries import fundamentals_as_of

SOURCE_PATH = "store:prices+signals"
TWO_DECIMALS = {"ma_20", "ema_20", "rsi_14", "rsi_14_wilder"}
MILLIONS = {"obv"}
# (column heading, signal) printed on every daily line
DAILY = [
    ("MA20", "ma_20"),
    ("EMA20", "ema_20"),
    ("RSI14", "rsi_14"),
    ("MACD", "macd"),
    ("MACD_signal", "macd_signal"),
    ("OBV_M", "obv"),
    ("Mom20d", "momentum_20d"),
]
COLUMNS = "date close adj_close volume_M " + " ".join(h for h, _ in DAILY)

_SQL = f"""
WITH p AS (
    SELECT ticker, date, close, adj_close, volume, source,
           lag(date) OVER w AS prev_date, lag(adj_close) OVER w AS prev_adj
    FROM prices
    WHERE ?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], ticker)
    WINDOW w AS (PARTITION BY ticker ORDER BY date)
)
SELECT p.*, {", ".join(f"s.{c}" for c in SIGNALS)}
FROM p LEFT JOIN signals s USING (ticker, date)
WHERE p.date >= ? AND (?::DATE IS NULL OR p.date <= ?::DATE)
ORDER BY p.ticker, p.date
"""

Row = dict[str, Any]


def _missing(x: float | None) -> bool:
    return x is None or x != x


def fmt_price(x: float | None) -> str:
    """2 decimals (prices, moving averages, RSI)."""
    return "NA" if _missing(x) else f"{x:.2f}"


def fmt_ratio(x: float | None) -> str:
    """4 significant digits, never in exponent form."""
    if x is None or _missing(x):
        return "NA"
    return np.format_float_positional(x, precision=4, unique=False, fractional=False, trim="-")


def fmt_millions(x: float | None) -> str:
    return "NA" if x is None or _missing(x) else f"{x / 1e6:.1f}"


def fmt_signal(name: str, x: float | None) -> str:
    if name in TWO_DECIMALS:
        return fmt_price(x)
    if name in MILLIONS:
        return "NA" if _missing(x) else f"{fmt_millions(x)}M"
    return fmt_ratio(x)


def _month(d: date) -> tuple[int, int]:
    return d.year, d.month


def _quarter(d: date) -> tuple[int, int]:
    return d.year, (d.month - 1) // 3 + 1


def _previous(key: tuple[int, int], per_year: int) -> tuple[int, int]:
    y, n = key
    return (y - 1, per_year) if n == 1 else (y, n - 1)


def _return(rows: list[Row], period: Any, per_year: int) -> tuple[float | None, date, float]:
    """(return, base date, base adj close): the base is the previous period's last adj close
    when the store has it, else the chunk's first day."""
    first = rows[0]
    pd_, pa = first["prev_date"], first["prev_adj"]
    if pd_ is not None and period(pd_) == _previous(period(first["date"]), per_year):
        base_date, base = pd_, pa
    else:
        base_date, base = first["date"], first["adj_close"]
    return (rows[-1]["adj_close"] / base - 1 if base else None), base_date, base


def _change(rows: list[Row], period: Any, per_year: int, what: str) -> str:
    ret, base_date, base = _return(rows, period, per_year)
    last = rows[-1]
    hi = max(rows, key=lambda r: r["close"])
    lo = min(rows, key=lambda r: r["close"])
    return (
        f"{what} return {fmt_ratio(ret)} (adj close {base_date} {fmt_price(base)} to "
        f"{last['date']} {fmt_price(last['adj_close'])}); high close {fmt_price(hi['close'])} "
        f"({hi['date']}); low close {fmt_price(lo['close'])} ({lo['date']}); "
        f"{len(rows)} trading days"
    )


def _signals_line(row: Row, what: str) -> str:
    vals = "; ".join(f"{LABEL.get(c, c)} ({c}) {fmt_signal(c, row[c])}" for c in SIGNALS)
    return f"{what} signals {row['date']}: {vals}"


def _sources(rows: list[Row]) -> str:
    return ", ".join(sorted({r["source"] for r in rows}))


def _fundamentals_line(fund: dict[str, Any], end: date, forms: dict[str, str]) -> str:
    parts, missing = [], []
    for name, f in fund.items():
        label = f"{LABEL.get(name, name)} ({name})"
        if not f:
            missing.append(label)
            continue
        period = " ".join(
            x
            for x in (f"FY{f['fiscal_year']}" if f["fiscal_year"] else "", f["fiscal_period"])
            if x
        )
        src = f"{f['source']} {forms.get(f['accession'] or '', '')}".strip()
        info = [src, period or None]
        info.append(f"period end {f['period_end']}" if f["period_end"] else None)
        info.append(f"filed {f['filed']}")
        info.append(f"accession {f['accession']}" if f["accession"] else None)
        info.append("estimated" if f["estimated"] else None)
        parts.append(f"{label} {fmt_ratio(f['value'])} [{', '.join(i for i in info if i)}]")
    out = f"fundamentals as of {end} (filed on or before): " + ("; ".join(parts) or "none")
    return out + (f"\nnot available: {', '.join(missing)}" if missing else "")


def _daily_line(r: Row) -> str:
    # OBV's column heading already says millions, so no "M" suffix here
    vals = [fmt_millions(r[c]) if c in MILLIONS else fmt_signal(c, r[c]) for _, c in DAILY]
    return " ".join(
        [str(r["date"]), fmt_price(r["close"]), fmt_price(r["adj_close"])]
        + [fmt_millions(r["volume"])]
        + vals
    )


def _month_text(t: str, rows: list[Row]) -> str:
    start, end = rows[0]["date"], rows[-1]["date"]
    name = f"{calendar.month_name[start.month]} {start.year}"
    head = (
        f"{t} daily prices and signals, {name} ({start} to {end}); adjusted close; "
        f"source: {_sources(rows)}"
    )
    # the summary comes before the daily lines: the embedding model reads only the first
    # ~380 word pieces of a chunk
    summary = _change(rows, _month, 12, "month") + "; " + _signals_line(rows[-1], "month-end")
    lines = [head, summary, f"columns: {COLUMNS}", *(_daily_line(r) for r in rows)]
    return "\n".join(lines)


def _quarter_text(
    t: str, label: str, rows: list[Row], fund: dict[str, Any], forms: dict[str, str]
) -> str:
    start, end = rows[0]["date"], rows[-1]["date"]
    months = []
    for (y, m), grp in groupby(rows, key=lambda r: _month(r["date"])):
        months.append(f"{y}-{m:02d} {fmt_ratio(_return(list(grp), _month, 12)[0])}")
    return "\n".join(
        [
            f"{t} quarterly indicator summary, {label} ({start} to {end}); adjusted close; "
            f"source: {_sources(rows)}",
            _change(rows, _quarter, 4, "quarter"),
            "monthly returns: " + ", ".join(months),
            _signals_line(rows[-1], "quarter-end"),
            _fundamentals_line(fund, end, forms),
        ]
    )


def _chunk(
    t: str,
    name: str,
    cid: str,
    form: str,
    period: str,
    rows: list[Row],
    text: str,
    parent_id: str,
    parent_text: str,
) -> Chunk:
    start, end = rows[0]["date"], rows[-1]["date"]
    prefix = f"{name} ({t}) market data {period} {start} to {end}"
    return Chunk(
        id=cid,
        track="market",
        ticker=t,
        text=text,
        embed_text=f"{prefix}\n{text}",
        parent_id=parent_id,
        parent_text=parent_text,
        available_from=end,
        form=form,
        period=period,
        period_end=end,
        start=start,
        end=end,
        source_path=SOURCE_PATH,
        char_start=0,
        char_end=len(text),
    )


def priced(con: duckdb.DuckDBPyConnection, tickers: list[str], since: date) -> set[str]:
    """The tickers with a price on or after `since`: those `market_chunks` gives chunks."""
    rows = con.execute(
        "SELECT DISTINCT ticker FROM prices WHERE list_contains(?, ticker) AND date >= ?",
        [[t.strip().upper() for t in tickers], since],
    ).fetchall()
    return {r[0] for r in rows}


def market_chunks(
    con: duckdb.DuckDBPyConnection,
    tickers: list[str] | None = None,
    since: date = date(2023, 1, 1),
    until: date | None = None,
) -> Iterator[Chunk]:
    """Per ticker and calendar quarter: the quarter chunk, then its monthly chunks."""
    wanted = [t.strip().upper() for t in tickers] if tickers is not None else None
    names = dict(con.execute("SELECT ticker, name FROM companies").fetchall())
    forms = dict(con.execute("SELECT accession, form FROM filings").fetchall())
    # fundamentals_as_of(T, D) depends only on the latest available_from <= D, so a quarter
    # reuses the previous call's answer when no new value became available in between
    avail: dict[str, list[date]] = {}
    for t, d in con.execute(
        "SELECT DISTINCT ticker, available_from FROM fundamentals"
        " WHERE value IS NOT NULL AND available_from IS NOT NULL ORDER BY 1, 2"
    ).fetchall():
        avail.setdefault(t, []).append(d)
    cur = con.execute(_SQL, [wanted, wanted, since, until, until])
    cols = [c[0] for c in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    for t, trows in groupby(rows, key=lambda r: r["ticker"]):
        name = names.get(t) or t
        cache: dict[int, dict[str, Any]] = {}
        for (y, q), qgrp in groupby(trows, key=lambda r: _quarter(r["date"])):
            qrows = list(qgrp)
            end = qrows[-1]["date"]
            key = bisect.bisect_right(avail.get(t, []), end)
            if key not in cache:
                cache[key] = fundamentals_as_of(con, t, end)
            qid, qlabel = f"mkt:{t}:{y}-Q{q}", f"{y}-Q{q}"
            qtext = _quarter_text(t, qlabel, qrows, cache[key], forms)
            yield _chunk(t, name, qid, "quarterly", qlabel, qrows, qtext, qid, qtext)
            for (my, m), mgrp in groupby(qrows, key=lambda r: _month(r["date"])):
                mrows = list(mgrp)
                mlabel = f"{my}-{m:02d}"
                mtext = _month_text(t, mrows)
                yield _chunk(
                    t, name, f"mkt:{t}:{mlabel}", "monthly", mlabel, mrows, mtext, qid, qtext
                )
