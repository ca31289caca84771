"""RAG at the server's speed: every seed question run against an OpenAI-compatible server that
answers at once, so what bounds a batch is the project's own work (evidence, prompts, records).

Run from the project root, with the store and the whole retrieval index built (`fintrade-tui
ingest`, `fintrade-tui index`: the bench reads the checkout's index and never builds it):

    .venv/bin/python -m benchmarks.bench_rag_speed [--limit N] [--concurrency 16]

Measures, in one run, over the 150 seeds of the bundle (imported into a temporary workspace):
1. evidence for the questions that span the universe (≥ 50 tickers): `Runner.prepare` of the
   RAG run, each timed alone — median and p90 (target: median < 300 ms);
2. a batch of the seeds × RAG (`run_batch`, --concurrency at once): runs/s (target ≥ 5);
3. a batch of the seeds × No-RAG, Oracle and Indicator-RAG: runs/s (target ≥ 18).
The server is tests/stub_openai.py's on loopback (a streamed answer, usage, no delay): real
sockets and litellm's OpenAI client, no model.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import harness
from fintrade_tui.config import Config, ModelConfig, load_config
from fintrade_tui.runs.runner import Runner, RunSpec
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore

ANSWER = "AAPL's RSI was 55 on the day, not overbought; see the evidence."
UNIVERSE = 50  # a question naming at least this many tickers spans the universe
NON_RAG = ["no_rag", "oracle", "indicator_rag"]


def _config(folder: Path, base: str, concurrency: int) -> Config:
    cfg = load_config()
    model = ModelConfig(model="openai/instant", api_base=base, api_key_env="INSTANT_KEY")
    cfg = cfg.model_copy(update={"workspace": folder / "ws.duckdb", "models": {"instant": model}})
    cfg.runs = cfg.runs.model_copy(update={"concurrency": concurrency, "per_model": concurrency})
    return cfg


def _batch(cfg: Config, specs: list[RunSpec], concurrency: int) -> tuple[float, dict]:
    from fintrade_tui.runs.batch import run_batch

    with open_workspace(cfg.workspace) as ws:
        t0 = time.perf_counter()
        s = asyncio.run(run_batch(Runner(cfg, RunStore(ws)), specs, concurrency, concurrency))
        return time.perf_counter() - t0, dict(s.status)


def main() -> int:
    import os

    from fintrade_tui.application.readiness import ensure_questions
    from fintrade_tui.retrieval.index import Index
    from fintrade_tui.retrieval.indexing import eligible_all, needs_market, unindexed
    from fintrade_tui.store.db import connect
    from fintrade_tui.workspace.questions import load_questions

    sys.path.insert(0, str(harness.ROOT))
    from tests.stub_openai import serving

    ap = harness.parser(__doc__)
    ap.add_argument("--limit", type=int, default=0, help="the first N seeds only (0: all)")
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args()
    os.environ.setdefault("INSTANT_KEY", "sk-instant")
    start = harness.load()
    with tempfile.TemporaryDirectory() as tmp, serving([{"text": ANSWER}]) as stub:
        cfg = _config(Path(tmp), stub.base, args.concurrency)
        with open_workspace(cfg.workspace) as ws:
            ensure_questions(cfg, ws, lambda *a, **k: None)
            questions = sorted(load_questions(ws), key=lambda q: q.id)
        questions = questions[: args.limit] if args.limit else questions
        # the bench measures runs, not indexing: the index must hold what they ask for
        index = Index(cfg)
        tickers = sorted({t for q in questions for t in q.tickers})
        with connect(cfg.store, read_only=True) as con:
            lacking = needs_market(index, con, tickers)
            lacking += unindexed(index, con, eligible_all(con, tickers, None))
        if not index.manifest_path.is_file() or lacking:
            raise SystemExit(
                f"{index.path}: lacks {len(lacking)} tickers or filings the seeds ask about"
                " (fix: `fintrade-tui index`)"
            )
        wide = [q for q in questions if len(q.tickers) >= UNIVERSE]
        harness.log(f"{len(questions)} seeds, {len(wide)} spanning the universe")

        if not wide:
            raise SystemExit("no seed spans the universe: drop --limit")
        runner = Runner(cfg, None)
        runner.prepare(RunSpec(wide[0], "rag", "instant"))  # the embedder loaded once
        evidence = []
        for q in wide:
            t0 = time.perf_counter()
            runner.prepare(RunSpec(q, "rag", "instant"))
            evidence.append(time.perf_counter() - t0)
        harness.log(f"evidence: median {statistics.median(evidence) * 1000:.0f} ms")

        rag = [RunSpec(q, "rag", "instant", batch="rag") for q in questions]
        rag_s, rag_status = _batch(cfg, rag, args.concurrency)
        harness.log(f"RAG batch: {len(rag)} runs in {rag_s:.1f} s {rag_status}")
        other = [RunSpec(q, c, "instant", batch="other") for q in questions for c in NON_RAG]
        other_s, other_status = _batch(cfg, other, args.concurrency)
        harness.log(f"non-RAG batch: {len(other)} runs in {other_s:.1f} s {other_status}")

    median_ms = statistics.median(evidence) * 1000
    p90_ms = harness.pct([e * 1000 for e in evidence], 90)
    rows = [
        [
            "evidence, universe questions (RAG)",
            len(wide),
            f"{median_ms:.0f} ms",
            f"{p90_ms:.0f} ms",
        ],
        ["batch: seeds × RAG", len(rag), f"{len(rag) / rag_s:.1f} runs/s", f"{rag_s:.1f} s"],
        [
            "batch: seeds × No-RAG, Oracle, Indicator-RAG",
            len(other),
            f"{len(other) / other_s:.1f} runs/s",
            f"{other_s:.1f} s",
        ],
    ]
    done = rag_status.get("completed", 0) == len(rag) and other_status.get("completed", 0) == len(
        other
    )
    lines, status = harness.checks(
        [
            ("every run completed", done, f"{rag_status} {other_status}"),
            ("evidence median < 300 ms", median_ms < 300, f"{median_ms:.0f} ms"),
            ("RAG ≥ 5 runs/s", len(rag) / rag_s >= 5, f"{len(rag) / rag_s:.1f}"),
            ("non-RAG ≥ 18 runs/s", len(other) / other_s >= 18, f"{len(other) / other_s:.1f}"),
        ]
    )
    harness.report(
        [
            f"RAG at the server's speed: {len(questions)} seeds, an instant server on loopback,"
            f" concurrency {args.concurrency}",
            harness.machine(start),
        ],
        ["what", "n", "median / rate", "p90 / wall"],
        rows,
        lines,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
