"""Recency benchmark: does retrieval prefer the latest filing by as_of, without losing recall?

Run from the project root:

    .venv/bin/python -m benchmarks.bench_recency                     # fresh index: 10-20 min
    .venv/bin/python -m benchmarks.bench_recency --index /tmp/ftr-recency-index

`--index PATH` is the LanceDB folder to use: built there (7 tickers, from the store opened
read-only) when it holds no index yet, otherwise reused as it is (no refresh: delete the folder
to pick up store or chunking changes). Without it the index is built into a
temp dir removed at the end. The embedding settings are the config's (`--precision` picks
another option, e.g. to reuse an index built with it). Index building, query
loading and the point-in-time draws are bench_retrieval's own (retrieval_quality.py).

Every variant of the recency step of `search.retrieve` (its `recency` argument) is run over two
label sets, filing track only (k=10, no token-budget cut, filing_share 1.0):

- recency labels, tests/data/retrieval_recency.jsonl: time-sensitive questions whose answer
  is the latest filing filed on or before as_of (as_of dates just after a filing, just before
  the next, in between). latest@3 = share of queries with that filing (any section) among the
  first 3 filing items; target@3 = with its target section there;
- the original labels, tests/data/retrieval_queries.jsonl: recall@5 and MRR@10 as
  bench_retrieval.py counts them (hit = ticker, form, section, fiscal year and period).

Variants: off (`recency=False`, the plain fused/reranked order), dedup only (`recency=0.0`)
and the age prior at several strengths, counting newer filings of any form or of the same form
(`recency.BY_FORM`, set for the variant), with and without dedup (`recency.DUP_JACCARD`); the
default, `recency=True`, is `recency.STRENGTH` with the module's defaults.

Then the point-in-time check: every item of every pass, and
bench_retrieval's labelled-query and random as_of draws (with the default recency), must have
nothing filed (or ending) after as_of. Exit 1 when the default misses a target: hybrid latest@3
>= 0.90, hybrid recall@5 >= 0.800, no point-in-time violation.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb
import numpy as np

from benchmarks import bench_retrieval as br
from benchmarks import harness
from benchmarks import retrieval_quality as rq
from fintrade_tui.config import Config
from fintrade_tui.retrieval import recency as rec
from fintrade_tui.retrieval.search import MODES, retrieve

RECENCY = harness.ROOT / "tests" / "data" / "retrieval_recency.jsonl"
TOP = 3
LATEST_TARGET = 0.90
RECALL_TARGET = 0.800
BY_FORM, DUP = rec.BY_FORM, rec.DUP_JACCARD  # the defaults, restored after the sweep
# (name, retrieve's `recency`, recency.BY_FORM, dedup on)
VARIANTS: list[tuple[str, bool | float, bool, bool]] = [
    ("off", False, True, False),
    ("dedup only", 0.0, True, True),
    ("any-form 0.1", 0.1, False, True),
    ("any-form 0.2", 0.2, False, True),
    ("no dedup 0.2", 0.2, True, False),
    ("by-form 0.1", 0.1, True, True),
    (f"default {rec.STRENGTH:g}", True, True, True),
    ("by-form 0.3", 0.3, True, True),
]
DEFAULT = f"default {rec.STRENGTH:g}"


def run(cfg: Config, q: dict, mode: str, recency: bool | float) -> tuple[list[dict], float]:
    """The query's filing items with this `recency`, and the seconds `retrieve` took."""
    seconds, items = harness.clock(
        lambda: retrieve(
            cfg,
            q["query"],
            [q["ticker"]],
            q["as_of"],
            k=rq.K,
            token_budget=rq.BIG_BUDGET,
            mode=mode,
            recency=recency,
        )
    )
    return items, seconds


def latest_eligible(q: dict, filings: dict[str, dict]) -> set[str]:
    """Accessions of the ticker's latest filing filed on or before as_of (ties: all)."""
    mine = [f for f in filings.values() if f["ticker"] == q["ticker"] and f["filed"] <= q["as_of"]]
    last = max(f["filed"] for f in mine)
    return {f["accession"] for f in mine if f["filed"] == last}


