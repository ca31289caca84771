"""The lane-wise recursions against a plain Python recursion, row by row.

A build cuts the rows into lanes of LANE rows (aligned so that one starts at Wilder's row 14)
and the lanes into blocks of BLOCK rows; a refresh uses lanes of one row from its first new row.
A synthetic ticker longer than two blocks catches a wrong carry at lane and block boundaries;
refreshes that add more than a block of days, or start before Wilder's row 14, catch a wrong seed.
"""

from __future__ import annotations

import math
from datetime import date, timedelta

import duckdb
import numpy as np
import pytest

from fintrade_tui.signals.compute import SIGNALS, STATE, build, refresh
from fintrade_tui.signals.lanes import BLOCK, LANE

N = 2600  # > 2 blocks of BLOCK = 1024 rows
# a build's lanes start at rows 14 + 8b (rows 0..5, 6..13, 14..21, ...) and its blocks at the
# lanes 128 lanes apart from the first (rows 0, 1022, 2046); a refresh's blocks start at its
# first row (or at 0 when that is before row 14)
BOUNDARIES = [0, 5, 6, 13, 14, 15, 21, 22, 1021, 1022, 1023, 1024, 2045, 2046, 2047, 2048, N - 1]
RTOL = 1e-10  # |a - b| <= RTOL * max(1, |b|)


