"""Failure causes on a local model: seed questions (the first N of each FinTradeBench category)
answered under No-RAG, RAG and Oracle, scored by the answer matcher and the numeric audit
against the store (`judge --rescore`: no model call), then `report --by cause --json` — the
cause × category × condition table, and each step's time.

    .venv/bin/python -m benchmarks.bench_causes [--per-category 3] [--model local-tiny]
        [--store data/fintrade.duckdb] [--bundle ../shared/data]

It writes a workspace of its own in a temp folder; the local models, the retrieval index and
the embedder's exports are the project's (`data/models`, `data/lancedb`, `data/embedders`, as
`make demo` leaves them), the index built on first use by the RAG runs as `run` builds it.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks import harness
from fintrade_tui.reports.causes import CAUSES


def main() -> None:
    ap = harness.parser(__doc__)
    harness.add_store(ap)
    ap.add_argument("--per-category", type=int, default=3, help="seed questions per category")
    ap.add_argument("--model", default="local-tiny", help="a registry name of config.yaml")
    args = ap.parse_args()
    store = harness.need_store(args.store)
    seeds = [f"{c}{i}" for c in ("F", "T", "FT") for i in range(1, args.per_category + 1)]
    with tempfile.TemporaryDirectory(prefix="bench-causes-") as td:
        data = Path("data").resolve()
        shared = f"model_dir: {data / 'models'}\n"
        shared += f"retrieval:\n  index: {data / 'lancedb'}\n  exports: {data / 'embedders'}\n"
        config = harness.write_config(Path(td), args.bundle, store, extra=shared)
        steps: dict[str, float] = {}
        steps["run"], _ = harness.cli(
            config,
            "run",
            "--questions",
            ",".join(seeds),
            "--models",
            args.model,
            "--conditions",
            "no_rag,rag,oracle",
            "--batch",
            "causes",
            "--json",
            ok=(0, 3),
        )  # fmt: skip (exit 3: some runs ended in error; their causes are counted too)
        steps["judge --rescore"], _ = harness.cli(config, "judge", "--rescore", "--json")
        steps["report --by cause"], out = harness.cli(config, "report", "--by", "cause", "--json")
    report = json.loads(out[out.index("{") :])  # the whole JSON document (indented)
    print(f"{len(seeds)} seed questions x 3 conditions, model {args.model}")
    print("| step | seconds |\n|---|---:|")
    for name, took in steps.items():
        print(f"| {name} | {took:.1f} |")
    cases = report["cases"]
    print(f"\n{len(cases)} failed answers (of {len(seeds) * 3} runs)")
    print("| cause | category | condition | n |\n|---|---|---|---:|")
    for row in report["causes"]:
        print(f"| {row['cause']} | {row['category']} | {row['condition']} | {row['n']} |")
    by_cause = Counter(c["cause"] for c in cases)
    print("\nby cause: " + ", ".join(f"{c} {by_cause[c]}" for c in CAUSES if by_cause[c]))


if __name__ == "__main__":
    main()
