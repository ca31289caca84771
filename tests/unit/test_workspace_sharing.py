"""The workspace shared by processes (workspace/sharing.py, shared_connection.py, watch.py): a
process that keeps a workspace "open" (the explorer) never locks out another (an import, `ask`),
writes stay all-or-nothing, a workspace busy past `workspace_wait` is one clear line, and the
watch tells another process's runs from this one's own."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.workspace import connection, sharing
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore
from fintrade_tui.workspace.shared_connection import SharedConnection
from fintrade_tui.workspace.watch import WorkspaceWatch
from tests.clock import FakeClock

ROOT = Path(__file__).resolve().parents[2]


def _child(code: str, *args: str) -> subprocess.Popen:
    """A second process using the workspace through the same code."""
    script = "import sys\nfrom pathlib import Path\n" + textwrap.dedent(code)
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


WRITER = """
from fintrade_tui.workspace.connection import open_workspace
ws = open_workspace(Path(sys.argv[1]))
ws.execute("CREATE TABLE IF NOT EXISTS t (who VARCHAR, n INTEGER)")
for n in range(int(sys.argv[3])):
    cur = ws.cursor()
    cur.execute("BEGIN")
    cur.execute("INSERT INTO t VALUES (?, ?)", [sys.argv[2], n])
    cur.execute("INSERT INTO t VALUES (?, ?)", [sys.argv[2] + "-pair", n])
    cur.execute("COMMIT")
print("done")
"""


def _ready(path: Path) -> None:
    with open_workspace(path) as ws:
        ws.execute("CREATE TABLE IF NOT EXISTS t (who VARCHAR, n INTEGER)")


def _open(path: Path, clock: FakeClock) -> SharedConnection:
    """`open_workspace` on a gate of its own that keeps `clock`'s time."""
    return SharedConnection(sharing.Gate(path, connection._prepare, clock))


def _let_go(ws: SharedConnection, clock: FakeClock) -> None:
    """Leave the workspace idle past IDLE, as the explorer does between statements: the
    gate's reaper lets the file go."""
    g = ws.gate
    clock.until_waiting(1)  # the reaper waits for its next look
    clock.advance(sharing.IDLE * 2)
    g._reaper.join(120)
    assert g.con is None and not _locked(g.path)


def _locked(path: Path) -> bool:
    """Does anyone hold the workspace's lock file (as another process would find it)?"""
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def test_two_processes_write_at_once_while_a_third_keeps_it_open(tmp_path: Path) -> None:
    path = tmp_path / "ws.duckdb"
    _ready(path)
    holder = open_workspace(path)  # kept open the whole time, reading, like the explorer
    writers = [_child(WRITER, str(path), who, "150") for who in ("a", "b")]
    seen = []
    while any(w.poll() is None for w in writers):  # reading as often as it can
        (n,) = holder.execute("SELECT count(*) FROM t").fetchone()
        seen.append(n)
    for w in writers:
        out, err = w.communicate()
        assert w.returncode == 0, err
        assert out.strip() == "done"
    rows = holder.execute("SELECT who, count(*), count(DISTINCT n) FROM t GROUP BY 1").fetchall()
    assert sorted(rows) == [(w, 150, 150) for w in ("a", "a-pair", "b", "b-pair")]
    assert seen == sorted(seen)  # the reader saw whole transactions, never a pair half-written
    assert all(n % 2 == 0 for n in seen)
    holder.close()


def test_an_open_but_idle_connection_lets_a_plain_duckdb_process_in(tmp_path: Path) -> None:
    path = tmp_path / "ws.duckdb"
    _ready(path)
    clock = FakeClock()
    holder = _open(path, clock)
    holder.execute("INSERT INTO t VALUES ('me', 1)")
    clock.until_waiting(1)  # the reaper
    clock.advance(sharing.IDLE / 2)
    clock.until_waiting(1)  # it looked: not idle long enough yet
    assert holder.gate.con is not None and _locked(path)
    clock.advance(sharing.IDLE)
    holder.gate._reaper.join(120)
    assert holder.gate.con is None and not _locked(path)  # let go, though still "open"
    con = duckdb.connect(str(path))  # fails with "Conflicting lock" if the file were held
    try:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1,)
    finally:
        con.close()
    holder.close()


def test_a_failed_transaction_leaves_nothing_and_frees_the_file(tmp_path: Path) -> None:
    path = tmp_path / "ws.duckdb"
    _ready(path)
    ws = open_workspace(path)
    cur = ws.cursor()
    cur.execute("BEGIN")
    cur.execute("INSERT INTO t VALUES ('half', 1)")
    cur.close()  # left open: rolled back
    cur = ws.cursor()
    with pytest.raises(duckdb.Error):
        cur.execute("BEGIN")
        cur.execute("INSERT INTO t VALUES ('half', 2)")
        cur.execute("INSERT INTO nowhere VALUES (1)")
    cur.execute("ROLLBACK")
    assert ws.execute("SELECT count(*) FROM t").fetchone() == (0,)
    assert ws.gate.pins == 0
    ws.close()
    assert ws.gate.con is None  # the last user closing lets the file go at once


