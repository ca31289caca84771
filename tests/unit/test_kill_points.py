"""Stop points (fintrade_tui/kill_points.py): a process stops itself exactly at the named point
and count FINTRADE_STOP_AT asks for, and nowhere when it names another point or none."""

from __future__ import annotations

import sys

import pytest

from fintrade_tui import kill_points
from tests.reliability.kill_harness import run_until_stopped

# reaches demo.each 5 times one by one, then demo.group 3 times by 2 (counts 2, 4, 6)
SCRIPT = """
from fintrade_tui.kill_points import stop_at
for i in range(1, 6):
    print(f"each {i}", flush=True)
    stop_at("demo.each", i=i)
for i in range(1, 4):
    print(f"group {i}", flush=True)
    stop_at("demo.group", count=2)
print("ran through", flush=True)
"""


def _stop(point: str):
    return run_until_stopped([], point, program=[sys.executable, "-c", SCRIPT], settle=0)


@pytest.mark.parametrize(
    ("point", "last_line", "said"),
    [
        ("demo.each", "each 1", "demo.each #1"),
        ("demo.each:4", "each 4", "demo.each #4"),
        ("demo.group:3", "group 2", "demo.group #4"),  # the group that makes 3 reached
        ("demo.group:6", "group 3", "demo.group #6"),
    ],
)
def test_the_process_stops_at_the_named_count(point: str, last_line: str, said: str) -> None:
    out = _stop(point)
    assert out.killed and out.stopped == out.pid
    assert out.stdout.splitlines()[-1] == last_line  # flushed, and nothing after it ran
    assert f"stopped at {said} (pid {out.pid})" in out.stderr


def test_the_context_is_written_on_the_stop_line() -> None:
    out = _stop("demo.each:2")
    assert f"stopped at demo.each #2 (pid {out.pid}) i=2\n" in out.stderr


@pytest.mark.parametrize("point", ["demo.other", "demo.eac", "demo.each:6"])
def test_a_point_never_reached_lets_it_run_through(point: str) -> None:
    with pytest.raises(AssertionError, match="without reaching"):
        _stop(point)


def test_unset_it_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(kill_points.ENV, raising=False)
    for _ in range(3):
        kill_points.stop_at("demo.each")  # would stop this very process if it were armed
    assert "demo.each" not in kill_points._reached  # not even counted
