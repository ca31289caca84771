"""Flake hunt: the whole test suite run N times in a row while busy loops keep every core
loaded, then each test that failed in any run with how often, each run's wall time and counts,
and the slowest tests. A test that fails here and passes on a quiet machine is a defect.

`make flake-hunt` (N=5, every test, one busy loop per core); `--runs`, `--hogs`, `-m` (e.g.
"not long" for `make test`'s selection), `--workers`. Each run's JUnit XML is kept under
`--out` so a failure can be read afterwards.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from benchmarks.harness import ROOT, load, log, machine, parser, report

PYTEST = ROOT / ".venv" / "bin" / "pytest"
# a busy loop per core at the tests' own priority: the scheduler shares each core between the
# suite and the hog, as a machine running other jobs does. The suite's workers run at nice 5
# (BUILD_LEAD in tests/conftest.py: they yield to the store build), so the hogs do too.
HOG = "while True: pass"
TESTS_NICE = 5


def start_hogs(count: int) -> list[subprocess.Popen]:
    return [
        subprocess.Popen([sys.executable, "-c", HOG], preexec_fn=lambda: os.nice(TESTS_NICE))
        for _ in range(count)
    ]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for p in hogs:
        p.kill()
    for p in hogs:
        p.wait()


def run_suite(xml: Path, workers: int, marker: str) -> float:
    """One pytest run of the suite as `make test-all` runs it; its wall seconds."""
    cmd = [str(PYTEST), "-n", str(workers), "--dist", "loadfile", "--no-loadscope-reorder"]
    cmd += ["-p", "no:cacheprovider", "-q", f"--junitxml={xml}"]
    if marker:
        cmd += ["-m", marker]
    began = time.monotonic()
    log(f"run: {' '.join(cmd[1:])}")
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - began


def read_junit(xml: Path) -> tuple[Counter, list[str], dict[str, float]]:
    """Outcome counts, the failed tests' names and each test's seconds (setup to teardown)."""
    counts: Counter = Counter()
    failed: list[str] = []
    seconds: dict[str, float] = {}
    if not xml.is_file():  # pytest itself died: the whole run counts as one failure
        return Counter(failed=1), ["(no JUnit XML: pytest did not finish)"], {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        seconds[name] = float(case.get("time") or 0)
        if case.find("failure") is not None or case.find("error") is not None:
            counts["failed"] += 1
            failed.append(name)
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failed, seconds


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("--runs", type=int, default=5, help="how often the suite runs")
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 2, help="busy loops")
    ap.add_argument("-m", dest="marker", default="", help="pytest -m selection (default: all)")
    ap.add_argument("--workers", type=int, default=3, help="pytest-xdist workers")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "flake-hunt")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    start = load()
    hogs = start_hogs(args.hogs)
    rows, fails, slowest = [], Counter(), {}
    try:
        for i in range(1, args.runs + 1):
            xml = args.out / f"run-{i}.xml"
            xml.unlink(missing_ok=True)
            wall = run_suite(xml, args.workers, args.marker)
            counts, failed, seconds = read_junit(xml)
            fails.update(failed)
            for name, s in seconds.items():
                slowest[name] = max(s, slowest.get(name, 0.0))
            rows.append(
                [i, f"{wall / 60:.1f} min", counts["passed"], counts["failed"], counts["skipped"]]
            )
            log(f"run {i}: {counts['passed']} passed, {counts['failed']} failed")
    finally:
        stop_hogs(hogs)
    title = f"flake hunt: {args.runs} runs, {args.hogs} busy loops, -m {args.marker or '(all)'}"
    report([title, machine(start)], ["run", "wall", "passed", "failed", "skipped"], rows)
    print()
    report(
        "tests that failed",
        ["test", "failed in"],
        [[name, f"{n}/{args.runs}"] for name, n in fails.most_common()] or [["(none)", "-"]],
    )
    print()
    top = sorted(slowest.items(), key=lambda kv: -kv[1])[:20]
    report(
        "the 20 slowest tests (most seconds in any run)",
        ["test", "seconds"],
        [[n, f"{s:.1f}"] for n, s in top],
    )
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
