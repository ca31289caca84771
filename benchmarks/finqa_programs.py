"""FinQA reference programs against their published answers: how many execute to `exe_ans`?

Run from the project root with any FinQA-format file (czyssrs/FinQA dataset/train.json, dev,
test; ConvFinQA's train.json; a JSON list or JSON lines):

    .venv/bin/python -m benchmarks.finqa_programs path/to/train.json
    .venv/bin/python -m benchmarks.finqa_programs path/to/train.json --json

Each item's `qa.program` (or, for ConvFinQA's turns, `qa_0`/`qa_1`... each) runs with
fintrade_tui.scoring.finqa.program over the item's normalised `table` and its passages
(pre_text + post_text, FinQA's text_N), and is compared with `qa.exe_ans` by FinQA's test (the
result rounded to 5 places equals it). Printed: one table, the programs executing to exe_ans and
the errata by kind, then the errata — the items whose program does not, with why (does not
run, x100, opposite sign, a rounding), one a line. `--json`: the report as JSON instead.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import harness
from fintrade_tui.scoring.finqa.program import ProgramError, errata_reason, execute, finqa_equal


def load_items(path: Path) -> list[dict[str, Any]]:
    """The file's items: a JSON list, or one JSON object per line."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    return data if isinstance(data, list) else [data]


def questions(item: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(id, qa) for the item's question, or for each ConvFinQA turn (qa_0, qa_1, ...)."""
    ident = str(item.get("id", "?"))
    if isinstance(item.get("qa"), dict):
        yield ident, item["qa"]
    for key in sorted(k for k in item if k.startswith("qa_")):
        if isinstance(item[key], dict):
            yield f"{ident}#{key}", item[key]


def check_items(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Run every reference program; the count executing to exe_ans and the errata."""
    total = ok = 0
    errata: list[dict[str, Any]] = []
    for item in items:
        table = item.get("table") or []
        passages = list(item.get("pre_text") or []) + list(item.get("post_text") or [])
        for ident, qa in questions(item):
            program = qa.get("program")
            if not program or "exe_ans" not in qa:
                continue
            total += 1
            try:
                trace = execute(program, table, passages)
            except ProgramError as err:
                errata.append({"id": ident, "program": program, "exe_ans": qa["exe_ans"],
                               "why": f"does not parse: {err.problem}"})  # fmt: skip
                continue
            if finqa_equal(trace.value, qa["exe_ans"]):
                ok += 1
            else:
                errata.append({"id": ident, "program": program, "exe_ans": qa["exe_ans"],
                               "why": errata_reason(trace, qa["exe_ans"])})  # fmt: skip
    return {"programs": total, "execute_to_exe_ans": ok,
            "share": ok / total if total else None, "errata": errata}  # fmt: skip


def kind(why: str) -> str:
    """An erratum's kind, for the tally: the reason up to its figures."""
    if why.startswith(("does not run", "does not parse")):
        return why.split(":")[0]
    for tail in ("is it x100", "is it /100", "opposite sign", "places"):
        if tail in why:
            return "equal at fewer places" if tail == "places" else tail
    return "a different value"


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("path", type=Path, help="a FinQA-format file (train.json, ...)")
    parser.add_argument("--json", action="store_true", help="the report as JSON")
    args = parser.parse_args(argv)
    if not args.path.is_file():
        print(f"{args.path}: no such file (fix: give a FinQA-format JSON file)", file=sys.stderr)
        return 2
    start = time.perf_counter()
    try:
        items = load_items(args.path)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        print(f"{args.path}: not JSON or JSON lines ({err})", file=sys.stderr)
        return 2
    report = check_items(items)
    report["seconds"] = round(time.perf_counter() - start, 2)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    n, ok = report["programs"], report["execute_to_exe_ans"]
    share = f"{100 * report['share']:.2f}%" if n else "n/a"
    tally = Counter(kind(e["why"]) for e in report["errata"])
    rows = [["execute to exe_ans", ok, share]]
    rows += [[what, count, f"{100 * count / n:.2f}%"] for what, count in tally.most_common()]
    harness.report(
        f"{args.path}: {ok} of {n} reference programs execute to exe_ans ({share}), "
        f"{report['seconds']} s",
        ["programs", "count", "share"],
        rows,
        [
            f"{e['id']}\t{e['program']}\texe_ans {e['exe_ans']!r}\t{e['why']}"
            for e in report["errata"]
        ],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
