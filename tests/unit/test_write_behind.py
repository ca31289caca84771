"""Grouped run records (workspace/write_behind.py): the rows a batch writes through BufferedRunStore
are exactly those RunStore writes one transaction at a time, in a handful of transactions,
each when its delay (fake time, tests/clock.py) or its size says; a group that cannot be
written stays waiting; a kill loses whole runs, never half of one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.workspace import write_behind
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.write_behind import BufferedRunStore
from tests.clock import FakeClock, wait_until

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = "batch_key, question_id, condition, model, status, answer, evidence, tokens_out, error"


def _life(store: RunStore, n: int, attempt: int = 0) -> list[str]:
    """What the runner does for n runs: start, a prompt update, an end (interleaved)."""
    ids = [
        store.start({"batch": "b", "batch_key": f"k{i}", "question_id": f"Q{i}", "model": "m"})
        for i in range(n)
    ]
    for i, rid in enumerate(ids):
        store.finish(rid, prompt=f"p{i}", evidence={"items": [i]})
    for i, rid in enumerate(ids):
        ok = (i + attempt) % 3 != 0
        store.finish(
            rid,
            status="completed" if ok else "error",
            answer=f"answer {i}" if ok else "",
            tokens_out=i,
            error=None if ok else "the model replied with nothing",
        )
    return ids


def _ids(ws) -> set[str]:
    return {rid for (rid,) in ws.execute("SELECT id FROM runs").fetchall()}


def _rows(path: Path) -> list[tuple]:
    with open_workspace(path) as ws:
        return ws.execute(f"SELECT {COLUMNS} FROM runs ORDER BY ALL").fetchall()


def test_grouped_records_equal_one_by_one_records(tmp_path: Path) -> None:
    for name, attempts in (("plain", 2), ("grouped", 2)):
        with open_workspace(tmp_path / f"{name}.duckdb") as ws:
            for attempt in range(attempts):  # a second attempt replaces the unfinished ones
                if name == "plain":
                    _life(RunStore(ws), 50, attempt)
                else:
                    with BufferedRunStore(ws) as store:
                        _life(store, 50, attempt)
    plain, grouped = _rows(tmp_path / "plain.duckdb"), _rows(tmp_path / "grouped.duckdb")
    # the first attempt's 33 completed runs stay, its 17 failed ones are replaced by the second's
    assert len(plain) == 33 + 50
    assert grouped == plain


def test_runs_written_a_group_at_a_time_and_on_time(tmp_path: Path) -> None:
    clock = FakeClock()
    ws = open_workspace(tmp_path / "ws.duckdb")
    store = BufferedRunStore(ws, delay=0.5, clock=clock)  # its timer looks every 0.125 s
    written_at: list[float] = []  # the fake time of each transaction
    real = store.transaction

    def counted():
        written_at.append(clock.monotonic())
        return real()

    store.transaction = counted  # type: ignore[method-assign]
    t0 = clock.monotonic()
    _life(store, 120)  # the first record waits from t0
    for _ in range(3):  # 0.125, 0.25, 0.375 s: younger than the delay, the group waits
        clock.until_waiting(1)  # the timer has looked and waits again
        clock.advance(0.125)
    clock.until_waiting(1)
    assert RunStore(ws).list() == [] and written_at == []
    clock.advance(0.125)  # 0.5 s: due
    clock.until_waiting(1)  # the timer wrote the group and waits again
    assert len(RunStore(ws).list()) == 120  # written by the timer, in one group, on time
    assert written_at == [t0 + 0.5]
    clock.advance(5.0)  # nothing waiting: the timer writes nothing
    clock.until_waiting(1)
    assert written_at == [t0 + 0.5]
    rid = store.start({"batch": "b", "batch_key": "late", "question_id": "Q", "model": "m"})
    store.finish(rid, status="completed", answer="late")
    store.close()  # the rest lands at once, without waiting for the timer
    assert written_at == [t0 + 0.5, t0 + 5.5] and RunStore(ws).get(rid)["answer"] == "late"
    ws.close()


def test_a_full_group_is_written_without_waiting(tmp_path: Path) -> None:
    clock = FakeClock()
    ws = open_workspace(tmp_path / "ws.duckdb")
    with BufferedRunStore(ws, delay=60, clock=clock) as store:
        ids = [
            store.start({"batch": "b", "batch_key": f"k{i}", "question_id": "Q", "model": "m"})
            for i in range(write_behind.ROWS + 1)
        ]
        # the ROWS-th record wrote the group at once; the one after it waits for the next
        assert _ids(ws) == set(ids[: write_behind.ROWS])
    assert _ids(ws) == set(ids)
    ws.close()


def test_a_group_that_cannot_be_written_stays_waiting(tmp_path: Path, monkeypatch) -> None:
    ws = open_workspace(tmp_path / "ws.duckdb")
    store = BufferedRunStore(ws, delay=60)
    ids = _life(store, 3)
    real = store._write
    monkeypatch.setattr(
        store, "_write", lambda *a: (_ for _ in ()).throw(UserError("ws", "stayed busy"))
    )
    with pytest.raises(UserError):
        store.flush()
    assert RunStore(ws).list() == []
    monkeypatch.setattr(store, "_write", real)
    store.close()
    assert {r["id"] for r in RunStore(ws).list()} == set(ids)
    ws.close()


def test_a_killed_batch_leaves_whole_runs_only(tmp_path: Path) -> None:
    path = tmp_path / "ws.duckdb"
    with open_workspace(path) as ws:
        RunStore(ws)
    script = textwrap.dedent(
        """
        import itertools, sys
        from pathlib import Path
        from fintrade_tui.workspace.write_behind import BufferedRunStore
        from fintrade_tui.workspace.connection import open_workspace
        store = BufferedRunStore(open_workspace(Path(sys.argv[1])), delay=0.2)
        for i in itertools.count():  # until killed
            rid = store.start({"batch": "b", "batch_key": f"k{i}", "question_id": "Q"})
            store.finish(rid, prompt="p" * 2000)
            store.finish(rid, status="completed", answer=f"answer {i}")
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], cwd=ROOT)

    def completed() -> int:
        with open_workspace(path) as ws:
            return ws.execute("SELECT count(*) FROM runs WHERE status = 'completed'").fetchone()[0]

    try:
        wait_until(lambda: completed() >= 200 or proc.poll() is not None)
        assert proc.poll() is None, "the batch ended before it was killed"
    finally:
        proc.kill()
    proc.wait()
    with open_workspace(path) as ws:
        rows = ws.execute("SELECT status, answer, length(prompt) FROM runs").fetchall()
    done = [r for r in rows if r[0] == "completed"]
    assert len(done) >= 200
    assert all(a.startswith("answer") and n == 2000 for _, a, n in done)
    # the rest were started in the last group written and not finished: `running`, as a
    # killed run is (the next batch marks them interrupted)
    assert all(s == "running" and not a for s, a, _ in rows if s != "completed")
    assert write_behind.DELAY == 0.5  # the documented default


def test_on_written_names_only_runs_whose_end_is_stored(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    ws = open_workspace(tmp_path / "ws.duckdb")
    store = BufferedRunStore(ws, delay=60, on_written=seen.append)
    a = store.start({"batch": "b", "batch_key": "a", "question_id": "Q", "model": "m"})
    b = store.start({"batch": "b", "batch_key": "b", "question_id": "Q", "model": "m"})
    store.finish(a, prompt="p")
    store.finish(b, status="completed", answer="done")
    store.flush()  # a started (and has its prompt), b started and ended
    store.finish(a, prompt="p2")
    store.flush()  # a's prompt again: still not ended
    store.finish(a, status="error", error="boom")
    store.close()
    assert seen == [[b], [], [a]]
    ws.close()
