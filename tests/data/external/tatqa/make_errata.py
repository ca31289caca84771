"""Cut tests/data/external/tatqa/errata_sample.json: the whole TAT-QA dev context holding the
question a public erratum names, copied verbatim (one context, as published).

NExTplusplus/TAT-QA#12 reports dev question c91ad938-6ad1-4481-8f6b-43ccd2f69926 ("What is the
nominal difference for ROFE between F19 and F18?"): its derivation "17.1 - 15.2" gives 1.9,
where F19's ROFE is 15.2 and F18's 17.1 (the table's own change column: "(190) bps"). The
source is dataset_raw/tatqa_dataset_dev.json of https://github.com/NExTplusplus/TAT-QA at
commit 870accc41953dcde885aabeb963d94aabdc0fbc3 (CC BY 4.0, see LICENSE).

Run from the repository root:
    git -C /work/.mirror/NExTplusplus+TAT-QA/repo show \
        HEAD:dataset_raw/tatqa_dataset_dev.json > /tmp/tatqa_dev.json
    python tests/data/external/tatqa/make_errata.py /tmp/tatqa_dev.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

OUT = Path(__file__).with_name("errata_sample.json")
NAMED = "c91ad938-6ad1-4481-8f6b-43ccd2f69926"


def main(source: Path) -> None:
    contexts = json.loads(source.read_text(encoding="utf-8"))
    (context,) = [c for c in contexts if any(q["uid"] == NAMED for q in c["questions"])]
    line = json.dumps(context, ensure_ascii=False, separators=(",", ":"))
    OUT.write_text("[\n" + line + "\n]\n", encoding="utf-8")
    print(f"{OUT}: {len(context['questions'])} questions, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
