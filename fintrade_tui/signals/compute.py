"""Signals room: every Table 6 trading signal in DuckDB SQL on the adjusted close.

Formulas follow the paper's `compute_financial_signals.py` (P = adjusted close, r = P/P[t-1] - 1):
  ma_20                  mean of P over the last 20 rows (null before 20 rows)
  ema_20                 EMA with alpha = 2/21, seeded with the first price: e0 = P0
  ema_12, ema_26         the same with alpha = 2/13 and 2/27
  macd                   ema_12 - ema_26
  macd_signal            EMA of macd with alpha = 2/10, seeded with macd0 = 0
  rsi_14                 100 - 100 / (1 + mean(gains, 14) / mean(losses, 14)), simple means
                         (the paper's form; gains/losses of the first row count as 0)
  rsi_14_wilder          Wilder's smoothing: first average = simple mean of gains 1..14, then
                         avg = (13 avg[t-1] + gain) / 14
  obv                    cumulative sign(P - P[t-1]) x volume, starting at 0
  one_day_reversal       r
  max_return_20d         max of r over the last 20 rows
  momentum_5d, _20d      P / P[t-5] - 1, P / P[t-20] - 1
  mean_reversal_60d      P / mean(P, 60) - 1
  short_term_reversal_1m P[t-1] / P[t-22] - 1
  medium_term_momentum   P[t-21] / P[t-252] - 1
  long_term_reversal     P[t-273] / P[t-1260] - 1 (13 to 60 months back, the paper's form)
  drawdown               P / running max(P) - 1
  realized_vol_20d       sample std of r over 20 rows x sqrt(252)

How: one window pass over the prices in (ticker, date) order gives each row its lagged prices
and volumes (22 rows back and the long lags) and the 60-row mean; every short-window signal is
plain column arithmetic over the lags. The recursions (EMAs, Wilder, OBV, running max) are linear
filters y_t = c y_(t-1) + x_t, cut into lanes of LANE rows: a row's value is the weighted sum of
its lane's rows up to it, written out over the lags, plus c^(k+1) times the state at the end of
the lane before. Those lane-end states come from a narrow second path: a GROUP BY gives each
lane's weighted sum, then a closed form over the lanes runs as window sums in blocks of BLOCK
rows. macd_signal comes from three price EMAs through an exact identity (K_12, K_26, K_S). That
lane SQL is written in `lanes.py`; this module owns the table, the rows it reads (a build's
window, a refresh's inputs) and the two statements. The window output keeps (ticker, date)
order, so the insert needs no sort. Refresh is incremental: only days after a ticker's last
signal row are computed, from that row's stored state, by the same SQL with lanes of one row;
the lags of the new rows are read back from the stored rows (60 rows plus the long lags).
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb

from fintrade_tui.signals.lanes import (
    K_12,
    K_26,
    K_S,
    LANE,
    SEEDS,
    SHORT_LAGS,
    WILDER,
    lit,
    signals_sql,
)

SIGNALS = [
    "ma_20",
    "ema_20",
    "macd",
    "macd_signal",
    "rsi_14",
    "rsi_14_wilder",
    "obv",
    "one_day_reversal",
    "max_return_20d",
    "momentum_5d",
    "momentum_20d",
    "mean_reversal_60d",
    "short_term_reversal_1m",
    "medium_term_momentum",
    "long_term_reversal",
    "drawdown",
    "realized_vol_20d",
]
# state kept per row so a refresh can continue the recursions and running aggregates
STATE = ["ema_12", "ema_26", "wilder_gain", "wilder_loss", "run_max"]
HISTORY = 60  # stored rows a refresh re-reads for the windows and short lags (longest: 60)
FAR_LAGS = (252, 273, 1260)  # lags a refresh looks up row by row

# No primary key: its index costs more to build than it saves. A build writes the rows as its
# window emits them, in (ticker, date) order (in a few runs when threads split the work), so a
# ticker's rows sit together and zone maps prune the scan; a refresh appends its rows.
CREATE = f"""
CREATE TABLE IF NOT EXISTS signals (
    ticker VARCHAR, date DATE, i BIGINT, adj_close DOUBLE,
    {", ".join(f"{c} DOUBLE" for c in SIGNALS + STATE)}
)"""


def _lags(col: str, name: str, lags: Iterable[int], default: str = "") -> str:
    return ", ".join(f"lag({col}, {m}{default}) OVER w AS {name}{m}" for m in lags)


def _build_rows(lane: int) -> str:
    # one window over all rows in (ticker, date) order (no partitions: its output keeps the order);
    # i = row number - the ticker's offset, joined before the window so that the window's output
    # feeds the arithmetic directly; lags that reach into the ticker before are masked by i
    return f"""(
    SELECT ticker, date, adj_close AS p, volume, row_number() OVER w - 1 - off AS i, 0 AS fst,
        {_lags("adj_close", "q", SHORT_LAGS, ", 0")}, {_lags("adj_close", "q", FAR_LAGS)},
        {_lags("volume", "v", range(1, lane), ", 0")},
        sum(adj_close) OVER (w ROWS {HISTORY - 1} PRECEDING) / {HISTORY} AS a60
    FROM prices JOIN (
        SELECT ticker, (sum(count(*)) OVER (ORDER BY ticker) - count(*))::BIGINT AS off
        FROM prices GROUP BY ticker
    ) USING (ticker)
    WINDOW w AS (ORDER BY ticker, date)
)"""


_BUILD_CROWS = """(
    SELECT ticker, row_number() OVER w - 1 AS i, adj_close AS p, volume,
        adj_close - lag(adj_close) OVER w AS d, 0 AS fst
    FROM prices WINDOW w AS (PARTITION BY ticker ORDER BY date)
)"""


def build(con: duckdb.DuckDBPyConnection) -> int:
    """(Re)compute all signals from `prices`; returns the row count."""
    con.execute("DROP TABLE IF EXISTS signals")
    con.execute(CREATE)
    seeds = f", (SELECT {', '.join(f'NULL::DOUBLE AS {s}' for s in SEEDS)})"
    con.execute(f"INSERT INTO signals {signals_sql(LANE, _build_rows(LANE), _BUILD_CROWS, seeds)}")
    row = con.execute("SELECT count(*) FROM signals").fetchone()
    assert row is not None  # an aggregate without GROUP BY returns one row
    return int(row[0])


# A refresh: a first statement keeps each ticker's last signal row (i, date) in a temp table; one
# statement then reads `fresh` = the price rows after it, numbered on, `near` = the stored prices
# the new rows read (the last HISTORY rows, the long lags), `starts` = the last row's state, and
# `win` = stored and new rows in (ticker, i) order with their lags (masked by i, as in a build).
# The oldest last date is a constant filter, so the price and state scans skip older vectors.
_LAST = "signals_refresh_last"


def _refresh_inputs(since: object) -> str:
    return f"""
