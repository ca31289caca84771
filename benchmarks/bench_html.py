"""HTML export benchmark: one case study and a 150-case view report, timed side by side in one
run on a workspace of published-style answers (benchmarks/synthetic_runs.py: 150 questions × 4
models × 4 conditions, imported with `runs import` and resolved against the store).

1. one case's HTML (a question's 16 runs, company quarter and charts), without screenshots —
   the target is under 1 s on 2 cores;
2. the same case with the Arena and Company screenshots the explorer draws headlessly;
3. the Markdown case study of the same runs, for scale;
4. a view report of 150 failure cases with the accuracy matrix — the target is under 10 s.

    .venv/bin/python benchmarks/bench_html.py [--store data/fintrade.duckdb] [--reps 3]

Everything is written under a temp dir; the store is only read.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import synthetic_runs  # noqa: E402
from fintrade_tui.cli import main  # noqa: E402
from fintrade_tui.config import load_config  # noqa: E402


def _timed(fn: Callable[[], object], reps: int) -> tuple[float, float, float]:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times), max(times)


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default="data/fintrade.duckdb")
    ap.add_argument("--bundle", default="../shared/data")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cases", type=int, default=150)
    args = ap.parse_args()
    store = Path(args.store).resolve()
    if not store.is_file():
        raise SystemExit(f"{store}: no store (fix: `fintrade-tui ingest` first)")

    from fintrade_tui.exports.case_data import runs_of_question
    from fintrade_tui.exports.case_study import write_case_study
    from fintrade_tui.exports.html_report import write_case_html
    from fintrade_tui.exports.html_view import write_view_html
    from fintrade_tui.judging.failures import failure_cases
    from fintrade_tui.judging.session import accuracy_report
    from fintrade_tui.store.db import connect
    from fintrade_tui.ui.screenshots import shoot
    from fintrade_tui.workspace.connection import open_workspace

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg_path = folder / "config.yaml"
        cfg_path.write_text(
            f"bundle: {Path(args.bundle).resolve()}\nstore: {store}\n"
            f"workspace: {folder / 'ws.duckdb'}\n"
        )
        runs_file = folder / "runs.jsonl"
        synthetic_runs.write(runs_file, questions=150)
        res = CliRunner().invoke(
            main, ["--config", str(cfg_path), "runs", "import", str(runs_file)]
        )
        if res.exit_code != 0:
            raise SystemExit(f"runs import failed: {res.output}")
        cfg = load_config(str(cfg_path))
        with connect(cfg.store, read_only=True) as st, open_workspace(cfg.workspace) as ws:
            qid = ws.execute("SELECT question_id FROM runs ORDER BY id LIMIT 1").fetchone()[0]
            ids = runs_of_question(ws, qid)
            out = folder / "out"
            plain = _timed(lambda: write_case_html(cfg, ws, ids, out / "c.html", store_con=st),
                           args.reps)  # fmt: skip

            def with_shots() -> None:
                shots = {
                    "Arena": shoot(cfg, "arena", run_ids=ids, store=st, workspace=ws),
                    "Company": shoot(cfg, "company", ticker="AAPL", store=st, workspace=ws),
                }
                write_case_html(cfg, ws, ids, out / "s.html", store_con=st, screenshots=shots)

            shots = _timed(with_shots, args.reps)
            md = _timed(lambda: write_case_study(cfg, ws, ids, out / "c.md"), args.reps)
            _, table = accuracy_report(ws, "labels", None, "no_rag", 10000)
            cases = failure_cases(ws)[: args.cases]
            view = _timed(
                lambda: write_view_html(cfg, ws, cases, table, out / "v.html", store_con=st),
                args.reps,
            )
            size_case = (out / "c.html").stat().st_size
            size_view = (out / "v.html").stat().st_size

    print(f"HTML export, median of {args.reps} (min-max), store {store}")
    print(f"{'what':<48} {'median s':>9} {'min':>7} {'max':>7}")
    rows = [
        (f"case HTML, {len(ids)} runs ({size_case / 1024:.0f} KiB)", plain),
        ("case HTML + Arena and Company screenshots", shots),
        ("case Markdown, same runs", md),
        (f"view report, {len(cases)} cases ({size_view / 1024:.0f} KiB)", view),
    ]
    for what, (med, lo, hi) in rows:
        print(f"{what:<48} {med:>9.3f} {lo:>7.3f} {hi:>7.3f}")
    print(f"targets: case < 1 s: {plain[0] < 1.0}; 150-case view < 10 s: {view[0] < 10.0}")


if __name__ == "__main__":
    main_()
