"""Retrieval benchmark: index build, query latency per mode, recall/MRR, point-in-time check.

Run from the project root:

    .venv/bin/python benchmarks/bench_retrieval.py                 # fresh index: 10-20 min
    .venv/bin/python benchmarks/bench_retrieval.py --index /tmp/ftr-bench-index/lancedb

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

Progress goes to stderr, the report to stdout; the exit status is 1 when a check fails
(refresh embedded something, a point-in-time violation, a missed target).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import torch

from fintrade_tui.config import Config, load_config
from fintrade_tui.retrieval import embed
from fintrade_tui.retrieval.index import Index, IndexSummary
from fintrade_tui.retrieval.indexing import filing_companies
from fintrade_tui.retrieval.search import MODES, retrieve

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "tests" / "data" / "retrieval_queries.jsonl"
K = 10
BIG_BUDGET = 10_000_000  # tokens: the budget never cuts a result list
REPEATS = 3
RANDOM_DATES = 100
P50_TARGET_MS = 50.0
TIME_LIMIT_S = 15 * 60
SHORT = {"dense": "dense", "text": "text", "hybrid": "hybrid", "hybrid_rerank": "rerank"}
TICKERS = ["AAPL", "ADSK", "AMZN", "GOOG", "META", "NVDA", "TSLA"]


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


def cpu_probe() -> float:
    """Seconds for a fixed pure-Python loop: how fast this CPU is right now."""
    t0 = time.perf_counter()
    n = 0
    for i in range(3_000_000):
        n += i
    return time.perf_counter() - t0


def ms(s: float) -> str:
    return f"{s * 1000:7.1f}"


# --------------------------------------------------------------------------- inputs


def load_queries(path: Path, filings: dict[str, dict]) -> list[dict]:
    """The labelled queries; a bad line stops the run naming the line and the problem."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
            t = q["target"]
            q["as_of"] = date.fromisoformat(q["as_of"])
            for key in ("ticker", "form", "section_key", "fiscal_period", "fiscal_year"):
                t[key]  # noqa: B018 - presence check
        except (ValueError, KeyError, TypeError) as exc:
            sys.exit(f"{path} line {n}: not a labelled query ({type(exc).__name__}: {exc})")
        matches = [
            f
            for f in filings.values()
            if (f["ticker"], f["form"], f["fiscal_year"], f["fiscal_period"])
            == (t["ticker"], t["form"], t["fiscal_year"], t["fiscal_period"])
        ]
        if t.get("accession"):
            matches = [f for f in matches if f["accession"] == t["accession"]]
        if not matches:
            sys.exit(f"{path} line {n}: target filing is not in the store's filings table")
        if min(f["filed"] for f in matches) > q["as_of"]:
            sys.exit(f"{path} line {n}: target filing is filed after as_of {q['as_of']}")
        q["line"] = n
        out.append(q)
    if not out:
        sys.exit(f"{path}: no queries")
    return out


def bench_config(index_path: Path) -> Config:
    cfg = load_config()
    project_index = cfg.retrieval.index.resolve()
    p = index_path.resolve()
    if p == project_index or project_index in p.parents:
        sys.exit(f"--index {index_path}: that is the project's own index; give another folder")
    cfg.retrieval.index = p
    return cfg


# --------------------------------------------------------------------------- 1. index


