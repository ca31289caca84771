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

The EMA recursions run as one recursive CTE carrying every accumulator. Refresh is incremental:
only days after a ticker's last signal row are computed, seeded from that row's stored state.
"""

from __future__ import annotations

import duckdb

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
LOOKBACK = 1265  # rows of history a refresh re-reads: the longest lag (1260) and then some

# No primary key: its index costs more to build than it saves; rows are written in
# (ticker, date) order so a ticker's rows sit together and zone maps prune the scan.
CREATE = f"""
CREATE TABLE IF NOT EXISTS signals (
    ticker VARCHAR, date DATE, i BIGINT, adj_close DOUBLE,
    {", ".join(f"{c} DOUBLE" for c in SIGNALS + STATE)}
)"""

# {scope} restricts the rows read (a refresh re-reads LOOKBACK rows before its first new day);
# {seed} gives each ticker's starting state. `i` is the row's index in the ticker's full series.
_SQL = """
WITH RECURSIVE base AS (
    SELECT p.ticker, p.date, p.adj_close AS p, p.volume,
           row_number() OVER w - 1 + coalesce(s.i_start, 0) AS i,
           p.adj_close - lag(p.adj_close) OVER w AS d,
           p.adj_close / lag(p.adj_close) OVER w - 1 AS r
    FROM prices p {scope}
    WINDOW w AS (PARTITION BY p.ticker ORDER BY p.date)
),
gl AS (
    SELECT *, greatest(coalesce(d, 0), 0) AS g, greatest(-coalesce(d, 0), 0) AS l FROM base
),
win AS (
    SELECT ticker, date, i, p, volume, d, r, g, l,
        CASE WHEN i >= 19 THEN avg(p) OVER w20 END AS ma_20,
        avg(g) OVER w14 AS mg, avg(l) OVER w14 AS ml,
        CASE WHEN i >= 20 THEN max(r) OVER w20 END AS max_return_20d,
        p / lag(p, 5) OVER w - 1 AS momentum_5d,
        p / lag(p, 20) OVER w - 1 AS momentum_20d,
        CASE WHEN i >= 59 THEN p / avg(p) OVER w60 - 1 END AS mean_reversal_60d,
        lag(p, 1) OVER w / lag(p, 22) OVER w - 1 AS short_term_reversal_1m,
        lag(p, 21) OVER w / lag(p, 252) OVER w - 1 AS medium_term_momentum,
        lag(p, 273) OVER w / lag(p, 1260) OVER w - 1 AS long_term_reversal,
        CASE WHEN i >= 20 THEN stddev_samp(r) OVER w20 * sqrt(252) END AS realized_vol_20d
    FROM gl
    WINDOW w AS (PARTITION BY ticker ORDER BY date),
        w14 AS (PARTITION BY ticker ORDER BY date ROWS 13 PRECEDING),
        w20 AS (PARTITION BY ticker ORDER BY date ROWS 19 PRECEDING),
        w60 AS (PARTITION BY ticker ORDER BY date ROWS 59 PRECEDING)
),
step AS (SELECT ticker, i, p, g, l, mg, ml, sign(coalesce(d, 0)) * volume AS dv FROM win),
-- every accumulator in one recursion: EMAs, MACD signal, Wilder averages, OBV, running max
rec(ticker, i, e12, e26, e20, sig, wg, wl, obv, run_max) AS (
    {seed}
    UNION ALL
    SELECT w.ticker, w.i,
        (2/13) * w.p + (11/13) * rec.e12,
        (2/27) * w.p + (25/27) * rec.e26,
        (2/21) * w.p + (19/21) * rec.e20,
        0.2 * ((2/13) * w.p + (11/13) * rec.e12 - (2/27) * w.p - (25/27) * rec.e26)
            + 0.8 * rec.sig,
        CASE WHEN w.i < 14 THEN NULL WHEN w.i = 14 THEN w.mg ELSE (13 * rec.wg + w.g) / 14 END,
        CASE WHEN w.i < 14 THEN NULL WHEN w.i = 14 THEN w.ml ELSE (13 * rec.wl + w.l) / 14 END,
        rec.obv + w.dv,
        greatest(rec.run_max, w.p)
    FROM rec JOIN step w ON w.ticker = rec.ticker AND w.i = rec.i + 1
)
SELECT w.ticker, w.date, w.i, w.p AS adj_close,
    w.ma_20,
    rec.e20 AS ema_20,
    rec.e12 - rec.e26 AS macd,
    rec.sig AS macd_signal,
    CASE WHEN w.i < 13 OR (w.mg = 0 AND w.ml = 0) THEN NULL
         WHEN w.ml = 0 THEN 100.0 ELSE 100 - 100 / (1 + w.mg / w.ml) END AS rsi_14,
    CASE WHEN rec.wg IS NULL OR (rec.wg = 0 AND rec.wl = 0) THEN NULL
         WHEN rec.wl = 0 THEN 100.0 ELSE 100 - 100 / (1 + rec.wg / rec.wl) END AS rsi_14_wilder,
    rec.obv,
    w.r AS one_day_reversal,
    w.max_return_20d, w.momentum_5d, w.momentum_20d, w.mean_reversal_60d,
    w.short_term_reversal_1m, w.medium_term_momentum, w.long_term_reversal,
    w.p / rec.run_max - 1 AS drawdown,
    w.realized_vol_20d,
    rec.e12 AS ema_12, rec.e26 AS ema_26, rec.wg AS wilder_gain, rec.wl AS wilder_loss,
    rec.run_max
