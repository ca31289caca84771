"""The flake hunt's reading of pytest's JUnit XML: which tests failed, how each run counts."""

from __future__ import annotations

from pathlib import Path

from benchmarks.flake_hunt import read_junit

# the shape pytest --junitxml writes: one <testcase> per test, a child naming a bad outcome
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="5">
<testcase classname="tests.unit.test_a" name="test_ok" time="0.5"/>
<testcase classname="tests.unit.test_a" name="test_broken" time="2.0">
<failure message="x"/></testcase>
<testcase classname="tests.ui.test_b" name="test_setup_died" time="61.0">
<error message="y"/></testcase>
<testcase classname="tests.ui.test_b" name="test_no_tmux" time="0.0">
<skipped message="z"/></testcase>
<testcase classname="tests.ui.test_b" name="test_fine" time="1.5"/>
</testsuite></testsuites>
"""


def test_failures_errors_and_skips_are_told_apart(tmp_path: Path) -> None:
    xml = tmp_path / "run.xml"
    xml.write_text(JUNIT)
    counts, failed, seconds = read_junit(xml)
    assert dict(counts) == {"passed": 2, "failed": 2, "skipped": 1}
    assert failed == ["tests.unit.test_a::test_broken", "tests.ui.test_b::test_setup_died"]
    assert seconds["tests.ui.test_b::test_setup_died"] == 61.0 and len(seconds) == 5


def test_a_run_that_wrote_no_xml_counts_as_a_failure(tmp_path: Path) -> None:
    counts, failed, seconds = read_junit(tmp_path / "missing.xml")
    assert counts["failed"] == 1 and "did not finish" in failed[0] and seconds == {}
