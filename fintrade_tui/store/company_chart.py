"""Company-chart room: the daily series the Company screen charts around a quarter — adjusted
close, MA/EMA 20, volume, OBV, MACD and signal, RSI 14 — over the quarter and ~2 months before
it by default; never a day after `as_of`. All SQL is parameterized."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import duckdb

from fintrade_tui.store.company import DEFAULT_LAG, find_quarter, quarters
from fintrade_tui.store.queries import check_ticker

CHART_FIELDS = [
    "adj_close", "ma_20", "ema_20", "volume", "obv", "macd", "macd_signal", "rsi_14",
]  # fmt: skip
LEAD_DAYS = 152  # a default chart starts this long before the quarter end: the quarter + ~2 months


def chart_window(q: dict[str, Any]) -> tuple[date, date, date]:
    """(start, end, as_of) of a quarter's default chart: the quarter and ~2 months before it,
    up to its period end, never past its `as_of`."""
    end = min(q["period_end"], q["as_of"])
    return q["period_end"] - timedelta(days=LEAD_DAYS), end, q["as_of"]


def chart_series(
    con: duckdb.DuckDBPyConnection,
    ticker: str,
    start: date | None = None,
    end: date | None = None,
    *,
    as_of: date | None = None,
    quarter: str | date | None = None,
    lag_days: int = DEFAULT_LAG,
) -> dict[str, Any]:
    """Daily series for the charts: dates, adj_close, ma_20, ema_20, volume, obv, macd,
    macd_signal, rsi_14 (lists, None where a signal is undefined).

    With `quarter` (a key, date or None for the latest), `start`/`end` default to the
    quarter plus ~2 months before it (`LEAD_DAYS`) and `as_of` to the quarter's. No row after
    `as_of` is ever returned, whatever `end` says.
    """
    t = check_ticker(con, ticker)
    period_end = None
    if quarter is not None or start is None or end is None:
        qs = quarters(con, t, lag_days)
        if qs:
            q = qs[find_quarter(qs, quarter)]
            period_end = q["period_end"]
            q_start, q_end, q_as_of = chart_window(q)
            start, end, as_of = start or q_start, end or q_end, as_of or q_as_of
    if as_of is not None:
        end = min(end, as_of) if end else as_of
    rows = con.execute(
        """SELECT s.date, s.adj_close, s.ma_20, s.ema_20, p.volume, s.obv, s.macd,
                  s.macd_signal, s.rsi_14
        FROM signals s JOIN prices p ON p.ticker = s.ticker AND p.date = s.date
        WHERE s.ticker = ? AND (? IS NULL OR s.date >= ?) AND (? IS NULL OR s.date <= ?)
        ORDER BY s.date""",
        [t, start, start, end, end],
    ).fetchall()
    cols = list(zip(*rows, strict=True)) if rows else [()] * (1 + len(CHART_FIELDS))
    out: dict[str, Any] = {
        "ticker": t,
        "start": start,
        "end": end,
        "as_of": as_of,
        "period_end": period_end,
        "dates": list(cols[0]),
    }
    for name, values in zip(CHART_FIELDS, cols[1:], strict=True):
        out[name] = [None if v is None or v != v else float(v) for v in values]
    return out
