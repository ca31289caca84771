"""Store benchmark: ingest, data-quality checks, DuckDB signals vs pandas, incremental refresh,
snapshot latency.

Run from the project root:

    .venv/bin/python -m benchmarks.bench_store                      # full ingest first (1.5-3 min)
    .venv/bin/python -m benchmarks.bench_store --skip-ingest data/fintrade.duckdb

Measures, in one run and side by side:
1. wall time of `run_ingest` on the whole bundle, written to a temp store;
2. every signal for every ticker: `compute.build` vs a pandas per-ticker loop implementing the
   formulas documented in `fintrade_tui/signals/compute.py` (best of N runs each), with an
   equality check |a - b| <= 1e-9 * max(1, |b|) (b = pandas), on all tickers and on the
   prices-yahoo subset (the design target);
3. `compute.refresh` after appending one synthetic trading day per ticker, vs a full `build`,
   and whether the refreshed rows equal the rebuilt ones;
4. `queries.snapshot` latency (p50/p95/max) over random (ticker, date) pairs, read-only store;
5. the data-quality checks (`fundamentals.quality.run_checks`) over the bundle's SEC and polygon
   rows (best of N; the target: under 2 s on 2 cores).

Progress goes to stderr; the report (the environment, one table of the four, then the equality
details) to stdout. Nothing outside a temp dir is written.
"""

from __future__ import annotations

import math
import os
import platform
import shutil
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from benchmarks import harness
from benchmarks.harness import log
from fintrade_tui.config import load_config
from fintrade_tui.ingest.pipeline import run_ingest
from fintrade_tui.signals import compute
from fintrade_tui.signals.compute import SIGNALS, STATE
from fintrade_tui.store import queries

TOL = 1e-9
YAHOO = "SELECT DISTINCT ticker FROM price_rows WHERE source = 'prices-yahoo'"


def connect(path: Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path), read_only=read_only)
    con.execute("SET enable_progress_bar = false")
    return con


# ---------------------------------------------------------------- pandas reference signals


def signals_one(g: pd.DataFrame) -> dict[str, object]:
    """All SIGNALS of one ticker (rows sorted by date), as documented in compute.py."""
    p = g["adj_close"].reset_index(drop=True)
    d = p.diff()
    d0 = d.fillna(0.0)  # the first row's change counts as 0
    r = p / p.shift(1) - 1
    gain, loss = d0.clip(lower=0.0), (-d0).clip(lower=0.0)
    ema12 = p.ewm(span=12, adjust=False).mean()
    ema26 = p.ewm(span=26, adjust=False).mean()
    macd = ema12 - ema26  # macd0 = 0, so the signal EMA is seeded with 0
    mg, ml = gain.rolling(14).mean(), loss.rolling(14).mean()
    wg, wl = wilder(gain), wilder(loss)
    r20 = r.rolling(20)
    return {
        "ticker": g["ticker"].to_numpy(),
        "date": g["date"].to_numpy(),
        "ma_20": p.rolling(20).mean(),
        "ema_20": p.ewm(span=20, adjust=False).mean(),
        "macd": macd,
        "macd_signal": macd.ewm(span=9, adjust=False).mean(),
        "rsi_14": 100 - 100 / (1 + mg / ml),
        "rsi_14_wilder": 100 - 100 / (1 + wg / wl),
        "obv": (np.sign(d0) * g["volume"].to_numpy()).cumsum(),
        "one_day_reversal": r,
        "max_return_20d": r20.max(),
        "momentum_5d": p / p.shift(5) - 1,
        "momentum_20d": p / p.shift(20) - 1,
        "mean_reversal_60d": p / p.rolling(60).mean() - 1,
        "short_term_reversal_1m": p.shift(1) / p.shift(22) - 1,
        "medium_term_momentum": p.shift(21) / p.shift(252) - 1,
        "long_term_reversal": p.shift(273) / p.shift(1260) - 1,
        "drawdown": p / p.cummax() - 1,
        "realized_vol_20d": r20.std() * np.sqrt(252),
    }


def wilder(x: pd.Series) -> pd.Series:
    """Wilder average: row 14 = mean of rows 1..14, then avg = (13 avg[t-1] + x) / 14."""
    if len(x) < 15:
        return pd.Series(np.nan, index=x.index)
    tail = x.iloc[14:].copy()
    tail.iloc[0] = x.iloc[1:15].mean()
    return tail.ewm(alpha=1 / 14, adjust=False).mean().reindex(x.index)