def test_a_workspace_busy_past_the_wait_is_one_line_naming_the_setting(tmp_path: Path) -> None:
    path = tmp_path / "ws.duckdb"
    _ready(path)
    hog = _child(
        """
        from fintrade_tui.workspace.connection import open_workspace
        ws = open_workspace(Path(sys.argv[1]))
        cur = ws.cursor()
        cur.execute("BEGIN")
        cur.execute("INSERT INTO t VALUES ('hog', 1)")
        print("holding", flush=True)
        sys.stdin.readline()  # until the test is done (it kills this process)
        cur.execute("COMMIT")
        """,
        str(path),
    )
    assert hog.stdout.readline().strip() == "holding"
    before = sharing.DEFAULT_WAIT
    sharing.set_wait(0.5)
    clock = FakeClock()
    try:
        ws = _open(path, clock)  # made after set_wait: waits 0.5 s
        with ThreadPoolExecutor(1) as thread:
            statement = thread.submit(ws.execute, "SELECT count(*) FROM t")
            for _ in range(4):  # 0.4 s: still retrying
                clock.until_waiting(1)
                clock.advance(0.1)
            clock.until_waiting(1)
            assert not statement.done()
            clock.advance(0.2)  # 0.6 s: past the wait
            with pytest.raises(UserError) as err:
                statement.result(timeout=120)
        ws.close()
    finally:
        sharing.set_wait(before)
        hog.kill()
        hog.wait()
    line = str(err.value)
    assert "\n" not in line and str(path) in line
    assert "stayed busy for 0.5 s" in line and "workspace_wait" in line


def test_the_watch_tells_another_process_s_runs_from_its_own(tmp_path: Path) -> None:
    path = tmp_path / "ws.duckdb"
    with open_workspace(path) as ws:
        RunStore(ws)
    clock = FakeClock()
    ws = _open(path, clock)
    runs = RunStore(ws)
    watch = WorkspaceWatch(ws)
    runs.start({"question_id": "F1", "condition": "no_rag", "model": "m"})  # our own
    _let_go(ws, clock)
    assert not watch.changed()
    other = _child(
        """
        from fintrade_tui.workspace.run_records import RunStore
        from fintrade_tui.workspace.connection import open_workspace
        with open_workspace(Path(sys.argv[1])) as ws:
            runs = RunStore(ws)
            for i in range(3):
                runs.start({"question_id": f"F{i}", "condition": "rag", "model": "m"})
        """,
        str(path),
    )
    assert other.wait(60) == 0, other.stderr.read()
    assert watch.changed()
    change = watch.poll()
    assert (change.runs, change.scores) == (3, 0)
    assert change.line() == "Workspace updated by another process: 3 runs new"
    assert not watch.changed()
    _let_go(ws, clock)  # the look read the file: let it go before another process writes
    # another process writes, then we do before the watch looks: theirs is not hidden by ours
    other = _child(
        """
        from fintrade_tui.workspace.run_records import RunStore
        from fintrade_tui.workspace.connection import open_workspace
        with open_workspace(Path(sys.argv[1])) as ws:
            RunStore(ws).start({"question_id": "F9", "condition": "rag", "model": "m"})
        """,
        str(path),
    )
    assert other.wait(60) == 0, other.stderr.read()
    runs.start({"question_id": "F1", "condition": "oracle", "model": "m"})  # our own, after
    _let_go(ws, clock)
    assert watch.changed()
    assert watch.poll().runs == 1
    assert not watch.changed()
    ws.close()


def test_a_watch_that_first_looks_during_our_own_writing_stays_quiet(tmp_path: Path) -> None:
    """The explorer's first look may come while its own write connection is still open (the
    schema it just brought up, a re-score under way): scores it goes on to save are its own,
    not another process's — the Results screen's `m` once announced its own 7 scores as new."""
    path = tmp_path / "ws.duckdb"
    clock = FakeClock()
    ws = _open(path, clock)
    runs, scores = RunStore(ws), ScoreStore(ws)
    ids = [runs.start({"question_id": f"F{i}", "condition": "rag", "model": "m"}) for i in range(3)]
    assert ws.gate.con is not None and ws.gate.writing  # still open from our writing
    watch = WorkspaceWatch(ws)  # the first look, mid-way through our own writes
    for run_id in ids:
        scores.save(Score(run_id=run_id, kind="match", label="correct"))
    _let_go(ws, clock)
    assert not watch.changed()
    ws.close()
