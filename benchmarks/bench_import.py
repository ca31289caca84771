"""Import benchmark: `runs import` of a generic JSONL of published-style labelled answers
(benchmarks/synthetic_runs.py: 150 questions × 4 models × 4 conditions = 2,400 runs by
default), measured side by side in one run with what it is made of:

1. the reader alone (parse + validate every line);
2. the whole import into a fresh workspace without a store (no question resolution);
3. the whole import into a fresh workspace with the store (150 questions resolved), the
   command a user runs — the target is under 20 s on 2 cores;
4. importing the same file again (idempotent: reads, hashes, finds every run stored);
5. `report --scores labels` on the result.

    .venv/bin/python -m benchmarks.bench_import [--questions 150] [--store data/fintrade.duckdb]

Everything is written under a temp dir; the store is only read.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from benchmarks import harness, synthetic_runs
from fintrade_tui.imports import generic

WITH_STORE = "import with the store (questions resolved)"


def main() -> None:
    a = synthetic_runs.bench_args(__doc__)
    steps = harness.Steps()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "published.jsonl"
        n = synthetic_runs.write(path, a.questions)
        size = path.stat().st_size / 1e6
        for rep in range(a.reps):
            harness.log(f"rep {rep + 1}/{a.reps}")
            took, count = harness.clock(lambda: sum(1 for _ in generic.read(path)))
            assert count == n
            steps.add("reader only (parse + validate)", took)
            no_store = harness.write_config(
                root / f"nostore{rep}", a.bundle, root / "absent.duckdb"
            )
            steps.add(
                "import, no store (questions kept unresolved)",
                harness.cli(no_store, "runs", "import", str(path))[0],
            )
            cfg = harness.write_config(root / f"store{rep}", a.bundle, a.store)
            steps.add(WITH_STORE, harness.cli(cfg, "runs", "import", str(path))[0])
            steps.add(
                "import again (every run already stored)",
                harness.cli(cfg, "runs", "import", str(path))[0],
            )
            steps.add(
                "report --scores labels",
                harness.cli(cfg, "report", "--scores", "labels", "--json", "--resamples", "1000")[
                    0
                ],
            )
    full = statistics.median(steps[WITH_STORE])
    harness.report(
        f"{n} runs, {a.questions} questions, {size:.1f} MB, best/median of {a.reps} runs",
        steps.COLUMNS,
        steps.rows(n),
        [f"import with the store: {full:.2f} s median (target < 20 s)"],
    )


if __name__ == "__main__":
    main()