def pandas_signals(prices: pd.DataFrame) -> pd.DataFrame:
    """Per-ticker loop over `prices` (sorted by ticker, date)."""
    parts = [pd.DataFrame(signals_one(g)) for _, g in prices.groupby("ticker", sort=True)]
    return pd.concat(parts, ignore_index=True)


# ---------------------------------------------------------------- equality check


@dataclass
class Diff:
    rows: int
    worst: float = 0.0
    where: str = "-"  # worst row: signal ticker date duckdb=.. ref=..
    bad: list[str] = field(default_factory=list)  # one line per signal outside the tolerance
    per: dict[str, float] = field(default_factory=dict)  # max rel diff per signal

    def cell(self) -> str:
        head = (
            "EQUAL" if not self.bad else "DIFFER: " + ", ".join(b.split(":")[0] for b in self.bad)
        )
        return f"{head}; max rel diff {self.worst:.1e} ({self.where.split(' ')[0]})"


def compare(
    duck: pd.DataFrame,
    ref: pd.DataFrame,
    cols: list[str],
    scale: dict[str, np.ndarray] | None = None,
) -> Diff:
    """Max |a-b|/max(1,|b|) per column (b = ref); a one-sided NULL counts as infinite.

    `scale` (per column) only annotates differences: |a-b| / scale at the worst bad row, e.g.
    OBV against the running sum of volume, to tell summation-order noise from a real mismatch.
    """
    if len(duck) != len(ref) or not (
        np.array_equal(duck["ticker"].to_numpy(object), ref["ticker"].to_numpy(object))
        and np.array_equal(duck["date"].to_numpy(), ref["date"].to_numpy())
    ):
        raise SystemExit(f"row keys differ: {len(duck)} DuckDB rows vs {len(ref)} reference rows")
    out = Diff(rows=len(duck))
    for c in cols:
        a = duck[c].to_numpy(dtype=float, na_value=np.nan)
        b = ref[c].to_numpy(dtype=float, na_value=np.nan)
        na, nb = np.isnan(a), np.isnan(b)
        with np.errstate(invalid="ignore"):
            rel = np.abs(a - b) / np.maximum(1.0, np.abs(b))
        rel[na & nb] = 0.0
        rel[na ^ nb] = np.inf
        k = int(np.argmax(rel))
        out.per[c] = float(rel[k])
        day = pd.Timestamp(duck["date"].iloc[k]).date()
        where = f"{c} {duck['ticker'].iloc[k]} {day} duckdb={float(a[k])!r} ref={float(b[k])!r}"
        if rel[k] > out.worst or out.where == "-":
            out.worst, out.where = float(rel[k]), where
        n_bad = int((rel > TOL).sum())
        if n_bad:
            note = ""
            if scale and c in scale:
                note = f"; |a-b| / {scale[c][k]:.4g} (scale) = {abs(a[k] - b[k]) / scale[c][k]:.1e}"
            out.bad.append(f"{c}: {n_bad} of {len(rel):,} rows; worst {where}{note}")
    return out


def duck_signals(con: duckdb.DuckDBPyConnection, where: str = "TRUE") -> pd.DataFrame:
    cols = ", ".join(SIGNALS + STATE + ["i"])
    return con.execute(
        f"SELECT ticker, date, {cols} FROM signals WHERE {where} ORDER BY ticker, date"
    ).df()


# ---------------------------------------------------------------- the four measurements


def ingest(tmp: Path, reuse: Path | None) -> tuple[Path, str, str]:
    store = tmp / "bench.duckdb"
    if reuse:
        log(f"copying {reuse} (ingest skipped)")
        shutil.copyfile(reuse, store)
        return store, "skipped", f"reused {reuse}"
    cfg = load_config()
    cfg = cfg.model_copy(update={"store": store})
    log(f"ingesting {cfg.bundle} -> {store} (1.5-3 minutes)")
    took, s = harness.clock(lambda: run_ingest(cfg))
    note = f"{s.tickers} tickers, {s.series_rows:,} price rows, {s.signals:,} signal rows"
    return store, f"{took:.1f} s", note


