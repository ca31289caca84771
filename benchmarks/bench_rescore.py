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

    .venv/bin/python -m benchmarks.bench_rescore [--questions 150] [--store data/fintrade.duckdb]

Everything is written under a temp dir; the store is only read.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
from pathlib import Path

from benchmarks import harness, synthetic_runs

TARGET_S = 60.0
RESCORE = "judge --rescore (matcher + audit, store)"
# the reference's figure as an answer labelled correct may write it (millions)
SAYS = (
    lambda m: f"${m} million",
    lambda m: f"{m * 1_000_000:,} dollars",
    lambda m: f"${m / 1000:g} billion",
    lambda m: f"USD {m}m",
)


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


def main() -> None:
    a = synthetic_runs.bench_args(__doc__)
    rows = with_references(synthetic_runs.runs(a.questions))
    n = len(rows)
    labelled = sum(r["label"] == "correct" for r in rows)
    steps = harness.Steps()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "published.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        for rep in range(a.reps):
            harness.log(f"rep {rep + 1}/{a.reps}")
            cfg = harness.write_config(Path(tmp) / f"ws{rep}", a.bundle, a.store)
            steps.add("runs import (setup)", harness.cli(cfg, "runs", "import", str(path))[0])
            took, out = harness.cli(cfg, "judge", "--rescore", "--json")
            steps.add(RESCORE, took)
            got = json.loads(out)
            assert got["runs"] == n and got["store"], got
            steps.add(
                "judge --rescore --mode tolerance (again)",
                harness.cli(cfg, "judge", "--rescore", "--mode", "tolerance", "--json")[0],
            )
            steps.add(
                "report --scores match",
                harness.cli(cfg, "report", "--scores", "match", "--json", "--resamples", "1000")[0],
            )
    full = statistics.median(steps[RESCORE])
    verdict = "met" if full < TARGET_S else "MISSED"
    harness.report(
        f"{n} runs, {a.questions} questions, best/median of {a.reps} runs",
        steps.COLUMNS,
        steps.rows(n),
        [
            f"matcher: {got['correct']} of {got['scored']} correct ({labelled} labelled correct"
            f" in the file); audit: {got['audited']} audited, {got['contradicted']} contradicted",
            f"judge --rescore: {full:.2f} s median for {n} runs"
            f" (target < {TARGET_S:.0f} s: {verdict})",
        ],
    )


if __name__ == "__main__":
    main()
