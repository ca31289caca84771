"""Cut tests/data/external/finqa/train_sample.json: 25 FinQA train items copied verbatim.

FinQA's own dataset/train.json is not in the mirror of https://github.com/czyssrs/FinQA (its
largest files are absent), so the items come from a public project that committed a sample of
it unchanged: https://github.com/sukritganesh/FinQA_Analysis, commit
0f09a2f88b5a588b4b0212bb1c54eff407bf751e ("Add FinQA data files"), file
data/processed/train_100.json (blob a84281308deeae59c726c3eaebfd31030caacf63), 100 items of
FinQA's train split with every published field (pre_text, post_text, filename, table_ori,
table, qa{question, answer, explanation, ann_table_rows, ann_text_rows, steps, program,
gold_inds, exe_ans, tfidftopn, program_re, model_input}, id, table_retrieved, text_retrieved,
table_retrieved_all, text_retrieved_all). Nothing is changed but the whitespace: one item per
line, so the file stays under 200 KB and a diff shows which item moved.

Run from the repository root, given that file:
    git -C /work/.mirror/sukritganesh+FinQA_Analysis/repo show \
        0f09a2f88b5a588b4b0212bb1c54eff407bf751e:data/processed/train_100.json > /tmp/train_100.json
    python tests/data/external/finqa/make_sample.py /tmp/train_100.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# chosen for spread: gold facts in the table, the text, or both; one- to three-step programs;
# yes/no answers; NASDAQ-100 filers (AAPL, ADBE, AMAT, ANSS) and others; small items first
IDS = (
    "ORLY/2017/page_30.pdf-1",
    "VNO/2007/page_192.pdf-1",
    "DVN/2014/page_88.pdf-1",
    "FIS/2012/page_30.pdf-3",
    "BDX/2016/page_62.pdf-1",
    "ETR/2017/page_342.pdf-3",
    "UPS/2010/page_33.pdf-1",
    "UNP/2012/page_20.pdf-1",
    "ETR/2017/page_373.pdf-1",
    "AMAT/2016/page_32.pdf-1",
    "AWK/2017/page_143.pdf-3",
    "GPN/2009/page_85.pdf-2",
    "MRO/2012/page_41.pdf-1",
    "ETR/2009/page_24.pdf-1",
    "SWKS/2010/page_139.pdf-2",
    "UNP/2015/page_21.pdf-1",
    "ORLY/2009/page_77.pdf-3",
    "AON/2011/page_63.pdf-1",
    "CE/2005/page_56.pdf-2",
    "ETR/2009/page_107.pdf-2",
    "VTR/2007/page_106.pdf-1",
    "AES/2011/page_260.pdf-4",
    "AAPL/2007/page_117.pdf-2",
    "ADBE/2018/page_66.pdf-4",
    "ANSS/2008/page_85.pdf-3",
)
OUT = Path(__file__).with_name("train_sample.json")


def main(source: Path) -> None:
    items = {item["id"]: item for item in json.loads(source.read_text(encoding="utf-8"))}
    picked = [items[i] for i in IDS]
    lines = [json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in picked]
    OUT.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")
    print(f"{OUT}: {len(picked)} items, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