new_prices AS (
    SELECT p.ticker, p.date, p.adj_close AS p, p.volume, l.li,
        row_number() OVER (ORDER BY p.ticker, p.date) AS rn
    FROM prices p JOIN {_LAST} l ON l.ticker = p.ticker AND p.date > l.ld
    WHERE p.date > DATE '{since}'
),
fresh AS (
    SELECT ticker, date, p, volume, li + 1 + rn - rn0 AS i, li + 1 AS fst
    FROM new_prices
    JOIN (SELECT ticker, min(rn) AS rn0 FROM new_prices GROUP BY ticker) USING (ticker)
),
near AS (
    SELECT ticker, i, adj_close AS p FROM signals JOIN (
        SELECT DISTINCT ticker, unnest(range(fst - {HISTORY}, fst)) AS i FROM fresh
        UNION SELECT ticker, i - k FROM fresh, (VALUES {", ".join(f"({k})" for k in FAR_LAGS)}) v(k)
    ) USING (ticker, i)
),
starts AS (
    SELECT s.ticker, s.i + 1 AS fst, ema_12 AS s12, ema_26 AS s26, ema_20 AS s20,
        (macd_signal - {lit(K_12)} * ema_12 - {lit(K_26)} * ema_26) / {lit(K_S)} AS ss,
        wilder_gain AS swg, wilder_loss AS swl, obv AS sobv, run_max AS smx
    FROM signals s JOIN {_LAST} l ON l.ticker = s.ticker AND l.ld = s.date
    WHERE s.date >= DATE '{since}' AND s.ticker IN (SELECT ticker FROM fresh)
),
win AS (
    SELECT ticker, date, p, volume, i, fst, {_lags("p", "q", SHORT_LAGS, ", 0")},
        sum(p) OVER (w ROWS {HISTORY - 1} PRECEDING) / {HISTORY} AS a60
    FROM (SELECT * FROM fresh UNION ALL
          SELECT n.ticker, NULL, n.p, 0, n.i, s.fst FROM near n JOIN starts s USING (ticker)
          WHERE n.i >= s.fst - {HISTORY})
    WINDOW w AS (ORDER BY ticker, i)
),
far AS (
    SELECT f.ticker, f.i, {", ".join(f"max(g.p) FILTER (WHERE k = {k}) AS q{k}" for k in FAR_LAGS)}
    FROM fresh f, (VALUES {", ".join(f"({k})" for k in FAR_LAGS)}) v(k),
        (SELECT ticker, i, p FROM near UNION ALL SELECT ticker, i, p FROM fresh) g
    WHERE g.ticker = f.ticker AND g.i = f.i - k
    GROUP BY ALL
),"""


_REFRESH_ROWS = "(SELECT * FROM win LEFT JOIN far USING (ticker, i))"
_REFRESH_CROWS = f"""(
    SELECT ticker, i, p, volume, fst, CASE WHEN i > 0 THEN p - q1 END AS d FROM win
    WHERE i >= CASE WHEN fst <= {WILDER} THEN 0 ELSE fst END
)"""


def refresh(con: duckdb.DuckDBPyConnection) -> int:
    """Add signals for price days after each ticker's last signal row; returns rows added."""
    con.execute(CREATE)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {_LAST} AS
        SELECT ticker, max(i) AS li, max(date) AS ld FROM signals GROUP BY ticker""")
    try:
        first = con.execute(f"SELECT min(ld) FROM {_LAST}").fetchone()
        assert first is not None  # an aggregate without GROUP BY returns one row
        since = first[0]
        if since is None:
            return 0
        seeds = f"JOIN (SELECT ticker, {', '.join(SEEDS)} FROM starts) USING (ticker)"
        sql = signals_sql(1, _REFRESH_ROWS, _REFRESH_CROWS, seeds, _refresh_inputs(since))
        added = con.execute(f"INSERT INTO signals {sql}").fetchone()
        assert added is not None  # an INSERT returns its row count
        return int(added[0])
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_LAST}")