def series(n: int, seed: int) -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(seed)
    price = 50 * np.exp(np.cumsum(rng.normal(0.0005, 0.02, n)))
    price[n // 3 : n // 3 + 8] = price[n // 3 - 1]  # flat days: zero gains and losses
    return [float(x) for x in price], [float(v) for v in rng.integers(1_000, 90_000, n)]


def reference(p: list[float], vol: list[float]) -> dict[str, list[float | None]]:
    """The documented formulas as plain recursions."""

    def ema(xs: list[float], a: float) -> list[float]:
        out = [xs[0]]
        for x in xs[1:]:
            out.append(a * x + (1 - a) * out[-1])
        return out

    e12, e26, e20 = ema(p, 2 / 13), ema(p, 2 / 27), ema(p, 2 / 21)
    macd = [a - b for a, b in zip(e12, e26, strict=True)]
    sig = ema(macd, 0.2)  # macd[0] = 0, so this is the EMA seeded with 0
    gain = [0.0] + [max(b - a, 0.0) for a, b in zip(p, p[1:], strict=False)]
    loss = [0.0] + [max(a - b, 0.0) for a, b in zip(p, p[1:], strict=False)]

    def wilder(x: list[float]) -> list[float | None]:
        out: list[float | None] = [None] * 14 + [sum(x[1:15]) / 14]
        for v in x[15:]:
            out.append((13 * out[-1] + v) / 14)
        return out

    wg, wl = wilder(gain), wilder(loss)
    obv, run, run_max = [], 0.0, []
    for t in range(len(p)):
        run += 0.0 if t == 0 else math.copysign(vol[t], p[t] - p[t - 1]) * (p[t] != p[t - 1])
        obv.append(run)
        run_max.append(max(p[: t + 1]) if t == 0 else max(run_max[-1], p[t]))
    rsi_w = [
        None if g is None or (g == 0 and d == 0) else 100.0 if d == 0 else 100 - 100 / (1 + g / d)
        for g, d in zip(wg, wl, strict=True)
    ]
    return {
        "ema_12": e12,
        "ema_26": e26,
        "ema_20": e20,
        "macd": macd,
        "macd_signal": sig,
        "wilder_gain": wg,
        "wilder_loss": wl,
        "rsi_14_wilder": rsi_w,
        "obv": obv,
        "run_max": run_max,
        "drawdown": [a / b - 1 for a, b in zip(p, run_max, strict=True)],
        "long_term_reversal": [
            None if t < 1260 else p[t - 273] / p[t - 1260] - 1 for t in range(len(p))
        ],
        "ma_20": [None if t < 19 else sum(p[t - 19 : t + 1]) / 20 for t in range(len(p))],
    }


def store(p: list[float], vol: list[float], upto: int) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute("CREATE TABLE prices (ticker VARCHAR, date DATE, adj_close DOUBLE, volume DOUBLE)")
    add_days(con, p, vol, 0, upto)
    return con


def add_days(con, p: list[float], vol: list[float], lo: int, hi: int) -> None:
    start = date(1990, 1, 1)
    rows = [("SYN", start + timedelta(days=t), p[t], vol[t]) for t in range(lo, hi)]
    con.executemany("INSERT INTO prices VALUES (?, ?, ?, ?)", rows)


def close(x: float, y: float, rtol: float = RTOL) -> bool:
    return abs(x - y) <= rtol * max(1.0, abs(y))


def check(con, ref: dict[str, list[float | None]], rows: list[int]) -> None:
    cols = list(ref)
    got = con.execute(f"SELECT i, {', '.join(cols)} FROM signals ORDER BY i").fetchall()
    assert [r[0] for r in got] == list(range(len(ref["ema_12"])))
    for t in rows:
        for c, have in zip(cols, got[t][1:], strict=True):
            want = ref[c][t]
            if want is None:
                assert have is None, f"{c} row {t}: {have!r}, want NULL"
                continue
            assert have is not None, f"{c} row {t}: NULL, want {want!r}"
            assert abs(have - want) <= RTOL * max(1.0, abs(want)), f"{c} row {t}: {have!r} {want!r}"


def test_block_lanes_equal_plain_recursion() -> None:
    assert (LANE, BLOCK) == (8, 1024) and 2 * BLOCK < N
    p, vol = series(N, seed=7)
    con = store(p, vol, N)
    assert build(con) == N
    ref = reference(p, vol)
    check(con, ref, BOUNDARIES)
    check(con, ref, range(0, N, 37))


@pytest.mark.parametrize("stored", [5, 14, 300, 1500])
def test_refresh_of_more_than_a_lane_equals_plain_recursion(stored: int) -> None:
    """Refresh continues from the stored state: before Wilder's start, before the long lags,
    and with new days spanning more than one lane."""
    p, vol = series(N, seed=11)
    con = store(p, vol, stored)
    assert build(con) == stored
    add_days(con, p, vol, stored, N)
    assert refresh(con) == N - stored
    ref = reference(p, vol)
    check(con, ref, BOUNDARIES + [stored - 1, stored, stored + 1, stored + BLOCK])
    check(con, ref, range(0, N, 41))
    # and every column equals a full rebuild
    cols = ", ".join(["i", *SIGNALS, *STATE])
    refreshed = con.execute(f"SELECT {cols} FROM signals ORDER BY i").fetchall()
    build(con)
    rebuilt = con.execute(f"SELECT {cols} FROM signals ORDER BY i").fetchall()
    for a, b in zip(refreshed, rebuilt, strict=True):
        assert a[0] == b[0]
        for x, y in zip(a[1:], b[1:], strict=True):
            assert (x is None) == (y is None) and (x is None or abs(x - y) <= RTOL * max(1, abs(y)))


def test_refresh_in_small_steps() -> None:
    """One day at a time across a lane boundary of the new rows and Wilder's row 14."""
    p, vol = series(60, seed=3)
    con = store(p, vol, 10)
    build(con)
    for t in range(10, 60):
        add_days(con, p, vol, t, t + 1)
        assert refresh(con) == 1
    assert refresh(con) == 0
    check(con, reference(p, vol), range(60))


def test_tickers_do_not_mix_and_rows_keep_ticker_date_order() -> None:
    """A build's window runs over all tickers at once: no lag may read the ticker before, and the
    rows must come out in (ticker, date) order, the layout the zone maps on ticker rely on."""
    lengths = [1, 3, 10, 14, 15, 40, 300, 2] * 3  # short tickers: before and across Wilder's start
    con = duckdb.connect()
    con.execute("CREATE TABLE prices (ticker VARCHAR, date DATE, adj_close DOUBLE, volume DOUBLE)")
    alone: dict[str, list[tuple]] = {}
    cols = ", ".join(["i", *SIGNALS, *STATE])
    for n, length in enumerate(lengths):
        p, vol = series(length, seed=n)
        one = store(p, vol, length)
        build(one)
        alone[f"T{n:02d}"] = one.execute(f"SELECT {cols} FROM signals ORDER BY i").fetchall()
        start = date(1990, 1, 1)
        days = [(f"T{n:02d}", start + timedelta(days=t), p[t], vol[t]) for t in range(length)]
        con.executemany("INSERT INTO prices VALUES (?, ?, ?, ?)", days)
    assert build(con) == sum(lengths)
    for t, rows in alone.items():
        got = con.execute(f"SELECT {cols} FROM signals WHERE ticker = ? ORDER BY i", [t]).fetchall()
        assert len(got) == len(rows), t
        for a, b in zip(got, rows, strict=True):  # equal up to the order of summation
            for x, y in zip(a, b, strict=True):
                assert (x is None) == (y is None) and (x is None or close(x, y, 1e-12)), (t, a[0])
    keys = con.execute("SELECT ticker, date FROM signals ORDER BY rowid").fetchall()
    descents = sum(b < a for a, b in zip(keys, keys[1:], strict=False))
    assert descents <= 1, f"{descents} places where the stored rows go back in (ticker, date)"


def test_refresh_of_tickers_at_different_starts_equals_rebuild() -> None:
    """One refresh over tickers before, at and after Wilder's start and the long lags: the
    window over their rows together must not mix them either."""
    con = duckdb.connect()
    con.execute("CREATE TABLE prices (ticker VARCHAR, date DATE, adj_close DOUBLE, volume DOUBLE)")
    start, held = date(1990, 1, 1), []
    for n, (stored, new) in enumerate([(2, 3), (10, 9), (14, 1), (40, 30), (1300, 2), (5, 0)]):
        p, vol = series(stored + new, seed=20 + n)
        days = [(f"T{n}", start + timedelta(days=t), p[t], vol[t]) for t in range(stored + new)]
        con.executemany("INSERT INTO prices VALUES (?, ?, ?, ?)", days[:stored])
        held += days[stored:]
    build(con)
    con.executemany("INSERT INTO prices VALUES (?, ?, ?, ?)", held)
    assert refresh(con) == 3 + 9 + 1 + 30 + 2
    cols = ", ".join(["ticker", "i", *SIGNALS, *STATE])
    refreshed = con.execute(f"SELECT {cols} FROM signals ORDER BY ticker, i").fetchall()
    build(con)
    rebuilt = con.execute(f"SELECT {cols} FROM signals ORDER BY ticker, i").fetchall()
    assert len(refreshed) == len(rebuilt)
    for a, b in zip(refreshed, rebuilt, strict=True):
        assert a[:2] == b[:2]
        for x, y in zip(a[2:], b[2:], strict=True):
            assert (x is None) == (y is None) and (x is None or close(x, y)), a[:2]
