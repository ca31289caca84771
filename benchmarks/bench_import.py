"""Import benchmark: `runs import` of a generic JSONL of published-style labelled answers
(benchmarks/synthetic_runs.py: 150 questions × 4 models × 4 conditions = 2,400 runs by
default), measured side by side in one run with what it is made of:

1. the reader alone (parse + validate every line);
2. the whole import into a fresh workspace without a store (no question resolution);
3. the whole import into a fresh workspace with the store (150 questions resolved), the
   command a user runs — the target is under 20 s on 2 cores;
4. importing the same file again (idempotent: reads, hashes, finds every run stored);
5. `report --scores labels` on the result.

    .venv/bin/python benchmarks/bench_import.py [--questions 150] [--store data/fintrade.duckdb]

Everything is written under a temp dir; the store is only read.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import synthetic_runs  # noqa: E402
from fintrade_tui.cli import main  # noqa: E402
from fintrade_tui.imports import generic  # noqa: E402


def _cli(cfg: Path, *args: str) -> float:
    t = time.perf_counter()
    res = CliRunner().invoke(main, ["--config", str(cfg), *args])
    if res.exit_code != 0:
        raise SystemExit(f"{' '.join(args)} failed: {res.output}")
    return time.perf_counter() - t


def _config(folder: Path, bundle: Path, store: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cfg = folder / "config.yaml"
    cfg.write_text(f"bundle: {bundle}\nstore: {store}\nworkspace: {folder / 'ws.duckdb'}\n")
    return cfg


def main_() -> None:
    a = synthetic_runs.bench_args(__doc__.splitlines()[0])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "published.jsonl"
        n = synthetic_runs.write(path, a.questions)
        size = path.stat().st_size / 1e6
        print(f"{n} runs, {a.questions} questions, {size:.1f} MB, best/median of {a.reps} runs\n")
        rows: dict[str, list[float]] = {}
        for rep in range(a.reps):
            t = time.perf_counter()
            assert sum(1 for _ in generic.read(path)) == n
            rows.setdefault("reader only (parse + validate)", []).append(time.perf_counter() - t)
            no_store = _config(root / f"nostore{rep}", a.bundle, root / "absent.duckdb")
            rows.setdefault("import, no store (questions kept unresolved)", []).append(
                _cli(no_store, "runs", "import", str(path))
            )
            cfg = _config(root / f"store{rep}", a.bundle, a.store.resolve())
            rows.setdefault("import with the store (questions resolved)", []).append(
                _cli(cfg, "runs", "import", str(path))
            )
            rows.setdefault("import again (every run already stored)", []).append(
                _cli(cfg, "runs", "import", str(path))
            )
            rows.setdefault("report --scores labels", []).append(
                _cli(cfg, "report", "--scores", "labels", "--json", "--resamples", "1000")
            )
        width = max(len(k) for k in rows)
        print(f"{'step':<{width}}  {'best s':>8}  {'median s':>8}  {'runs/s':>8}")
        for k, v in rows.items():
            best = min(v)
            print(f"{k:<{width}}  {best:8.2f}  {statistics.median(v):8.2f}  {n / best:8.0f}")
        full = statistics.median(rows["import with the store (questions resolved)"])
        print(f"\nimport with the store: {full:.2f} s median (target < 20 s)")


if __name__ == "__main__":
    main_()
