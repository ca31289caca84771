#!/usr/bin/env bash
# Regenerates the inspect_ai eval-log fixtures of tests/unit/test_import_inspect.py.
# Run by hand (never by CI):  bash tests/data/external/inspect/make_fixtures.sh
#
# What it does:
#   1. makes two throwaway venvs under /tmp with pinned inspect-ai versions:
#        /tmp/fx-inspect      inspect-ai 0.3.285  (writes .eval zips with zstd, method 93)
#        /tmp/fx-inspect-old  inspect-ai 0.3.150  (writes .eval zips with deflate, and no
#                                                  per-sample started_at: an older layout)
#   2. runs fin_task.py (a 5-question fake NASDAQ benchmark, answered by mockllm/model with
#      custom_outputs from a fixed table, scored by includes(), match() and a custom scorer
#      that returns C/I/P/N) and keeps these logs under stable names:
#        fin_qa.eval          0.3.285, 2 epochs, 5 samples (one errors: the mock raises)
#        fin_qa.json          0.3.285, 1 epoch, 4 samples (the erroring one is left out: its
#                             ~95 KB traceback would make the uncompressed JSON large)
#        fin_qa_v0_3_150.eval 0.3.150, 1 epoch, 5 samples
#   3. writes the nasty files derived from those logs with the stdlib: the zips and a
#      truncated fin_qa.json (the other nasty_*.json files are hand-written and stay as they are).
# Answers, scores, token counts and metadata are the same on every run; inspect's own ids
# (eval_id, run_id, uuids), timestamps and timings are new each time, so the tests read every
# expected value from the files themselves.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
NEW=0.3.285
OLD=0.3.150

venv() {  # venv DIR VERSION
    [ -x "$1/bin/python" ] || python3.11 -m venv "$1"
    "$1/bin/pip" install -q "inspect-ai==$2"
}
run() {  # run VENV FORMAT EPOCHS NAME [SAMPLE_IDS]
    local out
    out="$(mktemp -d /tmp/fx-inspect-run.XXXXXX)"
    # a fresh working dir outside the repo: inspect records the git revision of the cwd
    (cd "$out" && "$1/bin/python" "$HERE/fin_task.py" "$out/logs" "$2" "$3" ${5:-})
    mv "$out"/logs/*."$2" "$HERE/$4"
    rm -rf "$out"
}

venv /tmp/fx-inspect "$NEW"
venv /tmp/fx-inspect-old "$OLD"
run /tmp/fx-inspect eval 2 fin_qa.eval
run /tmp/fx-inspect json 1 fin_qa.json "aapl-ni-q4-2024,msft-rev-q1-2025,3,amzn-refusal"
run /tmp/fx-inspect-old eval 1 fin_qa_v0_3_150.eval

# nasty zips, made from the deflate log so they are readable without zstandard
python3 - "$HERE" <<'PY'
import json
import sys
import zipfile
from pathlib import Path

here = Path(sys.argv[1])
src = here / "fin_qa_v0_3_150.eval"
data = src.read_bytes()
# truncated: the first half of a real log (no central directory)
(here / "nasty_truncated.eval").write_bytes(data[: len(data) // 2])
# truncated JSON: cut inside the second sample, as an interrupted copy would
doc = (here / "fin_qa.json").read_bytes()
second = doc.index(b'"id": "aapl-ni-q4-2024"')
(here / "nasty_truncated.json").write_bytes(doc[: second + 2000])
with zipfile.ZipFile(src) as z:
    members = {n: z.read(n) for n in z.namelist()}
# a zip, but not an inspect log (an export of some other tool)
with zipfile.ZipFile(here / "nasty_not_inspect.eval", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("results.json", json.dumps({"results": [{"id": 1, "output": "14.7"}]}))
    z.writestr("README.txt", "not an inspect_ai log")
# an inspect header but no samples (a log written with --no-log-samples)
with zipfile.ZipFile(here / "nasty_no_samples.eval", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("header.json", members["header.json"])
# the sample 3 member twice (a requeued sample re-logged: inspect keeps the last one),
# the second copy with another answer; and a non-UTF-8 byte inside the amzn answer
with zipfile.ZipFile(here / "nasty_duplicate_member.eval", "w", zipfile.ZIP_DEFLATED) as z:
    for name, body in members.items():
        if name == "samples/amzn-refusal_epoch_1.json":
            body = body.replace(b"personalised", b"personali\xe9ed")
        z.writestr(name, body)
    second = json.loads(members["samples/3_epoch_1.json"])
    second["output"]["completion"] = "no (requeued)"
    z.writestr("samples/3_epoch_1.json", json.dumps(second))
PY
ls -la "$HERE"