def check_labels(queries: list[dict], filings: dict[str, dict]) -> None:
    """Each recency target must be the latest eligible filing itself (not just eligible)."""
    for q in queries:
        acc = q["target"].get("accession")
        if acc not in latest_eligible(q, filings):
            sys.exit(f"{RECENCY} line {q['line']}: target {acc} is not the latest filing by as_of")


def recency_quality(queries: list[dict], results: list, filings: dict[str, dict]) -> dict:
    """latest@TOP, target@TOP and latest@1 of results for the recency labels, and the misses."""
    latest, target, first, misses = 0, 0, 0, []
    for q, items in zip(queries, results, strict=True):
        fi = rq.filing_items(items)[:TOP]
        want, t = latest_eligible(q, filings), q["target"]
        got = any(it["accession"] in want for it in fi)
        latest += got
        target += any(
            it["accession"] == t["accession"] and it["section_key"] == t["section_key"] for it in fi
        )
        first += bool(fi) and fi[0]["accession"] in want
        if not got:
            misses.append((q, fi))
    n = len(queries)
    return {"latest3": latest / n, "target3": target / n, "first": first / n, "misses": misses}


def embed_option(cfg: Config) -> str:
    """The embedding option the config's `retrieval.precision` resolves to."""
    from fintrade_tui.retrieval.embed import precision

    return precision(cfg.retrieval.precision)


def main() -> int:
    ap = harness.parser(__doc__)
    ap.add_argument("--index", type=Path, help="LanceDB folder to build into or reuse")
    ap.add_argument("--seed", type=int, default=7, help="seed of the random as_of draws")
    ap.add_argument("--modes", default="dense,hybrid", help="modes of the variant sweep")
    ap.add_argument("--precision", help="embedding option (default: the config's)")
    ap.add_argument("--children", help="child/overlap tokens, e.g. 400/40 (default: config's)")
    args = ap.parse_args()
    tmp = None if args.index else Path(tempfile.mkdtemp(prefix="ftr-bench-recency-"))
    cfg = rq.bench_config(args.index or tmp / "lancedb")
    if args.precision:  # e.g. bf16 to keep reusing an index built before the default changed
        cfg.retrieval.precision = args.precision
    if args.children:
        child, overlap = (int(x) for x in args.children.split("/"))
        cfg.retrieval.child_tokens, cfg.retrieval.overlap_tokens = child, overlap
    try:
        return report(cfg, args)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def report(cfg: Config, args: argparse.Namespace) -> int:
    """Build or reuse the index, run the sweep and the point-in-time check, print the report."""
    con = duckdb.connect(str(cfg.store), read_only=True)
    filings = rq.store_filings(con)
    recent = rq.load_queries(RECENCY, filings)
    check_labels(recent, filings)
    orig = rq.load_queries(rq.QUERIES, filings)
    if (cfg.retrieval.index / "manifest.json").is_file():
        b = {"path": cfg.retrieval.index}  # reused as it is: no refresh, so nothing re-embeds
    else:
        b = br.build_index(cfg, con)
        s = b["build"]
        print(
            f"index build, 7 filing companies from the built store: {b['build_s']:.0f} s"
            f" ({s.filing_chunks:,} filing + {s.market_chunks:,} market chunks; chunking"
            f" {b['chunk_s']:.0f} s; {s.chunks_embedded:,} embedded, {s.chunks_shared:,}"
            f" repeats sharing a vector; embedding"
            f" {s.seconds_embedding:.0f} s = {s.chunks_embedded / s.seconds_embedding:.1f}"
            f" chunks/s; {cfg.retrieval.precision} -> {embed_option(cfg)},"
            f" {cfg.retrieval.embed_tokens} word pieces)",
            flush=True,
        )
    con.close()
    res, lat, bad, pit = sweep(cfg, args, recent, orig, filings)

    r = cfg.retrieval
    print(
        f"# recency benchmark  (model {r.model}, {embed_option(cfg)}, {r.embed_tokens} word"
        f" pieces, children {r.child_tokens}/{r.overlap_tokens}; index {b['path']})"
    )
    print(
        f"{len(recent)} recency labels ({RECENCY.name}), {len(orig)} original labels "
        f"({rq.QUERIES.name}); filing track, k={rq.K}; prior: bonus = strength x "
        f"{rec.DECAY:g}^(newer eligible filings: by-form = of the same form, the default "
        f"{BY_FORM}) x top score; dedup at word-trigram Jaccard >= {DUP:g}"
    )
    print()
    d = res[(DEFAULT, "hybrid")]
    print(f"recency labels the default hybrid misses at {TOP} (latest eligible filing absent):")
    for q, fi in d["misses"]:
        got = ", ".join(f"{it['form']} {it['filed']} {it['section_key']}" for it in fi)
        print(f"  line {q['line']:>2} {q['ticker']} as of {q['as_of']}: {q['query'][:70]}")
        print(f"          got: {got or '(nothing)'}")
    if not d["misses"]:
        print("  (none)")
    print()
    n_items = sum(pit["seen"].values())
    print(
        f"point-in-time: {len(bad)} violations (every pass above, plus {pit['calls']} "
        f"bench_retrieval draws with {n_items} items)"
    )
    for v in bad[:10]:
        print(f"  {v}")
    print()
    lines, status = harness.checks(
        [
            (
                f"hybrid latest@{TOP} >= {LATEST_TARGET:.2f}",
                d["latest3"] >= LATEST_TARGET,
                f"{d['latest3']:.3f}",
            ),
            (
                f"hybrid recall@5 >= {RECALL_TARGET:.3f}",
                d["recall5"] >= RECALL_TARGET - 1e-9,
                f"{d['recall5']:.3f}",
            ),
            ("point-in-time: nothing after as_of", not bad, str(len(bad))),
        ]
    )
    rows = [
        [name, mode, f"{m['latest3']:.3f}", f"{m['target3']:.3f}", f"{m['first']:.3f}"]
        + [f"{m['recall5']:.3f}", f"{m['mrr10']:.3f}", f"{m['filing5']:.3f}"]
        + [f"{float(np.percentile(lat[(name, mode)], 50)) * 1000:.1f}"]
        for (name, mode), m in res.items()
    ]
    harness.report(
        "## the recency variants: recency labels | original labels",
        ["variant", "mode", f"latest@{TOP}", f"target@{TOP}", "latest@1", "recall@5", "MRR@10"]
        + ["filing@5", "p50 ms"],
        rows,
        ["## checks (default recency)", *lines],
    )
    return status


