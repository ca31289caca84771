"""Re-scoring benchmark: `judge --rescore` (answer matcher + numeric audit, no LLM judge) over
the synthetic import of benchmarks/synthetic_runs.py (150 questions × 4 models × 4 conditions =
2,400 labelled answers by default), the command a user runs after `runs import`. The target is
under a minute on 2 cores.

The synthetic file is given a reference answer per question (a figure with a scale, "$412
million"), and every answer labelled correct states it (written another way: "412,000,000
dollars", "$0.412 billion"...), so the matcher has real work and its verdicts can be checked
against the labels. Measured, best and median of --reps:

1. `runs import` of the file into a fresh workspace with the store (setup, shown for scale);
2. `judge --rescore` with the store (the audit reads it), the headline figure;
3. `judge --rescore --mode tolerance` again (a second version of every score appended);
4. `report --scores match` on the result.

    .venv/bin/python benchmarks/bench_rescore.py [--questions 150] [--store data/fintrade.duckdb]

Everything is written under a temp dir; the store is only read.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import synthetic_runs  # noqa: E402
from fintrade_tui.cli import main  # noqa: E402

TARGET_S = 60.0
# the reference's figure as an answer labelled correct may write it (millions)
SAYS = (
    lambda m: f"${m} million",
    lambda m: f"{m * 1_000_000:,} dollars",
    lambda m: f"${m / 1000:g} billion",
    lambda m: f"USD {m}m",
)


def _cli(cfg: Path, *args: str) -> tuple[float, str]:
    t = time.perf_counter()
    res = CliRunner().invoke(main, ["--config", str(cfg), *args])
    if res.exit_code != 0:
        raise SystemExit(f"{' '.join(args)} failed: {res.output}")
    return time.perf_counter() - t, res.output


def with_references(rows: list[dict], seed: int = 7) -> list[dict]:
    """A reference figure per question; answers labelled correct state it, the others a
    different figure (off by 20% or more)."""
    rng = random.Random(seed)
    refs: dict[str, int] = {}
    for r in rows:
        m = refs.setdefault(r["question_id"], rng.randint(120, 980))
        r["reference_answer"] = f"${m} million"
        said = m if r["label"] == "correct" else round(m * rng.choice((0.5, 0.8, 1.25, 1.6)))
        r["answer"] = f"{r['model']} under {r['condition']}: {rng.choice(SAYS)(said)}."
    return rows


def main_() -> None:
    a = synthetic_runs.bench_args(__doc__.splitlines()[0])
    rows = with_references(synthetic_runs.runs(a.questions))
    n = len(rows)
    labelled = sum(r["label"] == "correct" for r in rows)
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "published.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        print(f"{n} runs, {a.questions} questions, best/median of {a.reps} runs\n")
        for rep in range(a.reps):
            folder = Path(tmp) / f"ws{rep}"
            folder.mkdir()
            cfg = folder / "config.yaml"
            cfg.write_text(
                f"bundle: {a.bundle}\nstore: {a.store.resolve()}\n"
                f"workspace: {folder / 'ws.duckdb'}\n"
            )
            times.setdefault("runs import (setup)", []).append(
                _cli(cfg, "runs", "import", str(path))[0]
            )
            took, out = _cli(cfg, "judge", "--rescore", "--json")
            times.setdefault("judge --rescore (matcher + audit, store)", []).append(took)
            got = json.loads(out)
            assert got["runs"] == n and got["store"], got
            times.setdefault("judge --rescore --mode tolerance (again)", []).append(
                _cli(cfg, "judge", "--rescore", "--mode", "tolerance", "--json")[0]
            )
            times.setdefault("report --scores match", []).append(
                _cli(cfg, "report", "--scores", "match", "--json", "--resamples", "1000")[0]
            )
    width = max(len(k) for k in times)
    print(f"{'step':<{width}}  {'best s':>8}  {'median s':>8}  {'runs/s':>8}")
    for k, v in times.items():
        print(f"{k:<{width}}  {min(v):8.2f}  {statistics.median(v):8.2f}  {n / min(v):8.0f}")
    print(
        f"\nmatcher: {got['correct']} of {got['scored']} correct ({labelled} labelled correct"
        f" in the file); audit: {got['audited']} audited, {got['contradicted']} contradicted"
    )
    full = statistics.median(times["judge --rescore (matcher + audit, store)"])
    verdict = "met" if full < TARGET_S else "MISSED"
    print(
        f"judge --rescore: {full:.2f} s median for {n} runs (target < {TARGET_S:.0f} s: {verdict})"
    )


if __name__ == "__main__":
    main_()
