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

How: one window pass per ticker gives the row index, the lagged prices and the means of P; a
second gives the 14- and 20-row windows of r and of the gains/losses. The recursions (EMAs,
Wilder, OBV, running max) run as one recursive CTE over lanes of BLOCK rows: every lane of every
ticker advances one row per iteration (BLOCK iterations, not one per row of the longest ticker),
the first lane from the seed, the others from zero, and each lane then adds the carry of the lane
before (closed form, see _RECURSE). macd_signal is computed through an exact identity from three
price EMAs (see _K). Refresh is incremental: only days after a ticker's last signal row are
computed, continuing from that row's stored state; the window and lag inputs of the new rows are
read back from the stored rows (60 rows plus point lookups of the long lags).
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
HISTORY = 60  # stored rows a refresh re-reads for the windows and short lags (longest: 60)
FAR_LAGS = (252, 273, 1260)  # lags a refresh looks up row by row
BLOCK = 1024  # lane length of the recursion

# No primary key: its index costs more to build than it saves; rows are written in
# (ticker, date) order so a ticker's rows sit together and zone maps prune the scan.
CREATE = f"""
CREATE TABLE IF NOT EXISTS signals (
    ticker VARCHAR, date DATE, i BIGINT, adj_close DOUBLE,
    {", ".join(f"{c} DOUBLE" for c in SIGNALS + STATE)}
)"""

# EMA alphas: ema_12, ema_26, ema_20, and the macd signal line (span 9)
A12, A26, A20, AS = 2 / 13, 2 / 27, 2 / 21, 2 / 10
# _K: the signal line is an EMA (alpha AS) of ema_12 - ema_26. An EMA of an EMA is a fixed
# combination of EMAs of the input: EMA_s(EMA_b(x)) = [b(1-s) E_s - s(1-b) E_b] / (b - s), where
# E_s is the EMA of x itself with alpha s (convolve the two geometric kernels). All EMAs start as
# if the series had always been P0, which is exactly e0 = P0 and macd0 = signal0 = 0, so
# macd_signal = K_S es + K_12 ema_12 + K_26 ema_26 with es = the alpha-AS EMA of P (K sum to 0).
# Rounding: |K| sum to 7.3, so the error is a few ulps of P; a refresh recovers es from the stored
# macd_signal with the same identity.
K_12 = -AS * (1 - A12) / (A12 - AS)
K_26 = AS * (1 - A26) / (A26 - AS)
K_S = A12 * (1 - AS) / (A12 - AS) - A26 * (1 - AS) / (A26 - AS)


def _f(x: float) -> str:
    return f"{x!r}::DOUBLE"


# {rows}: ticker, date, i, p, volume, q1, q5, q20, q21, q22, q252, q273, q1260 (q_k = P[t-k]),
# a20, a60 (means of P over 20 / 60 rows), fst (the ticker's first row to compute) and the seeds
# s12, s26, s20, ss, swg, swl, sobv, smx (NULL for a full build). The window signals of r and of
# the gains/losses need r = P/P[t-1] - 1 first, so they take a second window pass.
_FEATURES = """
moves AS (
    SELECT *, p - q1 AS d, p / q1 - 1 AS r,
        coalesce(greatest(p - q1, 0), 0) AS g, coalesce(greatest(q1 - p, 0), 0) AS l
    FROM {rows}
),
feats AS (
    SELECT * EXCLUDE (a20, a60, q1, q5, q20, q21, q22, q252, q273, q1260),
        CASE WHEN i >= 19 THEN a20 END AS ma_20,
        p / q5 - 1 AS momentum_5d, p / q20 - 1 AS momentum_20d,
        CASE WHEN i >= 59 THEN p / a60 - 1 END AS mean_reversal_60d,
        q1 / q22 - 1 AS short_term_reversal_1m, q21 / q252 - 1 AS medium_term_momentum,
        q273 / q1260 - 1 AS long_term_reversal,
        avg(g) OVER w14 AS mg, avg(l) OVER w14 AS ml,
        CASE WHEN i >= 20 THEN max(r) OVER w20 END AS max_return_20d,
        CASE WHEN i >= 20 THEN stddev_samp(r) OVER w20 * sqrt(252) END AS realized_vol_20d
    FROM moves
    WINDOW w14 AS (PARTITION BY ticker ORDER BY i ROWS 13 PRECEDING),
        w20 AS (PARTITION BY ticker ORDER BY i ROWS 19 PRECEDING)
),
"""


