"""Recency benchmark: does retrieval prefer the latest filing by as_of, without losing recall?

Run from the project root:

    .venv/bin/python benchmarks/bench_recency.py                     # fresh index: 10-20 min
    .venv/bin/python benchmarks/bench_recency.py --index /tmp/ftr-recency-index

`--index PATH` is the LanceDB folder to use: built there (7 tickers, from the store opened
read-only) when it holds no index yet, otherwise reused as it is (no refresh: delete the folder
to pick up store or chunking changes). Without it the index is built into a
temp dir removed at the end. The embedding settings are the config's (`--precision` picks
another option, e.g. to reuse an index built with it). Index building, query
loading and the point-in-time draws are bench_retrieval.py's own functions, imported.

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
import time
from pathlib import Path

import duckdb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_retrieval as br  # noqa: E402

from fintrade_tui.config import Config  # noqa: E402
from fintrade_tui.retrieval import recency as rec  # noqa: E402
from fintrade_tui.retrieval.search import MODES, retrieve  # noqa: E402

RECENCY = br.ROOT / "tests" / "data" / "retrieval_recency.jsonl"
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
    t0 = time.perf_counter()
    items = retrieve(
        cfg,
        q["query"],
        [q["ticker"]],
        q["as_of"],
        k=br.K,
        token_budget=br.BIG_BUDGET,
        mode=mode,
        recency=recency,
    )
    return items, time.perf_counter() - t0


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
    latest, target, first, misses = 0, 0, 0, []
    for q, items in zip(queries, results, strict=True):
        fi = br.filing_items(items)[:TOP]
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
    from fintrade_tui.retrieval.embed import precision

    return precision(cfg.retrieval.precision)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, help="LanceDB folder to build into or reuse")
    ap.add_argument("--seed", type=int, default=7, help="seed of the random as_of draws")
    ap.add_argument("--modes", default="dense,hybrid", help="modes of the variant sweep")
    ap.add_argument("--precision", help="embedding option (default: the config's)")
    ap.add_argument("--children", help="child/overlap tokens, e.g. 400/40 (default: config's)")
    args = ap.parse_args()
    tmp = None if args.index else Path(tempfile.mkdtemp(prefix="ftr-bench-recency-"))
    cfg = br.bench_config(args.index or tmp / "lancedb")
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
    con = duckdb.connect(str(cfg.store), read_only=True)
    cols = ["accession", "ticker", "form", "filed", "fiscal_year", "fiscal_period"]
    filings = {
        row[0]: dict(zip(cols, row, strict=True))
        for row in con.execute(f"SELECT {', '.join(cols)} FROM filings").fetchall()
    }
    recent = br.load_queries(RECENCY, filings)
    check_labels(recent, filings)
    orig = br.load_queries(br.QUERIES, filings)
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
            br.log(f"variant {name}, mode {mode}")
            out: dict[str, list] = {}
            times: list[float] = []
            for label, queries in (("recent", recent), ("orig", orig)):
                out[label] = []
                for q in queries:
                    items, s = run(qcfg, q, mode, value)
                    out[label].append(items)
                    times.append(s)
                    bad += br.pit_violations(items, q["as_of"])[0]
            res[(name, mode)] = {
                **recency_quality(recent, out["recent"], filings),
                **br.quality(orig, out["orig"], filings),
            }
            lat[(name, mode)] = times
            if name == DEFAULT:
                full_default[mode] = out["orig"]
    rec.BY_FORM, rec.DUP_JACCARD = BY_FORM, DUP
    br.log("point-in-time: bench_retrieval's labelled and random draws (default recency)")
    pit = br.point_in_time(cfg, orig, full_default, args.seed)
    bad += pit["violations"]

    r = cfg.retrieval
    print(
        f"# recency benchmark  (model {r.model}, {embed_option(cfg)}, {r.embed_tokens} word"
        f" pieces, children {r.child_tokens}/{r.overlap_tokens}; index {b['path']})"
    )
    print(
        f"{len(recent)} recency labels ({RECENCY.name}), {len(orig)} original labels "
        f"({br.QUERIES.name}); filing track, k={br.K}; prior: bonus = strength x "
        f"{rec.DECAY:g}^(newer eligible filings: by-form = of the same form, the default "
        f"{BY_FORM}) x top score; dedup at word-trigram Jaccard >= {DUP:g}"
    )
    print()
    print(
        f"  {'variant':<13} {'mode':<14} latest@{TOP} target@{TOP} latest@1 | recall@5  MRR@10"
        "  filing@5 | p50 ms"
    )
    for (name, mode), m in res.items():
        p50 = float(np.percentile(lat[(name, mode)], 50)) * 1000
        print(
            f"  {name:<13} {mode:<14} {m['latest3']:8.3f} {m['target3']:8.3f} {m['first']:8.3f} "
            f"| {m['recall5']:8.3f} {m['mrr10']:7.3f} {m['filing5']:9.3f} | {p50:6.1f}"
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
    checks = [
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
    print()
    print("## checks (default recency)")
    for name, ok, detail in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {name:<40} {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