def build_index(cfg: Config, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Build or refresh; reports what ran and how long each part took."""
    r = cfg.retrieval
    reused = (cfg.retrieval.index / "manifest.json").is_file()
    t0 = time.perf_counter()
    embed.load_model(**embed.settings(r))  # the same cache key the build uses
    load_s = time.perf_counter() - t0
    res: dict[str, Any] = {"reused": reused, "model_load_s": load_s, "path": r.index}
    if not reused:
        marks: dict[str, float] = {}

        def progress(label: str, total: int | None):
            marks[label] = time.perf_counter()
            log(f"{label} ({total})")
            return lambda n=1: None

        log(f"building the index into {r.index} (10-20 min on 2 cores)")
        t0 = time.perf_counter()
        s = Index(cfg).build(con, progress, filing_companies(con))
        res["build"], res["build_s"] = s, time.perf_counter() - t0
        chunk_start = marks.get("index: chunk filings", t0)
        res["chunk_s"] = marks.get("index: embed chunks", chunk_start) - chunk_start
    log("refresh run (nothing changed: must embed nothing)")
    t0 = time.perf_counter()
    res["refresh"] = Index(cfg).build(con, tickers=filing_companies(con))
    res["refresh_s"] = time.perf_counter() - t0
    return res


# --------------------------------------------------------------------------- 2./3. latency


def time_query_embedding(cfg: Config, queries: list[dict]) -> list[float]:
    r = cfg.retrieval
    embed.embed_query("warm-up: revenue growth and risk factors", **embed.settings(r))
    raw = embed.embed_query.__wrapped__  # the uncached function behind the cache
    out = []
    for q in queries:
        text = q["query"].strip()  # what `retrieve` passes, so its cache lookup hits
        t0 = time.perf_counter()
        embed.embed_query(text, **embed.settings(r))
        out.append(time.perf_counter() - t0)
        for _ in range(REPEATS - 1):
            t0 = time.perf_counter()
            raw(text, **embed.settings(r))
            out.append(time.perf_counter() - t0)
    return out


def run(cfg: Config, q: dict, mode: str, k: int = K, as_of: date | None = None) -> list[dict]:
    return retrieve(
        cfg,
        q["query"],
        [q["ticker"]] if isinstance(q["ticker"], str) else q["ticker"],
        as_of or q["as_of"],
        k=k,
        token_budget=BIG_BUDGET,
        mode=mode,
    )


def time_retrieval(
    cfg: Config, queries: list[dict]
) -> tuple[dict[str, list[float]], dict[str, list]]:
    """Per mode: latencies of REPEATS timed passes, and the warm-up pass's results."""
    lat: dict[str, list[float]] = {}
    results: dict[str, list] = {}
    for mode in MODES:
        log(f"retrieve, mode {mode}: warm-up pass + {REPEATS} timed passes")
        results[mode] = [run(cfg, q, mode) for q in queries]
        lat[mode] = []
        for _ in range(REPEATS):
            for q in queries:
                t0 = time.perf_counter()
                run(cfg, q, mode)
                lat[mode].append(time.perf_counter() - t0)
    return lat, results


# --------------------------------------------------------------------------- 4. quality


def filing_items(items: list[dict]) -> list[dict]:
    return [it for it in items if it["track"] == "filing"][:K]


def is_hit(it: dict, t: dict, filings: dict[str, dict]) -> bool:
    f = filings.get(it["accession"])
    return (
        f is not None
        and (it["ticker"], it["form"], it["section_key"])
        == (t["ticker"], t["form"], t["section_key"])
        and (f["fiscal_year"], f["fiscal_period"]) == (t["fiscal_year"], t["fiscal_period"])
    )


def same_filing(it: dict, t: dict, filings: dict[str, dict]) -> bool:
    f = filings.get(it["accession"])
    return f is not None and (f["ticker"], f["form"], f["fiscal_year"], f["fiscal_period"]) == (
        t["ticker"],
        t["form"],
        t["fiscal_year"],
        t["fiscal_period"],
    )


def quality(queries: list[dict], results: list, filings: dict[str, dict]) -> dict[str, Any]:
    ranks, filing5, section5 = [], 0, 0
    for q, items in zip(queries, results, strict=True):
        t, fi = q["target"], filing_items(items)
        rank = next((i + 1 for i, it in enumerate(fi) if is_hit(it, t, filings)), None)
        ranks.append(rank)
        filing5 += any(same_filing(it, t, filings) for it in fi[:5])
        section5 += any(
            (it["ticker"], it["form"], it["section_key"])
            == (t["ticker"], t["form"], t["section_key"])
            for it in fi[:5]
        )
    n = len(queries)
    return {
        "ranks": ranks,
        "recall5": sum(1 for r in ranks if r and r <= 5) / n,
        "mrr10": sum(1 / r for r in ranks if r) / n,
        "filing5": filing5 / n,
        "section5": section5 / n,
        "n_filing_items": [len(filing_items(items)) for items in results],
    }


def describe(it: dict | None, filings: dict[str, dict]) -> str:
    if it is None:
        return "(nothing)"
    f = filings.get(it["accession"], {})
    return f"{it['form']} FY{f.get('fiscal_year')} {f.get('fiscal_period')} {it['section_key']}"


# --------------------------------------------------------------------------- 5. point in time


def pit_violations(items: list[dict], as_of: date) -> tuple[list[str], dict[str, int]]:
    bad, seen = [], {"filing": 0, "market": 0}
    for it in items:
        seen[it["track"]] = seen.get(it["track"], 0) + 1
        day = it["filed"] if it["track"] == "filing" else it["end"]
        if day is None or day > as_of or (it["available_from"] and it["available_from"] > as_of):
            bad.append(f"{it['id']} ({it['track']} {day}) returned as of {as_of}")
    return bad, seen


def point_in_time(
    default_cfg: Config, queries: list[dict], quality_results: dict, seed: int
) -> dict[str, Any]:
    bad: list[str] = []
    seen = {"filing": 0, "market": 0}
    calls = 0

    def check(items: list[dict], as_of: date) -> None:
        nonlocal calls
        b, s = pit_violations(items, as_of)
        bad.extend(b)
        for key, v in s.items():
            seen[key] = seen.get(key, 0) + v
        calls += 1

    for mode in MODES:  # the quality pass (filing_share 1.0)
        for q, items in zip(queries, quality_results[mode], strict=True):
            check(items, q["as_of"])
    log("point-in-time: labelled queries with the configured filing share")
    for mode in MODES:
        for q in queries:
            check(run(default_cfg, q, mode), q["as_of"])
    log(f"point-in-time: {RANDOM_DATES} random as_of dates")
    rng = random.Random(seed)
    lo, hi = date(2023, 10, 1), date(2025, 12, 31)
    for i in range(RANDOM_DATES):
        as_of = lo + timedelta(days=rng.randrange((hi - lo).days + 1))
        tickers = sorted(rng.sample(TICKERS, rng.randint(1, 3)))
        q = {"query": rng.choice(queries)["query"], "ticker": tickers}
        check(run(default_cfg, q, MODES[i % len(MODES)], as_of=as_of), as_of)
    return {"violations": bad, "seen": seen, "calls": calls}


# --------------------------------------------------------------------------- report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, help="LanceDB folder to build into or reuse")
    ap.add_argument("--queries", type=Path, default=QUERIES, help="labelled queries (JSONL)")
    ap.add_argument("--seed", type=int, default=7, help="seed of the random as_of draws")
    args = ap.parse_args()
    t_start = time.perf_counter()
    tmp = None if args.index else Path(tempfile.mkdtemp(prefix="ftr-bench-retrieval-"))
    cfg = bench_config(args.index or tmp / "lancedb")
    try:
        return report(cfg, args, t_start)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def report(cfg: Config, args: argparse.Namespace, t_start: float) -> int:
    r = cfg.retrieval
    con = duckdb.connect(str(cfg.store), read_only=True)
    cols = ["accession", "ticker", "form", "filed", "fiscal_year", "fiscal_period"]
    filings = {
        row[0]: dict(zip(cols, row, strict=True))
        for row in con.execute(f"SELECT {', '.join(cols)} FROM filings").fetchall()
    }
    queries = load_queries(args.queries, filings)
    load_start = os.getloadavg()[0]
    checks: list[tuple[str, bool, str]] = []

    b = build_index(cfg, con)
    con.close()
    quality_cfg = cfg.model_copy(deep=True)
    quality_cfg.retrieval.filing_share = 1.0

    log(f"query embedding: {len(queries)} queries x{REPEATS}")
    probe = [cpu_probe()]
    emb = time_query_embedding(cfg, queries)
    lat, results = time_retrieval(quality_cfg, queries)
    probe.append(cpu_probe())
    qual = {mode: quality(queries, results[mode], filings) for mode in MODES}
    pit = point_in_time(cfg, queries, results, args.seed)

    load_end = os.getloadavg()[0]
    prec = embed.precision(r.precision)
    print(f"# retrieval benchmark  (model {r.model}, {prec}; index {b['path']})")
    print(f"store {cfg.store} (read-only); {len(queries)} labelled queries from {args.queries}")
    print(
        f"machine: {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}; "
        f"1-min load average {load_start:.1f} at start, {load_end:.1f} at end "
        "(other processes share the CPUs)"
    )
    print(
        f"CPU probe (3M-step Python loop, lower = faster): {probe[0] * 1000:.0f} ms before, "
        f"{probe[1] * 1000:.0f} ms after the latency passes"
    )
    print()
    print("## 1. index build")
    if b["reused"]:
        print("  reused an existing index: the full build was not run (or timed) in this run")
    else:
        s: IndexSummary = b["build"]
        rate = s.chunks_embedded / s.seconds_embedding if s.seconds_embedding else float("nan")
        print(
            f"  full build      {b['build_s']:7.1f} s wall  ({s.filings} filings -> "
            f"{s.filing_chunks} filing chunks, {s.market_chunks} market chunks; "
            f"{s.chunks_embedded / b['build_s']:.1f} chunks/s overall)"
        )
        print(f"    chunk filings {b['chunk_s']:7.1f} s")
        print(
            f"    embed         {s.seconds_embedding:7.1f} s  {s.chunks_embedded} chunks "
            f"-> {rate:.1f} chunks/s (chunks_embedded / seconds_embedding); "
            f"{s.chunks_shared} repeated passages share a vector"
        )
        rest = b["build_s"] - b["chunk_s"] - s.seconds_embedding
        print(f"    other         {rest:7.1f} s  (market chunks, LanceDB writes, FTS index)")
        print(f"  model load      {b['model_load_s']:7.1f} s  (before the build, not in it)")
    ref: IndexSummary = b["refresh"]
    print(
        f"  refresh         {b['refresh_s']:7.1f} s wall  ({ref.chunks_embedded} chunks "
        f"embedded, {ref.filings_embedded} filings re-chunked, {ref.removed} removed; "
        f"{ref.filing_chunks} filing + {ref.market_chunks} market chunks in the index)"
    )
    checks.append(
        ("refresh embeds nothing", ref.chunks_embedded == 0, f"{ref.chunks_embedded} embedded")
    )
    print()
    print(f"## 2./3. latency, ms ({len(queries)} queries x{REPEATS} after a warm-up)")
    print("  stage                            p50     p95    mean     max")
    rows = [("query embedding (embed_query)", emb)]
    rows += [(f"retrieve {mode}", lat[mode]) for mode in MODES]
    for name, xs in rows:
        print(
            f"  {name:<30} {ms(pct(xs, 50))} {ms(pct(xs, 95))} {ms(float(np.mean(xs)))} "
            f"{ms(max(xs))}"
        )
    print("  retrieve runs with the query vector already cached, so its figures exclude query")
    print(f"  embedding (k={K}, no token budget cut, filing_share 1.0)")
    print()
    print(f"## 4. quality, filing track ({len(queries)} labelled queries, k={K})")
    print("  mode           recall@5  MRR@10  | right filing@5  right section@5 (any period)")
    for mode in MODES:
        m = qual[mode]
        print(
            f"  {mode:<14} {m['recall5']:8.3f}  {m['mrr10']:6.3f}  | "
            f"{m['filing5']:14.3f}  {m['section5']:15.3f}"
        )
    short = [n for n in qual["hybrid"]["n_filing_items"] if n < K]
    if short:
        print(f"  ({len(short)} queries returned fewer than {K} filing items)")
    print()
    print("  queries some mode misses at 5: rank of the target per mode ('-': not in the top 10),")
    print("  then the first filing item dense and hybrid returned instead")
    print(f"  line ticker target{'':32}" + " ".join(f"{SHORT[m]:>6}" for m in MODES))
    any_miss = False
    for i, q in enumerate(queries):
        ranks = [qual[m]["ranks"][i] for m in MODES]
        if all(rk and rk <= 5 for rk in ranks):
            continue
        any_miss = True
        t = q["target"]
        target = f"{t['form']} FY{t['fiscal_year']} {t['fiscal_period']} {t['section_key']}"
        cells = " ".join(f"{rk if rk else '-':>6}" for rk in ranks)
        print(f"  {q['line']:>4} {q['ticker']:<6} {target:<38}{cells}")
        first = {
            m: describe(next(iter(filing_items(results[m][i])), None), filings)
            for m in ("dense", "hybrid")
        }
        print(f"         {q['query'][:92]}")
        print(f"         first: dense {first['dense']}; hybrid {first['hybrid']}")
    if not any_miss:
        print("  (none)")
    print()
    print("## 5. point-in-time")
    seen = pit["seen"]
    print(
        f"  {pit['calls']} retrieve calls: {len(queries)} labelled queries x {len(MODES)} modes "
        f"x 2 filing shares, {RANDOM_DATES} random as_of dates (1-3 tickers, seed {args.seed})"
    )
    print(
        f"  {seen.get('filing', 0)} filing + {seen.get('market', 0)} market items checked; "
        f"violations (filed > as_of or end > as_of): {len(pit['violations'])}"
    )
    for v in pit["violations"][:10]:
        print(f"    {v}")
    checks.append(
        ("point-in-time: nothing after as_of", not pit["violations"], f"{len(pit['violations'])}")
    )
    print()
    hp50 = pct(lat["hybrid"], 50) * 1000
    checks.append(
        ("hybrid p50 < 50 ms, excl. query embedding", hp50 < P50_TARGET_MS, f"{hp50:.1f} ms")
    )
    hr, dr = qual["hybrid"]["recall5"], qual["dense"]["recall5"]
    checks.append(("hybrid recall@5 >= dense recall@5", hr >= dr, f"{hr:.3f} vs {dr:.3f}"))
    total_s = time.perf_counter() - t_start
    print("## checks")
    for name, ok, detail in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {name:<44} {detail}")
    if b["reused"]:
        name = "whole run < 15 min incl. a build"
        print(f"  n/a   {name:<44} {total_s / 60:.1f} min, index reused")
    else:
        ok = total_s < TIME_LIMIT_S
        checks.append(("whole run < 15 min", ok, ""))
        print(
            f"  {'PASS' if ok else 'FAIL'}  {'whole run < 15 min incl. the build':<44} "
            f"{total_s / 60:.1f} min"
        )
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
