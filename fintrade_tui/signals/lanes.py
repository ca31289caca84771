"""Signals room, the lane SQL: the recursive signals (EMAs, Wilder, OBV, running max) as
linear filters y_t = c y_(t-1) + x_t, written out over the lags of a lane of rows.

`compute.py` owns the table and feeds this SQL its rows: a full build with lanes of LANE rows,
a refresh with lanes of one row from each ticker's stored state. This module only writes the
query text (one CTE chain per lane length); it never touches a connection. How the lanes and
the closed form over their ends work is in `compute.py`'s docstring and `_lane_states` below.
"""

from __future__ import annotations

from collections.abc import Iterable

LANE = 8  # rows per lane of a full build
BLOCK = 1024  # rows per block of the closed form over lane ends
WILDER = 14  # the row of Wilder's first average; a lane starts there

# EMA alphas: ema_12, ema_26, ema_20, and the macd signal line (span 9)
A12, A26, A20, AS = 2 / 13, 2 / 27, 2 / 21, 2 / 10
# K_12, K_26, K_S: the signal line is an EMA (alpha AS) of ema_12 - ema_26. An EMA of an EMA is a
# fixed combination of EMAs of the input: EMA_s(EMA_b(x)) = [b(1-s) E_s - s(1-b) E_b] / (b - s),
# where E_s is the EMA of x itself with alpha s (convolve the two geometric kernels). All EMAs start
# as if the series had always been P0, which is exactly e0 = P0 and macd0 = signal0 = 0, so
# macd_signal = K_S es + K_12 ema_12 + K_26 ema_26 with es = the alpha-AS EMA of P (K sum to 0).
# Rounding: |K| sum to 7.3, so the error is a few ulps of P; a refresh recovers es from the stored
# macd_signal with the same identity.
K_12 = -AS * (1 - A12) / (A12 - AS)
K_26 = AS * (1 - A26) / (A26 - AS)
K_S = A12 * (1 - AS) / (A12 - AS) - A26 * (1 - AS) / (A26 - AS)


def lit(x: float) -> str:
    """A float as an SQL literal (compute.py writes its constants with it too)."""
    return f"{x:.17e}"  # exact to the last bit; the exponent form binds as a DOUBLE, no cast


# The filters (c): EMAs x = alpha P; Wilder x = gain / 14 (loss / 14) from row 14 on, its start
# (row 14 = the mean of gains 1..14) being the same filter from a virtual state y_13 = (sum of
# gains 1..13) / 13. Seeds: the state before the first row computed (NULL in a full build, where
# an EMA starts from P0 as if P had always been P0, and Wilder from 0).
_FILTERS = dict(e12=1 - A12, e26=1 - A26, e20=1 - A20, es=1 - AS, wg=13 / 14, wl=13 / 14)
_EMAS = {"e12": A12, "e26": A26, "e20": A20, "es": AS}
_SEED = {"e12": "s12", "e26": "s26", "e20": "s20", "es": "ss", "wg": "swg", "wl": "swl"}
# the seed columns a caller's {seeds} join supplies: NULLs in a build, the stored state in a refresh
SEEDS = (*_SEED.values(), "sobv", "smx")
SHORT_LAGS = range(1, 23)  # short lags of P: the 20-row windows of r and the momentum lags
_R20 = [f"r{m}" for m in range(20)]
_Q = ["p", *(f"q{m}" for m in SHORT_LAGS)]  # _Q[m] = P[t-m]
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
    w = [lit((13 / 14) ** m) for m in range(lane)]
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
            f"{lit(a)} * {_sum(['p', *(f'{lit(_FILTERS[c] ** m)} * z{m}' for m in ms)])} AS {c}"
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
    weights = ", ".join(f"pow({lit(c)}, {lane - 1} - range) AS w_{n}" for n, c in _FILTERS.items())
    pre14 = f"CASE WHEN i < {WILDER} THEN {lit(14 / 13)} * pow({lit(13 / 14)}, i - 13) ELSE 1 END"
    sums = [
        f"{agg('any_value', 'fst')} AS fst, {agg('sum', '(i >= fst)::INT')} AS n",
        f"{agg('max', 'CASE WHEN i = fst THEN p END')} AS p0",
        *(
            f"{agg('sum', f'p * {w[c]} * (i >= fst)::DOUBLE')} * {lit(a)} AS x_{c}"
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
        f"(x_{c} + CASE WHEN b = bs THEN pow({lit(q)}, n) * coalesce(s_{c}, 0) ELSE 0 END)"
        f" * pow({lit(q**-lane)}, r) AS u_{c}"
        for c, q in _FILTERS.items()
    )
    y = (
        f"pow({lit(q**lane)}, r - 1) * (coalesce(sum(u_{c}) OVER prev, 0)"
        f" + {lit(q**BLOCK)} * coalesce(t_{c}, 0)) AS y_{c}"
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
    powers = ", ".join(f"pow({lit(q)}, range + 1) AS pk_{c}" for c, q in _FILTERS.items())
    pk = {c: lit(q) if lane == 1 else f"pk_{c}" for c, q in _FILTERS.items()}  # k = 0 at lane 1
    full = ", ".join(f"{c} + {pk[c]} * y_{c} AS {c}" for c in _FILTERS)
    join_k = "" if lane == 1 else f"JOIN (SELECT range AS k, {powers} FROM range({lane})) USING (k)"
    return f"""
states AS (
    SELECT l.* REPLACE ({full}, obv + y_obv AS obv, greatest(mx, y_mx) AS mx)
    FROM local l
    JOIN (SELECT ticker, b, y_obv, y_mx, {", ".join(y)} FROM carry) USING (ticker, b) {join_k}
)
SELECT ticker, date, i, p AS adj_close, ma_20, e20 AS ema_20, e12 - e26 AS macd,
    {lit(K_S)} * es + {lit(K_12)} * e12 + {lit(K_26)} * e26 AS macd_signal, rsi_14,
    CASE WHEN i < 14 OR (wg = 0 AND wl = 0) THEN NULL
         WHEN wl = 0 THEN 100.0 ELSE 100 - 100 / (1 + wg / wl) END AS rsi_14_wilder,
    obv, one_day_reversal, max_return_20d, momentum_5d, momentum_20d, mean_reversal_60d,
    short_term_reversal_1m, medium_term_momentum, long_term_reversal, p / mx - 1 AS drawdown,
    realized_vol_20d, e12 AS ema_12, e26 AS ema_26,
    CASE WHEN i >= 14 THEN wg END AS wilder_gain, CASE WHEN i >= 14 THEN wl END AS wilder_loss,
    mx AS run_max
FROM states"""


def signals_sql(lane: int, rows: str, crows: str, seeds: str, inputs: str = "") -> str:
    """The query of the signals rows: {rows} as `_rows`, {crows} and {seeds} as `_lane_states`
    describe them; `inputs` are CTEs they read (a refresh's), written first."""
    parts = [_rows(lane).format(rows=rows), _lane_states(lane).format(crows=crows, seeds=seeds)]
    return f"WITH {inputs}{','.join(parts)},{_out(lane)}"
