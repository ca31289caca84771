"""A generic run JSONL of published-style answers with human correctness labels, made up but
shaped like the real thing: N questions about NASDAQ-100 companies (each naming its company and
a quarter end), several models, several conditions (closed-book, retrieval, oracle, long
context), one labelled answer per question × model × condition. Deterministic for a seed.

Used by the import, re-scoring, HTML and shared-workspace benchmarks and by tests; on its own:

    .venv/bin/python -m benchmarks.synthetic_runs OUT.jsonl [--questions 150]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from benchmarks import harness

COMPANIES = [
    ("AAPL", "Apple"),
    ("MSFT", "Microsoft"),
    ("NVDA", "NVIDIA"),
    ("AMZN", "Amazon"),
    ("GOOG", "Alphabet"),
    ("META", "Meta Platforms"),
    ("TSLA", "Tesla"),
    ("AVGO", "Broadcom"),
    ("COST", "Costco"),
    ("NFLX", "Netflix"),
    ("ADBE", "Adobe"),
    ("PEP", "PepsiCo"),
    ("CSCO", "Cisco"),
    ("INTC", "Intel"),
    ("AMD", "Advanced Micro Devices"),
    ("QCOM", "Qualcomm"),
    ("TXN", "Texas Instruments"),
    ("AMGN", "Amgen"),
    ("INTU", "Intuit"),
    ("SBUX", "Starbucks"),
]
DAYS = ["2023-03-31", "2023-06-30", "2023-09-30", "2023-12-31", "2024-03-31", "2024-06-30"]
KINDS = {
    "ratio": "As of {day}, what was {name}'s return on equity?",
    "trend": "As of {day}, was {name}'s stock above its 50-day moving average?",
    "numeric": "As of {day}, what was {name}'s net income in its latest reported quarter?",
    "judgement": "As of {day}, is {name} more profitable than a year earlier?",
}
MODELS = ["gpt-4o", "claude-3-5-sonnet", "llama-3-70b", "mistral-large"]
CONDITIONS = ["closed-book", "retrieval", "oracle", "long-context"]
# chance of a correct label per model and condition: better models and better evidence help
SKILL = {"gpt-4o": 0.7, "claude-3-5-sonnet": 0.65, "llama-3-70b": 0.5, "mistral-large": 0.45}
HELP = {"closed-book": -0.25, "retrieval": 0.0, "oracle": 0.2, "long-context": 0.05}


def bench_args(doc: str | None) -> argparse.Namespace:
    """The options the benchmarks over this file share (--questions, --store, --bundle,
    --reps); `store` comes back absolute, checked to exist."""
    ap = harness.parser(doc, reps=3)
    ap.add_argument("--questions", type=int, default=150)
    harness.add_store(ap)
    a = ap.parse_args()
    a.store = harness.need_store(a.store)
    return a


def runs(questions: int = 150, seed: int = 13) -> list[dict]:
    """The labelled runs of `questions` questions (each x every model x every condition)."""
    rng = random.Random(seed)
    out = []
    for i in range(1, questions + 1):
        ticker, name = COMPANIES[(i - 1) % len(COMPANIES)]
        kind = list(KINDS)[(i - 1) % len(KINDS)]
        day = DAYS[(i - 1) // len(COMPANIES) % len(DAYS)]
        text = KINDS[kind].format(day=day, name=name)
        for model in MODELS:
            for cond in CONDITIONS:
                p = min(0.95, max(0.05, SKILL[model] + HELP[cond]))
                roll = rng.random()
                label = "correct" if roll < p else "refusal" if roll > 0.97 else "incorrect"
                out.append(
                    {
                        "question_id": f"SYN-{i}",
                        "question": text,
                        "ticker": ticker,
                        "as_of": day,
                        "category": kind,
                        "benchmark": "synthetic-byo",
                        "model": model,
                        "condition": cond,
                        "answer": f"{model} on {name} under {cond}: answer {rng.randint(1, 999)}.",
                        "label": label,
                        "annotator": "synthetic:human",
                        "tokens_in": rng.randint(50, 4000),
                        "tokens_out": rng.randint(20, 400),
                        "latency_s": round(rng.uniform(0.3, 9.0), 3),
                    }
                )
    return out


def write(path: Path, questions: int = 150, seed: int = 13) -> int:
    """`runs` written to `path` as JSON lines; returns how many."""
    rows = runs(questions, seed)
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return len(rows)


if __name__ == "__main__":
    ap = harness.parser(__doc__)
    ap.add_argument("out", type=Path)
    ap.add_argument("--questions", type=int, default=150)
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()
    print(f"{write(a.out, a.questions, a.seed)} runs written to {a.out}")