def sweep(
    cfg: Config, args: argparse.Namespace, recent: list[dict], orig: list[dict], filings: dict
) -> tuple[dict, dict, list[str], dict]:
    """Every variant over both label sets: the quality per (variant, mode), the latencies, the
    point-in-time violations and bench_retrieval's draws with the default recency."""
    qcfg = cfg.model_copy(deep=True)
    qcfg.retrieval.filing_share = 1.0
    sweep_modes = [m for m in args.modes.split(",") if m]
    bad: list[str] = []
    res: dict[tuple[str, str], dict] = {}
    lat: dict[tuple[str, str], list[float]] = {}
    full_default: dict[str, list] = {}
    for q in recent + orig:  # warm-up: query vectors cached, tables open
        run(qcfg, q, "hybrid", False)
    for name, value, by_form, dedup in VARIANTS:
        modes = MODES if name in ("off", DEFAULT) else sweep_modes
        rec.BY_FORM, rec.DUP_JACCARD = by_form, (DUP if dedup else None)
        for mode in modes:
            harness.log(f"variant {name}, mode {mode}")
            out: dict[str, list] = {}
            times: list[float] = []
            for label, queries in (("recent", recent), ("orig", orig)):
                out[label] = []
                for q in queries:
                    items, s = run(qcfg, q, mode, value)
                    out[label].append(items)
                    times.append(s)
                    bad += rq.pit_violations(items, q["as_of"])[0]
            res[(name, mode)] = {
                **recency_quality(recent, out["recent"], filings),
                **rq.quality(orig, out["orig"], filings),
            }
            lat[(name, mode)] = times
            if name == DEFAULT:
                full_default[mode] = out["orig"]
    rec.BY_FORM, rec.DUP_JACCARD = BY_FORM, DUP
    harness.log("point-in-time: bench_retrieval's labelled and random draws (default recency)")
    pit = rq.point_in_time(cfg, orig, full_default, args.seed)
    return res, lat, bad + pit["violations"], pit


if __name__ == "__main__":
    sys.exit(main())
