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
lane's weighted sum, then a closed form over the lanes (see _lane_states) runs as window sums in
blocks of BLOCK rows. macd_signal comes from three price EMAs through an exact identity (see
_K). The window output keeps (ticker, date) order, so the insert needs no sort. Refresh is
incremental: only days after a ticker's last signal row are computed, from that row's stored
state, by the same SQL with lanes of one row; the lags of the new rows are read back from the
stored rows (60 rows plus the long lags).
"""

from __future__ import annotations

from collections.abc import Iterable

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
LANE = 8  # rows per lane of a full build
BLOCK = 1024  # rows per block of the closed form over lane ends
WILDER = 14  # the row of Wilder's first average; a lane starts there

# No primary key: its index costs more to build than it saves. A build writes the rows as its
# window emits them, in (ticker, date) order (in a few runs when threads split the work), so a
# ticker's rows sit together and zone maps prune the scan; a refresh appends its rows.
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
    return f"{x:.17e}"  # exact to the last bit; the exponent form binds as a DOUBLE, no cast


# The filters (c): EMAs x = alpha P; Wilder x = gain / 14 (loss / 14) from row 14 on, its start
# (row 14 = the mean of gains 1..14) being the same filter from a virtual state y_13 = (sum of
# gains 1..13) / 13. Seeds: the state before the first row computed (NULL in a full build, where
# an EMA starts from P0 as if P had always been P0, and Wilder from 0).
_FILTERS = dict(e12=1 - A12, e26=1 - A26, e20=1 - A20, es=1 - AS, wg=13 / 14, wl=13 / 14)
_EMAS = {"e12": A12, "e26": A26, "e20": A20, "es": AS}
_SEED = {"e12": "s12", "e26": "s26", "e20": "s20", "es": "ss", "wg": "swg", "wl": "swl"}
_SEEDS = (*_SEED.values(), "sobv", "smx")
_SHORT = range(1, 23)  # short lags of P: the 20-row windows of r and the momentum lags
_R20 = [f"r{m}" for m in range(20)]
_Q = ["p", *(f"q{m}" for m in _SHORT)]  # _Q[m] = P[t-m]
_V = ["volume", *(f"v{m}" for m in range(1, LANE))]  # _V[m] = volume[t-m]


def _sum(terms: Iterable[str]) -> str:
    return "(" + " + ".join(terms) + ")"


def _cols(cols: Iterable[str]) -> str:
    return ",\n        ".join(cols)


def _lane(x: str, lane: int) -> str:
    """The lane of row x: lane b holds rows 14 + lane*b .. 13 + lane*(b+1) (b < 0 before 14)."""
    off = -WILDER % lane
    return f"({x} + {off}) // {lane} - {(WILDER + off) // lane}"


def _pos(lane: int) -> str:
    return f"(i + {-WILDER % lane}) % {lane}"  # a row's position in its lane


def _rows(lane: int) -> str:
    """Per row, the window signals and each filter's sum over its lane (CTE `local`).

    {rows}: ticker, date, i, p, volume, fst (the ticker's first row to compute), q1..q22, q252,
    q273, q1260 (q_m = P[t-m]; before the ticker's first row any finite value, for m <= 22 never
    NULL: the masks multiply), v1.. (lagged volumes, likewise) and a60 (mean of P over 60 rows).
    k = rows since the lane's start or fst: z_m = P[t-m] and dm_m = P[t-m] - P[t-m-1] are masked
    to 0 for m > k (dm also at row 0, whose change counts as 0), so a filter's lane sum is
    sum_(m<=k) c^m x_(t-m). r_m = P[t-m] / P[t-m-1] = 1 + return.
    """
    ms = range(1, lane)
    moves = [
        *(f"{_Q[m]} / q{m + 1} AS r{m}" for m in range(20)),
        f"{_sum(f'abs({_Q[m]} - q{m + 1})' for m in range(WILDER - 1))} + abs(q13 - q14n) AS sad",
        "p - q14n AS tel",  # the sum of the 14 changes: mean gain = (sad + tel) / 28
        *(f"q{m} * (k >= {m})::DOUBLE AS z{m}" for m in ms),
        *(f"({_Q[m]} - q{m + 1}) * (kd >= {m})::DOUBLE AS dm{m}" for m in range(lane)),
        f"{_sum(_Q[m] for m in range(20))} / 20 AS a20",
    ]
    w = [_f((13 / 14) ** m) for m in range(lane)]
    local = [
        "CASE WHEN i >= 1 THEN r0 - 1 END AS one_day_reversal",
        "CASE WHEN i >= 19 THEN a20 END AS ma_20",
        "CASE WHEN i >= 5 THEN p / q5 - 1 END AS momentum_5d",
        "CASE WHEN i >= 20 THEN p / q20 - 1 END AS momentum_20d",
        "CASE WHEN i >= 59 THEN p / a60 - 1 END AS mean_reversal_60d",
        "CASE WHEN i >= 22 THEN q1 / q22 - 1 END AS short_term_reversal_1m",
        "CASE WHEN i >= 252 THEN q21 / q252 - 1 END AS medium_term_momentum",
        "CASE WHEN i >= 1260 THEN q273 / q1260 - 1 END AS long_term_reversal",
        f"CASE WHEN i >= 20 THEN greatest({', '.join(_R20)}) - 1 END AS max_return_20d",
        f"CASE WHEN i >= 20 THEN sqrt({_sum(f'({x} - m20) * ({x} - m20)' for x in _R20)} / 19)"
        " * sqrt(252) END AS realized_vol_20d",
        """CASE WHEN i < 13 OR sad = 0 THEN NULL WHEN sad = tel THEN 100.0
             ELSE 100 - 100 / (1 + (sad + tel) / (sad - tel)) END AS rsi_14""",
        *(
            f"{_f(a)} * {_sum(['p', *(f'{_f(_FILTERS[c] ** m)} * z{m}' for m in ms)])} AS {c}"
            for c, a in _EMAS.items()
        ),
        "(ad + dd) / 28 AS wg",  # gains: (|d| + d) / 2, losses: (|d| - d) / 2
        "(ad - dd) / 28 AS wl",
        f"{_sum(f'sign(dm{m}) * {_V[m]}' for m in range(lane))} AS obv",
        f"greatest({', '.join(['p', *(f'z{m}' for m in ms)])}) AS mx",
    ]
    return f"""
moves AS (
    SELECT ticker, date, i, p, q1, q5, q20, q21, q22, q252, q273, q1260, a60, k,
        {_lane("i", lane)} AS b, {", ".join(_V[m] for m in range(lane))},
        {_cols(moves)}
    FROM (SELECT *, least({_pos(lane)}, i - fst) AS k, least({_pos(lane)}, i - fst, i - 1) AS kd,
            CASE WHEN i >= 14 THEN q14 ELSE q13 END AS q14n FROM {{rows}})
    WHERE i >= fst
),
local AS (
    SELECT ticker, date, i, p, b, k,
        {_cols(local)}
    FROM (
        SELECT *, {_sum(_R20)} / 20 AS m20,
            {_sum(f"{w[m]} * abs(dm{m})" for m in range(lane))} AS ad,
            {_sum(f"{w[m]} * dm{m}" for m in range(lane))} AS dd
        FROM moves
    )
)"""


def _lane_states(lane: int) -> str:
    """Per lane, the state before it (CTE `carry`): y_<filter>, y_obv, y_mx, and the seeds s_.

    {crows}: ticker, i, p, volume, d = P - P[t-1] (NULL at row 0) and fst, from row 0 while
    Wilder's start is ahead, else from fst; {seeds} joins s12, s26, s20, ss, swg, swl, sobv,
    smx (the state at row fst - 1) USING (ticker). lane_sums: x = the sum over a lane's rows from
    fst of c^(lane end - row) x_row (Wilder's rows before 14 weighted so that the state at row 13
    is the sum of gains 1..13 / 13); the seed enters at fst's lane bs. Then Y_b = x_b + Q Y_(b-1)
    with Q = c^lane: in blocks of BLOCK rows, Y_b = Q^r (running sum of Q^-r x) plus Q^(r+1)
    times the end of the block before, which is its own running sum at the end because
    Q^(BLOCK/lane) = c^BLOCK < 1e-33 for every c here (the slowest, 13/14, gives e^-75.9): far
    below one ulp. Q^-r <= c^-BLOCK ~ 1e99 stays far inside double range; x >= 0 (prices, gains,
    losses), so the running sums do not cancel.
    """
    nl = BLOCK // lane

    def agg(f: str, x: str) -> str:  # lanes of one row (a refresh): no GROUP BY, no weights
        return x if lane == 1 else f"{f}({x})"

    w = {c: "1" if lane == 1 else f"w_{c}" for c in _FILTERS}
    weights = ", ".join(f"pow({_f(c)}, {lane - 1} - range) AS w_{n}" for n, c in _FILTERS.items())
    pre14 = f"CASE WHEN i < {WILDER} THEN {_f(14 / 13)} * pow({_f(13 / 14)}, i - 13) ELSE 1 END"
    sums = [
        f"{agg('any_value', 'fst')} AS fst, {agg('sum', '(i >= fst)::INT')} AS n",
        f"{agg('max', 'CASE WHEN i = fst THEN p END')} AS p0",
        *(
            f"{agg('sum', f'p * {w[c]} * (i >= fst)::DOUBLE')} * {_f(a)} AS x_{c}"
            for c, a in _EMAS.items()
        ),
        *(
            f"{agg('sum', f'coalesce(greatest({sg}d, 0), 0) * {w[c]} * {pre14}')} / 14 AS x_{c}"
            for c, sg in (("wg", ""), ("wl", "-"))
        ),
        f"{agg('sum', 'CASE WHEN i >= fst THEN sign(d) * volume END')} AS o",
        f"{agg('max', 'CASE WHEN i >= fst THEN p END')} AS mx",
    ]
    src = "{crows}"
    if lane > 1:
        src += f" JOIN (SELECT range AS pos, {weights} FROM range({lane})) ON pos = {_pos(lane)}"
        src += "\n    GROUP BY ticker, b"
    u = (
        f"(x_{c} + CASE WHEN b = bs THEN pow({_f(q)}, n) * coalesce(s_{c}, 0) ELSE 0 END)"
        f" * pow({_f(q**-lane)}, r) AS u_{c}"
        for c, q in _FILTERS.items()
    )
    y = (
        f"pow({_f(q**lane)}, r - 1) * (coalesce(sum(u_{c}) OVER prev, 0)"
        f" + {_f(q**BLOCK)} * coalesce(t_{c}, 0)) AS y_{c}"
        for c, q in _FILTERS.items()
    )
    return f"""
lane_sums AS (
    SELECT ticker, {_lane("i", lane)} AS b, {_cols(sums)}
    FROM {src}
),
lanes AS (
    SELECT *, {_cols(u)}
    FROM (
        SELECT *, (b - bf) // {nl} AS blk, (b - bf) % {nl} AS r,
            {", ".join(f"coalesce({_SEED[c]}, p0) AS s_{c}" for c in _EMAS)},
            swg AS s_wg, swl AS s_wl
        FROM (
            SELECT *, {_lane(f"CASE WHEN fst <= {WILDER} THEN 0 ELSE fst END", lane)} AS bf,
                {_lane("fst", lane)} AS bs
            FROM lane_sums {{seeds}}
        )
    )
),
block_ends AS (
    SELECT ticker, blk + 1 AS blk, {", ".join(f"sum(u_{c}) AS t_{c}" for c in _FILTERS)}
    FROM lanes GROUP BY ticker, blk
),
carry AS (
    SELECT ticker, b, {_cols(y)}, {", ".join(f"s_{c}" for c in _FILTERS)}, bs,
        coalesce(sobv, 0) + coalesce(sum(o) OVER before, 0) AS y_obv,
        greatest(smx, max(mx) OVER before) AS y_mx
    FROM lanes LEFT JOIN block_ends USING (ticker, blk)
    WINDOW prev AS (ORDER BY ticker, b ROWS BETWEEN r PRECEDING AND 1 PRECEDING),
        before AS (ORDER BY ticker, b ROWS BETWEEN b - bf PRECEDING AND 1 PRECEDING)
)"""


def _out(lane: int) -> str:
    """The signals rows: each filter = its lane sum + c^(k+1) x the state before the lane."""
    y = (f"CASE WHEN b = bs THEN coalesce(s_{c}, y_{c}) ELSE y_{c} END AS y_{c}" for c in _FILTERS)
    powers = ", ".join(f"pow({_f(q)}, range + 1) AS pk_{c}" for c, q in _FILTERS.items())
    pk = {c: _f(q) if lane == 1 else f"pk_{c}" for c, q in _FILTERS.items()}  # k = 0 at lane 1
    full = ", ".join(f"{c} + {pk[c]} * y_{c} AS {c}" for c in _FILTERS)
    join_k = "" if lane == 1 else f"JOIN (SELECT range AS k, {powers} FROM range({lane})) USING (k)"
    return f"""
states AS (
    SELECT l.* REPLACE ({full}, obv + y_obv AS obv, greatest(mx, y_mx) AS mx)
    FROM local l
    JOIN (SELECT ticker, b, y_obv, y_mx, {", ".join(y)} FROM carry) USING (ticker, b) {join_k}
)
SELECT ticker, date, i, p AS adj_close, ma_20, e20 AS ema_20, e12 - e26 AS macd,
    {_f(K_S)} * es + {_f(K_12)} * e12 + {_f(K_26)} * e26 AS macd_signal, rsi_14,
    CASE WHEN i < 14 OR (wg = 0 AND wl = 0) THEN NULL
         WHEN wl = 0 THEN 100.0 ELSE 100 - 100 / (1 + wg / wl) END AS rsi_14_wilder,
    obv, one_day_reversal, max_return_20d, momentum_5d, momentum_20d, mean_reversal_60d,
    short_term_reversal_1m, medium_term_momentum, long_term_reversal, p / mx - 1 AS drawdown,
    realized_vol_20d, e12 AS ema_12, e26 AS ema_26,
    CASE WHEN i >= 14 THEN wg END AS wilder_gain, CASE WHEN i >= 14 THEN wl END AS wilder_loss,
    mx AS run_max
FROM states"""


def _sql(lane: int, rows: str, crows: str, seeds: str, inputs: str = "") -> str:
    parts = [_rows(lane).format(rows=rows), _lane_states(lane).format(crows=crows, seeds=seeds)]
    return f"WITH {inputs}{','.join(parts)},{_out(lane)}"


def _lags(col: str, name: str, lags: Iterable[int], default: str = "") -> str:
    return ", ".join(f"lag({col}, {m}{default}) OVER w AS {name}{m}" for m in lags)


def _build_rows(lane: int) -> str:
    # one window over all rows in (ticker, date) order (no partitions: its output keeps the order);
    # i = row number - the ticker's offset, joined before the window so that the window's output
    # feeds the arithmetic directly; lags that reach into the ticker before are masked by i
    return f"""(
    SELECT ticker, date, adj_close AS p, volume, row_number() OVER w - 1 - off AS i, 0 AS fst,
        {_lags("adj_close", "q", _SHORT, ", 0")}, {_lags("adj_close", "q", FAR_LAGS)},
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
    seeds = f", (SELECT {', '.join(f'NULL::DOUBLE AS {s}' for s in _SEEDS)})"
    con.execute(f"INSERT INTO signals {_sql(LANE, _build_rows(LANE), _BUILD_CROWS, seeds)}")
    return con.execute("SELECT count(*) FROM signals").fetchone()[0]


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
        (macd_signal - {_f(K_12)} * ema_12 - {_f(K_26)} * ema_26) / {_f(K_S)} AS ss,
        wilder_gain AS swg, wilder_loss AS swl, obv AS sobv, run_max AS smx
    FROM signals s JOIN {_LAST} l ON l.ticker = s.ticker AND l.ld = s.date
    WHERE s.date >= DATE '{since}' AND s.ticker IN (SELECT ticker FROM fresh)
),
win AS (
    SELECT ticker, date, p, volume, i, fst, {_lags("p", "q", _SHORT, ", 0")},
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
        since = con.execute(f"SELECT min(ld) FROM {_LAST}").fetchone()[0]
        if since is None:
            return 0
        seeds = f"JOIN (SELECT ticker, {', '.join(_SEEDS)} FROM starts) USING (ticker)"
        sql = _sql(1, _REFRESH_ROWS, _REFRESH_CROWS, seeds, _refresh_inputs(since))
        return con.execute(f"INSERT INTO signals {sql}").fetchone()[0]
    finally:
        con.execute(f"DROP TABLE IF EXISTS {_LAST}")
