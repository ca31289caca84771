"""Suspect references in a published benchmark file: how many of its questions the suspect rules
of audits/suspects.py flag, which, why, and how long it takes — the check of those rules
against the benchmarks' public errata.

    git -C /work/.mirror/NExTplusplus+TAT-QA/repo show \\
        HEAD:dataset_raw/tatqa_dataset_dev.json > /tmp/tatqa_dev.json
    .venv/bin/python -m benchmarks.bench_suspects /tmp/tatqa_dev.json --format tatqa

`--format` is tatqa, finqa or convfinqa (the readers `questions import` uses).
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from benchmarks import harness
from fintrade_tui.audits.suspects import question_suspects
from fintrade_tui.questions.table_qa import read_convfinqa, read_finqa, read_tatqa

READERS = {"tatqa": read_tatqa, "finqa": read_finqa, "convfinqa": read_convfinqa}


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("path", type=Path)
    ap.add_argument("--format", choices=sorted(READERS), required=True)
    args = ap.parse_args()
    questions = READERS[args.format](args.path, args.path.read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    found = {q.id: hits for q in questions if (hits := question_suspects(q))}
    took = time.perf_counter() - t0
    rules = Counter(h["rule"] for hits in found.values() for h in hits)
    print(f"{args.path.name}: {len(questions)} questions, {len(found)} suspects in {took:.1f} s")
    print(f"by rule: {dict(sorted(rules.items()))}")
    for qid, hits in found.items():
        for h in hits:
            print(f"- {qid} [{h['rule']}] {h['why']}")


if __name__ == "__main__":
    main()