def _ema(a: float, x: str, prev: str) -> str:
    return f"{_f(a)} * {x} + {_f(1 - a)} * {prev}"


def _wilder(acc: str, x: str) -> str:
    """Wilder state: the running sum of x up to row 14, its mean at 14, then (13 avg + x) / 14."""
    return f"""CASE WHEN s.i < 14 THEN coalesce({acc}, 0) + {x}
        WHEN s.i = 14 THEN (coalesce({acc}, 0) + {x}) / 14 ELSE (13 * {acc} + {x}) / 14 END"""


def _anchor_ema(a: float, seed: str) -> str:
    return f"""CASE WHEN s.blk > 0 THEN {_f(a)} * s.p WHEN {seed} IS NULL THEN s.p
        ELSE {_ema(a, "s.p", seed)} END"""


# Lanes: k = i - fst, lane blk = k // BLOCK, j = k % BLOCK. Lane 0 starts from the seed (or from
# P0), every other lane from zero, so lane b holds local_{b,j} and the true EMA is
#   e_{b,j} = local_{b,j} + (1-a)^(j+1) carry_b,  carry_b = e at the end of lane b-1
#           = local_{b-1,BLOCK-1} + (1-a)^BLOCK carry_{b-1}.
# (1-a)^BLOCK < 1e-33 for every alpha here (the slowest, 13/14, gives e^-75.9), so the second term
# is far below one ulp and carry_b = local_{b-1,BLOCK-1}, exact in double precision (for b = 1
# that is lane 0's true end). Lanes hold >= 15 rows of the series start, so Wilder's start
# (a sum, then a mean at row 14) happens inside lane 0 and lanes >= 1 are plain linear EMAs.
# OBV and the running max carry the cumulative sum / max of all earlier lanes' ends.
# _CARRIED: columns of the step rows the recursion passes through to the output
_CARRIED = [
    "ticker",
    "date",
    "i",
    "p",
    "r",
    "ma_20",
    "rsi_14",
    "max_return_20d",
    "momentum_5d",
    "momentum_20d",
    "mean_reversal_60d",
    "short_term_reversal_1m",
    "medium_term_momentum",
    "long_term_reversal",
    "realized_vol_20d",
]
_S_CARRIED = ", ".join(f"s.{c}" for c in _CARRIED)
_RECURSE = f"""
step AS (
    SELECT *, (i - fst) // {BLOCK} AS blk, (i - fst) % {BLOCK} AS j,
        sign(coalesce(d, 0)) * volume AS dv,
        CASE WHEN i < 13 OR (mg = 0 AND ml = 0) THEN NULL
             WHEN ml = 0 THEN 100.0 ELSE 100 - 100 / (1 + mg / ml) END AS rsi_14
    FROM feats WHERE i >= fst
),
rec({", ".join(_CARRIED)}, blk, j, e12, e26, e20, es, wg, wl, obv, mx) AS (
    SELECT {_S_CARRIED}, s.blk, s.j, {_anchor_ema(A12, "s.s12")}, {_anchor_ema(A26, "s.s26")},
        {_anchor_ema(A20, "s.s20")}, {_anchor_ema(AS, "s.ss")},
        {_wilder("CASE WHEN s.blk = 0 THEN s.swg ELSE 0 END", "s.g")},
        {_wilder("CASE WHEN s.blk = 0 THEN s.swl ELSE 0 END", "s.l")},
        s.dv + CASE WHEN s.blk = 0 THEN coalesce(s.sobv, 0) ELSE 0 END,
        CASE WHEN s.blk = 0 THEN greatest(s.p, s.smx) ELSE s.p END
    FROM step s WHERE s.j = 0
    UNION ALL
    SELECT {_S_CARRIED}, s.blk, s.j, {_ema(A12, "s.p", "r.e12")}, {_ema(A26, "s.p", "r.e26")},
        {_ema(A20, "s.p", "r.e20")}, {_ema(AS, "s.p", "r.es")},
        {_wilder("r.wg", "s.g")}, {_wilder("r.wl", "s.l")}, r.obv + s.dv, greatest(r.mx, s.p)
    FROM rec r JOIN step s ON s.ticker = r.ticker AND s.blk = r.blk AND s.j = r.j + 1
),
ends AS (
    SELECT ticker, blk + 1 AS blk, e12, e26, e20, es, wg, wl,
        sum(obv) OVER lanes AS obv, max(mx) OVER lanes AS mx
    FROM rec WHERE j = {BLOCK - 1}
    WINDOW lanes AS (PARTITION BY ticker ORDER BY blk)
),
full_rec AS (
    SELECT r.* EXCLUDE (e12, e26, e20, es, wg, wl, obv, mx),
        {
    ", ".join(
        f"r.{c} + coalesce(pow({_f(1 - a)}, r.j + 1) * c.{c}, 0) AS {c}"
        for c, a in (
            ("e12", A12),
            ("e26", A26),
            ("e20", A20),
            ("es", AS),
            ("wg", 1 / 14),
            ("wl", 1 / 14),
        )
    )
},
        r.obv + coalesce(c.obv, 0) AS obv, greatest(r.mx, c.mx) AS mx
    FROM rec r LEFT JOIN ends c USING (ticker, blk)
)
SELECT ticker, date, i, p AS adj_close, ma_20, e20 AS ema_20, e12 - e26 AS macd,
    {_f(K_S)} * es + {_f(K_12)} * e12 + {_f(K_26)} * e26 AS macd_signal, rsi_14,
    CASE WHEN i < 14 OR (wg = 0 AND wl = 0) THEN NULL
         WHEN wl = 0 THEN 100.0 ELSE 100 - 100 / (1 + wg / wl) END AS rsi_14_wilder,
    obv, r AS one_day_reversal, max_return_20d, momentum_5d, momentum_20d, mean_reversal_60d,
    short_term_reversal_1m, medium_term_momentum, long_term_reversal, p / mx - 1 AS drawdown,
    realized_vol_20d, e12 AS ema_12, e26 AS ema_26,
    CASE WHEN i >= 14 THEN wg END AS wilder_gain, CASE WHEN i >= 14 THEN wl END AS wilder_loss,
    mx AS run_max
FROM full_rec
"""


