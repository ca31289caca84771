"""Gather a labelled-evaluation candidate set of published financial-QA model answers.

This script reads model outputs that were *published* in public GitHub repositories
(paper repositories and evaluation-result dumps) and writes ``items.jsonl``: one JSON
object per line with a question, the benchmark's gold reference, and one real model's
answer, ready to be labelled correct / incorrect / refusal by reading.

Nothing here calls a model; every answer is copied from the published files.

Sources (each one a git snapshot of a public repository; see SOURCES.md):

* ``pot-tatqa``          wenhuchen/Program-of-Thoughts   TAT-QA dev, CoT and direct prompting
* ``financemath``        yale-nlp/FinanceMath            validation set, CoT outputs of 51 LLMs
* ``financereasoning``   BUPT-Reasoning-Lab/FinanceReasoning  hard subset, CoT outputs of 13 LLMs
* ``cot-fin-bench``      infamousgxy/CoT-Financial-Benchmark  FinQA / ConvFinQA samples, Qwen3-30B
* ``convfinqa-sonnet``   zarifaziz/convfinqa             ConvFinQA dev run, claude-sonnet-4-6

Each path argument may be a bare git directory (as produced by a mirror / ``git clone
--mirror``) or a normal checkout; files are read with ``git show <rev>:<path>`` so the
origin recorded for every item names the exact commit. Sampling is deterministic
(``random.Random(0)`` per source), so re-running on the same commits reproduces the
same file byte for byte.

This file holds the command line and the list of sources; ``gather_repo.py`` reads the
snapshots, ``gather_sources.py`` holds one reader per source and ``gather_items.py`` the item
shape and the sampling they share.

Example::

    python benchmarks/verdicts/gather.py \\
        --pot-tatqa /work/.mirror/wenhuchen+Program-of-Thoughts/repo \\
        --financemath /work/.mirror/yale-nlp+FinanceMath/repo \\
        --financereasoning /work/.mirror/BUPT-Reasoning-Lab+FinanceReasoning/repo \\
        --cot-fin-bench /work/.mirror/infamousgxy+CoT-Financial-Benchmark/repo \\
        --convfinqa-sonnet /work/.mirror/zarifaziz+convfinqa/repo \\
        --out benchmarks/verdicts/items.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

# run as a script (the docstring's example): its folder is first on sys.path
from gather_items import Item
from gather_repo import Repo
from gather_sources import (
    gather_convfinqa,
    gather_cotfin,
    gather_financemath,
    gather_financereasoning,
    gather_pot,
)


@dataclass(frozen=True)
class SourceSpec:
    name: str
    slug: str
    pinned: str  # commit the published SOURCES.md describes
    want: int
    gather: Callable[[Repo, int], list[Item]]


SOURCES = [
    SourceSpec(
        "pot-tatqa",
        "wenhuchen/Program-of-Thoughts",
        "850399c3eff8c37458a9d642c4a98df287f50f3a",
        180,
        gather_pot,
    ),
    SourceSpec(
        "financemath",
        "yale-nlp/FinanceMath",
        "bdddc58655947475da852e241b96a7dbd1478742",
        160,
        gather_financemath,
    ),
    SourceSpec(
        "financereasoning",
        "BUPT-Reasoning-Lab/FinanceReasoning",
        "b0fe6455396f831955e4eb988472b4a563403bc5",
        160,
        gather_financereasoning,
    ),
    SourceSpec(
        "cot-fin-bench",
        "infamousgxy/CoT-Financial-Benchmark",
        "e275396f9721707f30a538eba689e47865463ee4",
        160,
        gather_cotfin,
    ),
    SourceSpec(
        "convfinqa-sonnet",
        "zarifaziz/convfinqa",
        "1820c0ecc5b3fb4015ea20a0e2d21cac49fe57ea",
        120,
        gather_convfinqa,
    ),
]


def _number(items: Iterable[Item], source: str) -> Iterator[Item]:
    for i, item in enumerate(items):
        item["id"] = f"{source}-{i:04d}"
        yield item


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(
            "Read published financial-QA model outputs from git snapshots of public "
            "repositories and write a deterministic items.jsonl sample. Each source "
            "option takes the path of that repository's git directory (bare mirror) or "
            "checkout; a source whose option is omitted is skipped."
        )
    )
    for spec in SOURCES:
        parser.add_argument(
            f"--{spec.name}",
            dest=spec.name.replace("-", "_"),
            metavar="GIT_DIR",
            help=f"snapshot of {spec.slug} (pinned commit {spec.pinned[:12]}; {spec.want} items)",
        )
    parser.add_argument(
        "--rev",
        default="HEAD",
        help="revision to read in every snapshot (default: HEAD)",
    )
    parser.add_argument(
        "--out",
        default=str(Path(__file__).with_name("items.jsonl")),
        help="output file (default: items.jsonl next to this script)",
    )
    args = parser.parse_args(argv)

    all_items: list[Item] = []
    for spec in SOURCES:
        path = getattr(args, spec.name.replace("-", "_"))
        if not path:
            print(f"skip {spec.name}: no --{spec.name} given", file=sys.stderr)
            continue
        repo = Repo.open(spec.slug, path, args.rev)
        if repo.rev != spec.pinned:
            print(
                f"warning: {spec.name} snapshot is at {repo.rev}, SOURCES.md describes "
                f"{spec.pinned}",
                file=sys.stderr,
            )
        items = list(_number(spec.gather(repo, spec.want), spec.name))
        if len(items) < spec.want:
            print(f"warning: {spec.name} gave {len(items)} of {spec.want} items", file=sys.stderr)
        print(f"{spec.name}: {len(items)} items", file=sys.stderr)
        all_items.extend(items)

    with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
        for item in all_items:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"wrote {len(all_items)} items to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
