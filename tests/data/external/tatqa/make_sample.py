"""Cut tests/data/external/tatqa/dev_sample.json: whole TAT-QA dev contexts, copied verbatim.

TAT-QA's train file (dataset_raw/tatqa_dataset_train.json) is absent from the mirror of
https://github.com/NExTplusplus/TAT-QA (its largest files are not kept); dev and test_gold are
present, so the sample is of dev: dataset_raw/tatqa_dataset_dev.json at commit
870accc41953dcde885aabeb963d94aabdc0fbc3. Contexts ({table, paragraphs, questions}) are taken
whole, in file order, each one that brings an answer type x answer source pair or a scale not
yet covered, until every pair and scale the file has is covered. Nothing is changed but the
whitespace (one context per line).

Run from the repository root:
    git -C /work/.mirror/NExTplusplus+TAT-QA/repo show \
        HEAD:dataset_raw/tatqa_dataset_dev.json > /tmp/tatqa_dev.json
    python tests/data/external/tatqa/make_sample.py /tmp/tatqa_dev.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).with_name("dev_sample.json")


def _marks(context: dict) -> set[tuple[str, ...]]:
    qs = context["questions"]
    return {("pair", q["answer_type"], q["answer_from"]) for q in qs} | {
        ("scale", q["scale"]) for q in qs
    }


def main(source: Path) -> None:
    contexts = json.loads(source.read_text(encoding="utf-8"))
    wanted = set().union(*(_marks(c) for c in contexts))
    picked, covered = [], set()
    for context in contexts:
        if _marks(context) - covered:
            picked.append(context)
            covered |= _marks(context)
        if covered == wanted:
            break
    lines = [json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in picked]
    OUT.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    n = sum(len(c["questions"]) for c in picked)
    print(f"{OUT}: {len(picked)} contexts, {n} questions, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
