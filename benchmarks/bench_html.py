"""HTML export benchmark: one case study and a 150-case view report, timed side by side in one
run on a workspace of published-style answers (benchmarks/synthetic_runs.py: 150 questions × 4
models × 4 conditions, imported with `runs import` and resolved against the store).

1. one case's HTML (a question's 16 runs, company quarter and charts), without screenshots —
   the target is under 1 s on 2 cores;
2. the same case with the Arena and Company screenshots the explorer draws headlessly;
3. the Markdown case study of the same runs, for scale;
4. a view report of 150 failure cases with the accuracy matrix — the target is under 10 s.

    .venv/bin/python -m benchmarks.bench_html [--store data/fintrade.duckdb] [--reps 3]

Everything is written under a temp dir; the store is only read.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks import harness, synthetic_runs
from fintrade_tui.config import load_config


def main() -> None:
    ap = harness.parser(__doc__, reps=3)
    harness.add_store(ap)
    ap.add_argument("--cases", type=int, default=150)
    args = ap.parse_args()
    store = harness.need_store(args.store)

    from fintrade_tui.exports.case_data import runs_of_question
    from fintrade_tui.exports.case_study import write_case_study
    from fintrade_tui.exports.html_report import write_case_html
    from fintrade_tui.exports.html_view import write_view_html
    from fintrade_tui.reports.accuracy import accuracy_report
    from fintrade_tui.reports.failures import failure_cases
    from fintrade_tui.store.db import connect
    from fintrade_tui.ui.screenshots import shoot
    from fintrade_tui.workspace.connection import open_workspace

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cfg_path = harness.write_config(folder, args.bundle, store)
        runs_file = folder / "runs.jsonl"
        synthetic_runs.write(runs_file, questions=150)
        harness.cli(cfg_path, "runs", "import", str(runs_file))
        cfg = load_config(str(cfg_path))
        with connect(cfg.store, read_only=True) as st, open_workspace(cfg.workspace) as ws:
            qid = ws.execute("SELECT question_id FROM runs ORDER BY id LIMIT 1").fetchone()[0]
            ids = runs_of_question(ws, qid)
            out = folder / "out"

            def timed(fn: Callable[[], object]) -> harness.Spread:
                return harness.spread(harness.repeat(fn, args.reps))

            plain = timed(lambda: write_case_html(cfg, ws, ids, out / "c.html", store_con=st))

            def with_shots() -> None:
                shots = {
                    "Arena": shoot(cfg, "arena", run_ids=ids, store=st, workspace=ws),
                    "Company": shoot(cfg, "company", ticker="AAPL", store=st, workspace=ws),
                }
                write_case_html(cfg, ws, ids, out / "s.html", store_con=st, screenshots=shots)

            harness.log("case HTML with screenshots")
            shots = timed(with_shots)
            md = timed(lambda: write_case_study(cfg, ws, ids, out / "c.md"))
            _, table = accuracy_report(ws, "labels", None, "no_rag", 10000)
            cases = failure_cases(ws)[: args.cases]
            harness.log(f"view report, {len(cases)} cases")
            view = timed(
                lambda: write_view_html(cfg, ws, cases, table, out / "v.html", store_con=st)
            )
            size_case = (out / "c.html").stat().st_size
            size_view = (out / "v.html").stat().st_size

    rows = [
        (f"case HTML, {len(ids)} runs ({size_case / 1024:.0f} KiB)", plain),
        ("case HTML + Arena and Company screenshots", shots),
        ("case Markdown, same runs", md),
        (f"view report, {len(cases)} cases ({size_view / 1024:.0f} KiB)", view),
    ]
    harness.report(
        f"HTML export, median of {args.reps} (min-max), store {store}",
        ["what", "median s", "min", "max"],
        [[what, *t.cells()] for what, t in rows],
        [f"targets: case < 1 s: {plain.median < 1.0}; 150-case view < 10 s: {view.median < 10.0}"],
    )


if __name__ == "__main__":
    main()