FROM win w JOIN rec USING (ticker, i)
WHERE w.i >= {first_new}
ORDER BY w.ticker, w.date
"""

_FULL_SEED = """SELECT ticker, i, p::DOUBLE, p::DOUBLE, p::DOUBLE, 0.0::DOUBLE, NULL::DOUBLE,
    NULL::DOUBLE, 0.0::DOUBLE, p::DOUBLE FROM win WHERE i = 0"""
# a refresh seeds from the last stored row
_INCR_SEED = """SELECT s.ticker, s.last_i, s.ema_12, s.ema_26, s.ema_20, s.macd_signal,
    s.wilder_gain, s.wilder_loss, s.obv, s.run_max FROM starts s"""


def build(con: duckdb.DuckDBPyConnection) -> int:
    """(Re)compute all signals from `prices`; returns the row count."""
    con.execute("DROP TABLE IF EXISTS signals")
    con.execute(CREATE)
    sql = _SQL.format(
        scope="LEFT JOIN (SELECT NULL::BIGINT AS i_start) s ON FALSE", seed=_FULL_SEED, first_new=0
    )
    con.execute(f"INSERT INTO signals {sql}")
    return con.execute("SELECT count(*) FROM signals").fetchone()[0]


def refresh(con: duckdb.DuckDBPyConnection) -> int:
    """Add signals for price days after each ticker's last signal row; returns rows added."""
    con.execute(CREATE)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE starts AS
        WITH last AS (
            SELECT * FROM signals
            QUALIFY row_number() OVER (PARTITION BY ticker ORDER BY date DESC) = 1
        )
        SELECT l.*, l.i AS last_i, greatest(l.i - {LOOKBACK}, 0) AS i_start,
            (SELECT min(g.date) FROM signals g
             WHERE g.ticker = l.ticker AND g.i >= greatest(l.i - {LOOKBACK}, 0)) AS read_from
        FROM last l
        WHERE EXISTS (SELECT 1 FROM prices p WHERE p.ticker = l.ticker AND p.date > l.date)
    """)
    if not con.execute("SELECT count(*) FROM starts").fetchone()[0]:
        return 0
    scope = "JOIN starts s ON s.ticker = p.ticker AND p.date >= s.read_from"
    sql = _SQL.format(
        scope=scope,
        seed=_INCR_SEED,
        first_new="(SELECT last_i + 1 FROM starts WHERE starts.ticker = w.ticker)",
    )
    before = con.execute("SELECT count(*) FROM signals").fetchone()[0]
    con.execute(f"INSERT INTO signals {sql}")
    return con.execute("SELECT count(*) FROM signals").fetchone()[0] - before
