"""Retrieval benchmark: index build, query latency per mode, recall/MRR, point-in-time check.

Run from the project root:

    .venv/bin/python -m benchmarks.bench_retrieval                 # fresh index: 10-20 min
    .venv/bin/python -m benchmarks.bench_retrieval --index /tmp/ftr-bench-index/lancedb

`--index PATH` is the LanceDB folder to use: built there when it holds no index yet, otherwise
reused (then only a refresh runs, which must embed nothing). Without it the index is built into
a fresh temp dir that is removed at the end. The project's own index (`retrieval.index` in the
config, data/lancedb) is never used or written; the store is opened read-only.

Measures, in one run:
1. index build: wall time, chunking time, chunks embedded / seconds embedding (chunks/s; the
   model is loaded before the build, so that figure is encoding only), then a refresh run's
   wall time (nothing changed, so it must embed 0 chunks);
2. query embedding: `embed.embed_query` timed on its own (a warm-up first, then each labelled
   query 3x: the first call fills the cache `retrieve` reads, two more go through the uncached
   function), p50/p95;
3. `search.retrieve` latency per mode (dense, text, hybrid, hybrid_rerank) with the query vector
   already cached, so the figures exclude query embedding: one warm-up pass over the labelled
   queries, then 3 timed passes, p50/p95;
4. quality on the labelled queries (tests/data/retrieval_queries.jsonl), filing track only:
   k=10, a token budget that cuts nothing and `filing_share` = 1.0 (all 10 slots go to filing
   passages; the filing ranking itself does not depend on the share). A retrieved filing item is
   a hit when ticker, form, section_key, fiscal year and fiscal period (from the store's
   `filings` table, via the item's accession) all equal the target's. recall@5 = share of
   queries with a hit among the first 5 filing items; MRR@10 = mean 1/rank of the first hit.
   Diagnostics: the right filing (any section) and the right section (any period) in the top 5;
   every query a mode misses at 5 is listed with what came first instead;
5. point-in-time: every item returned by the quality pass, by the labelled queries again with
   the configured filing share (so market chunks come back too), and by 100 random
   (as_of, tickers, query, mode) draws: no filing item may have filed > as_of, no market item
   end > as_of (and no item available_from > as_of).

The header also prints the load average and a CPU probe (a fixed pure-Python loop, timed just
before and just after the latency passes): on a shared 2-core VM the same loop's time varies by
1.5x from one minute to the next, and so do the latencies.

Progress goes to stderr, the report to stdout: the index build, the misses and the
point-in-time check, then one table of latency and quality per stage, then the checks; the exit
status is 1 when a check fails (refresh embedded something, a point-in-time violation, a missed
target).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import torch

from benchmarks import harness
from benchmarks import retrieval_quality as rq
from benchmarks.retrieval_quality import QUERIES, RANDOM_DATES, K
from fintrade_tui.config import Config
from fintrade_tui.retrieval import embed
from fintrade_tui.retrieval.index import Index, IndexSummary
from fintrade_tui.retrieval.indexing import filing_companies
from fintrade_tui.retrieval.search import MODES

REPEATS = 3
P50_TARGET_MS = 50.0
TIME_LIMIT_S = 15 * 60
SHORT = {"dense": "dense", "text": "text", "hybrid": "hybrid", "hybrid_rerank": "rerank"}


def pct(xs: list[float], q: float) -> float:
    """The interpolated `q`th percentile (numpy's), NaN for none."""
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


def cpu_probe() -> float:
    """Seconds for a fixed pure-Python loop: how fast this CPU is right now."""
    t0 = time.perf_counter()
    n = 0
    for i in range(3_000_000):
        n += i
    return time.perf_counter() - t0


def ms(s: float) -> str:
    """Seconds as milliseconds, one decimal."""
    return f"{s * 1000:.1f}"


# --------------------------------------------------------------------------- 1. index


def build_index(cfg: Config, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Build or refresh; reports what ran and how long each part took."""
    r = cfg.retrieval
    reused = (cfg.retrieval.index / "manifest.json").is_file()
    # the same cache key the build uses
    load_s = harness.timed(lambda: embed.load_model(**embed.settings(r)))
    res: dict[str, Any] = {"reused": reused, "model_load_s": load_s, "path": r.index}
    if not reused:
        marks: dict[str, float] = {}

        def progress(label: str, total: int | None):
            marks[label] = time.perf_counter()
            harness.log(f"{label} ({total})")
            return lambda n=1: None

        harness.log(f"building the index into {r.index} (10-20 min on 2 cores)")
        t0 = time.perf_counter()
        s = Index(cfg).build(con, progress, filing_companies(con))
        res["build"], res["build_s"] = s, time.perf_counter() - t0
        chunk_start = marks.get("index: chunk filings", t0)
        res["chunk_s"] = marks.get("index: embed chunks", chunk_start) - chunk_start
    harness.log("refresh run (nothing changed: must embed nothing)")
    res["refresh_s"], res["refresh"] = harness.clock(
        lambda: Index(cfg).build(con, tickers=filing_companies(con))
    )
    return res


def build_lines(b: dict[str, Any]) -> list[str]:
    """The index build's report: the full build's parts (unless reused) and the refresh."""
    out = ["## 1. index build"]
    if b["reused"]:
        out.append("  reused an existing index: the full build was not run (or timed) in this run")
    else:
        s: IndexSummary = b["build"]
        rate = s.chunks_embedded / s.seconds_embedding if s.seconds_embedding else float("nan")
        rest = b["build_s"] - b["chunk_s"] - s.seconds_embedding
        out += [
            f"  full build      {b['build_s']:7.1f} s wall  ({s.filings} filings -> "
            f"{s.filing_chunks} filing chunks, {s.market_chunks} market chunks; "
            f"{s.chunks_embedded / b['build_s']:.1f} chunks/s overall)",
            f"    chunk filings {b['chunk_s']:7.1f} s",
            f"    embed         {s.seconds_embedding:7.1f} s  {s.chunks_embedded} chunks "
            f"-> {rate:.1f} chunks/s (chunks_embedded / seconds_embedding); "
            f"{s.chunks_shared} repeated passages share a vector",
            f"    other         {rest:7.1f} s  (market chunks, LanceDB writes, FTS index)",
            f"  model load      {b['model_load_s']:7.1f} s  (before the build, not in it)",
        ]
    ref: IndexSummary = b["refresh"]
    out.append(
        f"  refresh         {b['refresh_s']:7.1f} s wall  ({ref.chunks_embedded} chunks "
        f"embedded, {ref.filings_embedded} filings re-chunked, {ref.removed} removed; "
        f"{ref.filing_chunks} filing + {ref.market_chunks} market chunks in the index)"
    )
    return out


# --------------------------------------------------------------------------- 2./3. latency


def time_query_embedding(cfg: Config, queries: list[dict]) -> list[float]:
    """Seconds of `embed_query` per labelled query: once cached, REPEATS - 1 times uncached."""
    r = cfg.retrieval
    embed.embed_query("warm-up: revenue growth and risk factors", **embed.settings(r))
    raw = embed.embed_query.__wrapped__  # the uncached function behind the cache
    out = []
    for q in queries:
        text = q["query"].strip()  # what `retrieve` passes, so its cache lookup hits
        out.append(harness.timed(lambda text=text: embed.embed_query(text, **embed.settings(r))))
        out += harness.repeat(lambda text=text: raw(text, **embed.settings(r)), REPEATS - 1)
    return out


def time_retrieval(
    cfg: Config, queries: list[dict]
) -> tuple[dict[str, list[float]], dict[str, list]]:
    """Per mode: latencies of REPEATS timed passes, and the warm-up pass's results."""
    lat: dict[str, list[float]] = {}
    results: dict[str, list] = {}
    for mode in MODES:
        harness.log(f"retrieve, mode {mode}: warm-up pass + {REPEATS} timed passes")
        results[mode] = [rq.run(cfg, q, mode) for q in queries]
        lat[mode] = [
            harness.timed(lambda q=q, mode=mode: rq.run(cfg, q, mode))
            for _ in range(REPEATS)
            for q in queries
        ]
    return lat, results


# --------------------------------------------------------------------------- 4. misses


def miss_lines(queries: list[dict], qual: dict, results: dict, filings: dict) -> list[str]:
    """The queries some mode misses at 5: each mode's rank of the target, and what came first."""
    out = [
        "## 4. queries some mode misses at 5: rank of the target per mode ('-': not in the top"
        " 10), then the first filing item dense and hybrid returned instead",
        f"  line ticker target{'':32}" + " ".join(f"{SHORT[m]:>6}" for m in MODES),
    ]
    for i, q in enumerate(queries):
        ranks = [qual[m]["ranks"][i] for m in MODES]
        if all(rk and rk <= 5 for rk in ranks):
            continue
        t = q["target"]
        target = f"{t['form']} FY{t['fiscal_year']} {t['fiscal_period']} {t['section_key']}"
        cells = " ".join(f"{rk if rk else '-':>6}" for rk in ranks)
        first = {
            m: rq.describe(next(iter(rq.filing_items(results[m][i])), None), filings)
            for m in ("dense", "hybrid")
        }
        out += [
            f"  {q['line']:>4} {q['ticker']:<6} {target:<38}{cells}",
            f"         {q['query'][:92]}",
            f"         first: dense {first['dense']}; hybrid {first['hybrid']}",
        ]
    return out if len(out) > 2 else [*out, "  (none)"]


# --------------------------------------------------------------------------- report


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--index", type=Path, help="LanceDB folder to build into or reuse")
    ap.add_argument("--queries", type=Path, default=QUERIES, help="labelled queries (JSONL)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the random as_of draws")
    args = ap.parse_args()
    t_start = time.perf_counter()
    tmp = None if args.index else Path(tempfile.mkdtemp(prefix="ftr-bench-retrieval-"))
    cfg = rq.bench_config(args.index or tmp / "lancedb")
    try:
        return report(cfg, args, t_start)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def report(cfg: Config, args: argparse.Namespace, t_start: float) -> int:
    """Measure (index, latency, quality, point in time), print the report, return the status."""
    r = cfg.retrieval
    con = duckdb.connect(str(cfg.store), read_only=True)
    filings = rq.store_filings(con)
    queries = rq.load_queries(args.queries, filings)
    load_start = harness.load()

    b = build_index(cfg, con)
    con.close()
    quality_cfg = cfg.model_copy(deep=True)
    quality_cfg.retrieval.filing_share = 1.0

    harness.log(f"query embedding: {len(queries)} queries x{REPEATS}")
    probe = [cpu_probe()]
    emb = time_query_embedding(cfg, queries)
    lat, results = time_retrieval(quality_cfg, queries)
    probe.append(cpu_probe())
    qual = {mode: rq.quality(queries, results[mode], filings) for mode in MODES}
    pit = rq.point_in_time(cfg, queries, results, args.seed)

    print(f"# retrieval benchmark  (model {r.model}, {embed.precision(r.precision)};"
          f" index {b['path']})")  # fmt: skip
    print(f"store {cfg.store} (read-only); {len(queries)} labelled queries from {args.queries}")
    print(harness.machine(load_start, f", torch threads {torch.get_num_threads()}"))
    print(
        f"CPU probe (3M-step Python loop, lower = faster): {probe[0] * 1000:.0f} ms before, "
        f"{probe[1] * 1000:.0f} ms after the latency passes"
    )
    print()
    print("\n".join(build_lines(b)))
    print()
    print("\n".join(miss_lines(queries, qual, results, filings)))
    short = [n for n in qual["hybrid"]["n_filing_items"] if n < K]
    if short:
        print(f"  ({len(short)} queries returned fewer than {K} filing items)")
    print()
    seen, bad = pit["seen"], pit["violations"]
    print("## 5. point-in-time")
    print(
        f"  {pit['calls']} retrieve calls: {len(queries)} labelled queries x {len(MODES)} modes "
        f"x 2 filing shares, {RANDOM_DATES} random as_of dates (1-3 tickers, seed {args.seed})"
    )
    print(
        f"  {seen.get('filing', 0)} filing + {seen.get('market', 0)} market items checked; "
        f"violations (filed > as_of or end > as_of): {len(bad)}"
    )
    for v in bad[:10]:
        print(f"    {v}")
    print()

    rows = [["query embedding (embed_query)", ms(pct(emb, 50)), ms(pct(emb, 95))]]
    rows[0] += [ms(float(np.mean(emb))), ms(max(emb)), None, None, None, None]
    for mode in MODES:
        xs, m = lat[mode], qual[mode]
        rows.append(
            [f"retrieve {mode}", ms(pct(xs, 50)), ms(pct(xs, 95)), ms(float(np.mean(xs)))]
            + [ms(max(xs)), f"{m['recall5']:.3f}", f"{m['mrr10']:.3f}"]
            + [f"{m['filing5']:.3f}", f"{m['section5']:.3f}"]
        )
    ref: IndexSummary = b["refresh"]
    hp50 = pct(lat["hybrid"], 50) * 1000
    hr, dr = qual["hybrid"]["recall5"], qual["dense"]["recall5"]
    total_s = time.perf_counter() - t_start
    items = [
        ("refresh embeds nothing", ref.chunks_embedded == 0, f"{ref.chunks_embedded} embedded"),
        ("point-in-time: nothing after as_of", not bad, f"{len(bad)}"),
        ("hybrid p50 < 50 ms, excl. query embedding", hp50 < P50_TARGET_MS, f"{hp50:.1f} ms"),
        ("hybrid recall@5 >= dense recall@5", hr >= dr, f"{hr:.3f} vs {dr:.3f}"),
    ]
    if not b["reused"]:
        ok = total_s < TIME_LIMIT_S
        items.append(("whole run < 15 min incl. the build", ok, f"{total_s / 60:.1f} min"))
    lines, status = harness.checks(items)
    if b["reused"]:
        name = "whole run < 15 min incl. a build"
        lines.append(f"n/a   {name:<44} {total_s / 60:.1f} min, index reused")
    harness.report(
        f"## 2.-4. latency, ms ({len(queries)} queries x{REPEATS} after a warm-up), and quality"
        f" on the filing track (k={K})",
        ["stage", "p50", "p95", "mean", "max", "recall@5", "MRR@10", "right filing@5"]
        + ["right section@5 (any period)"],
        rows,
        [
            "retrieve runs with the query vector already cached, so its figures exclude query"
            f" embedding (k={K}, no token budget cut, filing_share 1.0)",
            "## checks",
            *lines,
        ],
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