def _lag_cols(col: str, lags: object) -> str:
    return ", ".join(f"lag({col}, {k}) OVER w AS q{k}" for k in lags)


_SHORT = (1, 5, 20, 21, 22)
_NULL_SEEDS = ", ".join(
    f"NULL::DOUBLE AS {c}" for c in ("s12", "s26", "s20", "ss", "swg", "swl", "sobv", "smx")
)
_BUILD_ROWS = f"""(
    SELECT ticker, date, adj_close AS p, volume, row_number() OVER w - 1 AS i, 0 AS fst,
        {_NULL_SEEDS}, {_lag_cols("adj_close", [*_SHORT, *FAR_LAGS])},
        avg(adj_close) OVER (w ROWS 19 PRECEDING) AS a20,
        avg(adj_close) OVER (w ROWS {HISTORY - 1} PRECEDING) AS a60
    FROM prices WINDOW w AS (PARTITION BY ticker ORDER BY date)
)"""


def build(con: duckdb.DuckDBPyConnection) -> int:
    """(Re)compute all signals from `prices`; returns the row count."""
    con.execute("DROP TABLE IF EXISTS signals")
    con.execute(CREATE)
    sql = "WITH RECURSIVE " + _FEATURES.format(rows=_BUILD_ROWS) + _RECURSE
    con.execute(f"INSERT INTO signals {sql} ORDER BY ticker, date")
    return con.execute("SELECT count(*) FROM signals").fetchone()[0]