def bench_signals(
    path: Path, prices: pd.DataFrame, runs: int, label: str
) -> tuple[float, float, Diff]:
    con = connect(path)
    # alternate the two (best of each), so that a drift in machine speed hits both alike
    log(f"{label}: DuckDB build and pandas loop, alternating x{runs}")
    pairs = [
        (harness.timed(lambda: compute.build(con)), harness.clock(lambda: pandas_signals(prices)))
        for _ in range(runs)
    ]
    t_duck, t_pd = min(d for d, _ in pairs), min(p[0] for _, p in pairs)
    ref = pairs[-1][1][1]
    duck = duck_signals(con)
    con.close()
    # OBV partial sums can cancel to ~0: judge its noise against the running sum of volume
    vol_scale = prices.groupby("ticker", sort=False)["volume"].cumsum().to_numpy()
    return t_duck, t_pd, compare(duck, ref, SIGNALS, {"obv": vol_scale})


def bench_refresh(path: Path, runs: int) -> tuple[float, float, int, Diff]:
    """Append one synthetic day per ticker, time refresh (best of runs), then full build."""
    con = connect(path)
    con.execute("""CREATE TEMP TABLE new_days AS
        SELECT * REPLACE (
            date + CASE dayofweek(date) WHEN 5 THEN 3 WHEN 6 THEN 2 ELSE 1 END AS date,
            adj_close * 1.001 AS adj_close)
        FROM prices QUALIFY row_number() OVER (PARTITION BY ticker ORDER BY date DESC) = 1""")
    con.execute("INSERT INTO prices BY NAME SELECT * FROM new_days")
    new = "(ticker, date) IN (SELECT ticker, date FROM new_days)"

    def once() -> int:
        con.execute(f"DELETE FROM signals WHERE {new}")
        took, n = harness.clock(lambda: compute.refresh(con))
        timings.append(took)
        return n

    timings: list[float] = []
    log(f"refresh x{runs}")
    added = [once() for _ in range(runs)][-1]
    refreshed = duck_signals(con, new)
    log("full build after the appended day")
    t_build = harness.timed(lambda: compute.build(con))
    rebuilt = duck_signals(con, new)
    con.close()
    return min(timings), t_build, added, compare(refreshed, rebuilt, SIGNALS + STATE + ["i"])


def bench_snapshot(path: Path, n: int, seed: int) -> tuple[np.ndarray, int]:
    con = connect(path, read_only=True)
    spans = con.execute(
        "SELECT ticker, min(date), max(date) FROM prices GROUP BY ticker ORDER BY ticker"
    ).fetchall()
    rng = np.random.default_rng(seed)
    pairs: list[tuple[str, date]] = []
    for k in rng.integers(0, len(spans), size=n):
        t, lo, hi = spans[k]
        pairs.append((t, lo + timedelta(days=int(rng.integers(0, (hi - lo).days + 1)))))
    log(f"snapshot: warm-up + {n} calls")
    for t, d in pairs[:20]:
        queries.snapshot(con, t, d)
    lat, found = [], 0
    for t, d in pairs:
        took, snap = harness.clock(lambda t=t, d=d: queries.snapshot(con, t, d))
        lat.append(took)
        found += snap["price_date"] is not None
    con.close()
    return np.array(lat) * 1000, found


# ---------------------------------------------------------------- report


def bench_quality(runs: int) -> tuple[float, int]:
    """The data-quality checks over the bundle's SEC and polygon rows (best of runs), and how
    many findings they make (tests/unit/test_quality.py checks what they find)."""
    from fintrade_tui.fundamentals import sec_pit, sources
    from fintrade_tui.fundamentals.quality import run_checks

    bundle = load_config().bundle
    sec, _ = sec_pit.read(bundle)
    polygon = sources.polygon(bundle)
    annual = pd.DataFrame(columns=["ticker", "period_end", "item", "value", "source"])
    best, n = math.inf, 0
    for _ in range(runs):
        t0 = time.perf_counter()
        n = len(run_checks(sec, polygon, annual))
        best = min(best, time.perf_counter() - t0)
    return best, n


