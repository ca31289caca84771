"""Cut tests/data/external/convfinqa/{train_sample,test_sample}.json: ConvFinQA items verbatim.

ConvFinQA's data.zip is absent from the mirror of https://github.com/czyssrs/ConvFinQA, so the
items come from a public project that committed some unchanged:
https://github.com/zhanghanduo/tailor_findata, commit 2bad30eb21e72aea27da147eb03fb9e3b54d5fb6:
- data/sample_train.json: the first two conversations of ConvFinQA's train.json
  (Single_JKHY/2009/page_28.pdf-3, Single_AON/2011/page_61.pdf-3), with their qa and
  annotation (dialogue_break, turn_program, exe_ans_list, qa_split, ...): both are kept;
- data/test_private.json: ConvFinQA's test.json (434 conversations, dialogue_break only, no
  references): the first two are kept, to show a split without answers importing.
No turn-level file (train_turn.json, ...) was found published anywhere searchable.
Nothing is changed but the whitespace (one conversation per line).

Run from the repository root:
    G=/work/.mirror/zhanghanduo+tailor_findata/repo
    C=2bad30eb21e72aea27da147eb03fb9e3b54d5fb6
    git -C $G show $C:data/sample_train.json > /tmp/conv_sample_train.json
    git -C $G show $C:data/test_private.json > /tmp/conv_test_private.json
    python tests/data/external/convfinqa/make_sample.py /tmp/conv_sample_train.json \
        /tmp/conv_test_private.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent


def _write(items: list[dict], name: str) -> None:
    out = HERE / name
    lines = [json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in items]
    out.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    print(f"{out}: {len(items)} conversations, {out.stat().st_size} bytes")


def main(train: Path, test: Path) -> None:
    _write(json.loads(train.read_text(encoding="utf-8")), "train_sample.json")
    _write(json.loads(test.read_text(encoding="utf-8"))[:2], "test_sample.json")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