# A refresh: `starts` = each ticker's last stored row (only tickers with newer prices); `fresh` =
# the new price rows, numbered on from there; the window rows are the last HISTORY stored rows
# plus the new ones, and the long lags are point lookups by (ticker, i).
_STARTS = f"""
CREATE OR REPLACE TEMP TABLE starts AS
SELECT s.ticker, s.date AS last_date, s.i + 1 AS fst, s.ema_12 AS s12, s.ema_26 AS s26,
    s.ema_20 AS s20,
    (s.macd_signal - {_f(K_12)} * s.ema_12 - {_f(K_26)} * s.ema_26) / {_f(K_S)} AS ss,
    s.wilder_gain AS swg, s.wilder_loss AS swl, s.obv AS sobv, s.run_max AS smx
FROM signals s
JOIN (SELECT ticker, max(i) AS i FROM signals GROUP BY ticker) m USING (ticker, i)
WHERE EXISTS (SELECT 1 FROM prices p WHERE p.ticker = s.ticker AND p.date > s.date)
"""
_FRESH = """
CREATE OR REPLACE TEMP TABLE fresh AS
SELECT p.ticker, p.date, p.adj_close AS p, p.volume,
    s.fst - 1 + row_number() OVER (PARTITION BY p.ticker ORDER BY p.date) AS i
FROM prices p JOIN starts s ON s.ticker = p.ticker AND p.date > s.last_date
"""
_REFRESH_ROWS = f"""(
    SELECT w.*, {", ".join(f"x{k}.p AS q{k}" for k in FAR_LAGS)}, s.* EXCLUDE (ticker, last_date)
    FROM (
        SELECT *, {
    _lag_cols("p", _SHORT)
}, avg(p) OVER (w ROWS 19 PRECEDING) AS a20, avg(p) OVER (w ROWS {HISTORY - 1} PRECEDING) AS a60
        FROM (SELECT * FROM fresh
              UNION ALL SELECT ticker, date, p, NULL, i FROM hist WHERE i >= fst - {HISTORY})
        WINDOW w AS (PARTITION BY ticker ORDER BY i)
    ) w
    JOIN starts s USING (ticker)
    {
    " ".join(
        f"LEFT JOIN pts x{k} ON x{k}.ticker = w.ticker AND x{k}.i = w.i - {k}" for k in FAR_LAGS
    )
}
)"""
_HIST = f"""
CREATE OR REPLACE TEMP TABLE hist AS
SELECT g.ticker, g.date, g.adj_close AS p, g.i, t.fst
FROM signals g JOIN starts t USING (ticker) WHERE g.i >= t.fst - {HISTORY}
UNION ALL
SELECT g.ticker, g.date, g.adj_close, g.i, k.fst
FROM signals g JOIN (
    SELECT DISTINCT f.ticker, f.i - v.k AS i, s.fst
    FROM fresh f JOIN starts s USING (ticker), (VALUES {", ".join(f"({k})" for k in FAR_LAGS)}) v(k)
    WHERE f.i - v.k < s.fst - {HISTORY}
) k USING (ticker, i)
"""


def refresh(con: duckdb.DuckDBPyConnection) -> int:
    """Add signals for price days after each ticker's last signal row; returns rows added."""
    con.execute(CREATE)
    con.execute(_STARTS)
    if not con.execute("SELECT count(*) FROM starts").fetchone()[0]:
        return 0
    con.execute(_FRESH)
    con.execute(_HIST)
    # a ticker whose stored rows end before row 14 continues Wilder's running sum of gains
    con.execute(f"""
        UPDATE starts SET swg = coalesce(w.sg, 0), swl = coalesce(w.sl, 0) FROM (
            SELECT ticker, sum(greatest(d, 0)) AS sg, sum(greatest(-d, 0)) AS sl FROM (
                SELECT ticker, p - lag(p) OVER (PARTITION BY ticker ORDER BY i) AS d
                FROM hist WHERE i >= fst - {HISTORY}) GROUP BY ticker
        ) w WHERE starts.ticker = w.ticker AND starts.fst <= 14""")
    con.execute("""CREATE OR REPLACE TEMP TABLE pts AS
        SELECT ticker, i, p FROM fresh UNION ALL SELECT ticker, i, p FROM hist""")
    sql = "WITH RECURSIVE " + _FEATURES.format(rows=_REFRESH_ROWS) + _RECURSE
    n = con.execute(f"INSERT INTO signals {sql} ORDER BY ticker, date").fetchone()[0]
    for t in ("starts", "fresh", "hist", "pts"):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    return n
