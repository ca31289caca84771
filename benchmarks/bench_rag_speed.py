"""RAG at the server's speed: every seed question run against an OpenAI-compatible server that
answers at once, so what bounds a batch is the project's own work (evidence, prompts, records).

Run from the project root, with the store and the whole retrieval index built (`fintrade-tui
ingest`, `fintrade-tui index`: the bench reads the checkout's index and never builds it):

    .venv/bin/python -m benchmarks.bench_rag_speed [--limit N] [--concurrency 16] [--skip-rag]

Measures, in one run, over the 150 seeds of the bundle (imported into a temporary workspace):
1. evidence for the questions that span the universe (≥ 50 tickers): `Runner.prepare` of the
   RAG run, each timed alone — median and p90 (target: median < 300 ms);
2. a batch of the seeds × RAG (`run_batch`, --concurrency at once): runs/s (target ≥ 5);
3. a batch of the seeds × No-RAG, Oracle and Indicator-RAG: runs/s (target ≥ 18).
--skip-rag measures 3. alone (no index needed).
The server is tests/stub_openai.py's on loopback, in a process of its own as a real server is
(a streamed answer, usage, no delay): real sockets and litellm's OpenAI client, no model. The
batches write their records as `run` does (`BufferedRunStore`: grouped transactions).
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
from fintrade_tui.workspace.write_behind import BufferedRunStore

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

    # records grouped as `run` writes them (BufferedRunStore), the last group landed in the time
    with open_workspace(cfg.workspace) as ws:
        t0 = time.perf_counter()
        with BufferedRunStore(ws) as store:
            s = asyncio.run(run_batch(Runner(cfg, store), specs, concurrency, concurrency))
        return time.perf_counter() - t0, dict(s.status)


def _check_index(cfg: Config, questions: list) -> None:
    """The bench measures runs, not indexing: the index must hold what the seeds ask for."""
    from fintrade_tui.retrieval.index import Index
    from fintrade_tui.retrieval.indexing import eligible_all, needs_market, unindexed
    from fintrade_tui.store.db import connect

    index = Index(cfg)
    tickers = sorted({t for q in questions for t in q.tickers})
    with connect(cfg.store, read_only=True) as con:
        lacking = needs_market(index, con, tickers)
        lacking += unindexed(index, con, eligible_all(con, tickers, None))
    if not index.manifest_path.is_file() or lacking:
        raise SystemExit(
            f"{index.path}: lacks {len(lacking)} tickers or filings the seeds ask about"
            " (fix: `fintrade-tui index`, or --skip-rag)"
        )


def _evidence_times(cfg: Config, wide: list) -> list[float]:
    """Seconds of `Runner.prepare` for each universe question's RAG run, the embedder loaded."""
    runner = Runner(cfg, None)
    runner.prepare(RunSpec(wide[0], "rag", "instant"))  # the embedder loaded once
    times = []
    for q in wide:
        t0 = time.perf_counter()
        runner.prepare(RunSpec(q, "rag", "instant"))
        times.append(time.perf_counter() - t0)
    return times


def main() -> int:
    import os

    from fintrade_tui.application.readiness import ensure_questions
    from fintrade_tui.workspace.questions import load_questions

    sys.path.insert(0, str(harness.ROOT))
    from tests.stub_openai import serving_apart

    ap = harness.parser(__doc__)
    ap.add_argument("--limit", type=int, default=0, help="the first N seeds only (0: all)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--skip-rag", action="store_true", help="only the non-RAG batch (no index)")
    args = ap.parse_args()
    os.environ.setdefault("INSTANT_KEY", "sk-instant")
    start = harness.load()
    rows, checks, batches = [], [], []
    with tempfile.TemporaryDirectory() as tmp, serving_apart(ANSWER) as base:
        cfg = _config(Path(tmp), base, args.concurrency)
        with open_workspace(cfg.workspace) as ws:
            ensure_questions(cfg, ws, lambda *a, **k: None)
            questions = sorted(load_questions(ws), key=lambda q: q.id)
        questions = questions[: args.limit] if args.limit else questions
        if not args.skip_rag:
            _check_index(cfg, questions)
            wide = [q for q in questions if len(q.tickers) >= UNIVERSE]
            harness.log(f"{len(questions)} seeds, {len(wide)} spanning the universe")
            if not wide:
                raise SystemExit("no seed spans the universe: drop --limit")
            evidence = [t * 1000 for t in _evidence_times(cfg, wide)]
            median_ms = statistics.median(evidence)
            harness.log(f"evidence: median {median_ms:.0f} ms")
            rows.append(
                [
                    "evidence, universe questions (RAG)",
                    len(wide),
                    f"{median_ms:.0f} ms",
                    f"{harness.pct(evidence, 90):.0f} ms",
                ]
            )
            checks.append(("evidence median < 300 ms", median_ms < 300, f"{median_ms:.0f} ms"))
            rag = [RunSpec(q, "rag", "instant", batch="rag") for q in questions]
            batches.append(_measured(cfg, rag, args.concurrency, "seeds × RAG", 5))
        other = [RunSpec(q, c, "instant", batch="other") for q in questions for c in NON_RAG]
        label = "seeds × No-RAG, Oracle, Indicator-RAG"
        batches.append(_measured(cfg, other, args.concurrency, label, 18))

    rows += [row for row, _, _ in batches]
    checks += [check for _, check, _ in batches]
    statuses = [sized for _, _, sized in batches]

    done = all(s.get("completed", 0) == n for s, n in statuses)
    checks.insert(0, ("every run completed", done, " ".join(str(dict(s)) for s, _ in statuses)))
    lines, status = harness.checks(checks)
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


def _measured(cfg: Config, specs: list, concurrency: int, label: str, target: float) -> tuple:
    """One batch timed: its table row, its check (≥ `target` runs/s), its statuses and size."""
    seconds, status = _batch(cfg, specs, concurrency)
    rate = len(specs) / seconds
    harness.log(f"{label}: {len(specs)} runs in {seconds:.1f} s {status}")
    row = [f"batch: {label}", len(specs), f"{rate:.1f} runs/s", f"{seconds:.1f} s"]
    return (
        row,
        (f"{label} ≥ {target:g} runs/s", rate >= target, f"{rate:.1f}"),
        (status, len(specs)),
    )


if __name__ == "__main__":
    sys.exit(main())