def environment(store: Path) -> list[str]:
    con = connect(store, read_only=True)
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    n_t, n_rows = con.execute("SELECT count(DISTINCT ticker), count(*) FROM prices").fetchone()
    con.close()
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    return [
        f"python {platform.python_version()} | duckdb {duckdb.__version__} (threads={threads})"
        f" | pandas {pd.__version__} | numpy {np.__version__}",
        f"cores: {os.cpu_count()} logical, {affinity} usable | {platform.platform()}",
        f"store: {n_t} tickers, {n_rows:,} price rows",
    ]


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--skip-ingest", type=Path, metavar="PATH", help="reuse this store file")
    ap.add_argument("--runs", type=int, default=5, help="repeats per timing (best is reported)")
    ap.add_argument("--queries", type=int, default=1000, help="snapshot calls")
    ap.add_argument("--seed", type=int, default=20240308)
    args = ap.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-store-") as td:
        tmp = Path(td)
        store, t_ingest, ingest_note = ingest(tmp, args.skip_ingest)
        env = environment(store)

        full, sub = tmp / "full.duckdb", tmp / "subset.duckdb"
        shutil.copyfile(store, full)
        shutil.copyfile(store, sub)
        con = connect(sub)
        yahoo = {r[0] for r in con.execute(YAHOO).fetchall()}
        con.execute(f"DELETE FROM prices WHERE ticker NOT IN ({YAHOO})")
        con.execute("CHECKPOINT")
        con.close()
        con = connect(store, read_only=True)
        prices = con.execute(
            "SELECT ticker, date, adj_close, volume FROM prices ORDER BY ticker, date"
        ).df()
        con.close()
        prices_sub = prices[prices["ticker"].isin(yahoo)].reset_index(drop=True)
        n_all, n_sub = prices["ticker"].nunique(), len(yahoo)

        ta_d, ta_p, diff_all = bench_signals(full, prices, args.runs, "all tickers")
        ts_d, ts_p, diff_sub = bench_signals(sub, prices_sub, args.runs, "prices-yahoo subset")
        t_ref, t_build, added, diff_ref = bench_refresh(full, args.runs)
        lat, found = bench_snapshot(store, args.queries, args.seed)
        t_quality, n_findings = bench_quality(args.runs)

    p50, p95, pmax = np.percentile(lat, 50), np.percentile(lat, 95), lat.max()
    rows = [
        ("ingest, full bundle (run_ingest)", t_ingest, "", "", ingest_note),
        (
            "data-quality checks over the bundle (run_checks)",
            f"{t_quality:.2f} s",
            "",
            "",
            f"{n_findings} findings",
        ),
        (
            f"signals, all {n_all} tickers ({len(prices):,} rows): duckdb vs pandas",
            f"{ta_d:.2f} s",
            f"{ta_p:.2f} s",
            f"{ta_d / ta_p:.2f}",
            diff_all.cell(),
        ),
        (
            f"signals, {n_sub} prices-yahoo tickers ({len(prices_sub):,} rows)",
            f"{ts_d:.2f} s",
            f"{ts_p:.2f} s",
            f"{ts_d / ts_p:.2f}",
            diff_sub.cell(),
        ),
        (
            f"refresh +1 day ({added} rows) vs full build (1 run)",
            f"{t_ref:.3f} s",
            f"{t_build:.2f} s",
            f"{t_ref / t_build:.3f}",
            "refreshed vs rebuilt rows: " + diff_ref.cell(),
        ),
        (
            f"snapshot, {args.queries:,} random (ticker, date), read-only",
            f"p50 {p50:.2f} ms",
            f"p95 {p95:.2f} ms",
            f"max {pmax:.1f} ms",
            f"seed {args.seed}, 20 warm-up calls; {found} found a price day",
        ),
    ]
    notes = [f"equality: |a-b| <= {TOL:g} * max(1, |b|), a = DuckDB, b = pandas (refresh: rebuild)"]
    for name, d in (("all", diff_all), ("yahoo", diff_sub), ("refresh", diff_ref)):
        notes.append(f"  worst [{name}] {d.where} (rel {d.worst:.1e}, {d.rows:,} rows)")
        per = ", ".join(f"{c} {v:.0e}" for c, v in d.per.items())
        notes.append(textwrap.indent(textwrap.fill(per, 96), "      "))
        notes += [f"  DIFF  [{name}] {line}" for line in d.bad]
    notes.append(f"total wall time {time.perf_counter() - started:.0f} s")
    head = f"== results (best of {args.runs}; A/B = duckdb/pandas, refresh/build) =="
    harness.report(
        ["== environment ==", *env, "", head],
        ["measurement", "A", "B", "A/B", "check / note"],
        rows,
        notes,
    )


if __name__ == "__main__":
    main()
