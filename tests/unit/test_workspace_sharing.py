"""The workspace shared by processes (workspace/sharing.py, workspace/watch.py): a process that
keeps a workspace "open" (the explorer) never locks out another (an import, `ask`), writes stay
all-or-nothing, a workspace busy past `workspace_wait` is one clear line, and the watch tells
another process's runs from this one's own."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.workspace import sharing
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.watch import WorkspaceWatch

ROOT = Path(__file__).resolve().parents[2]


def _child(code: str, *args: str) -> subprocess.Popen:
    """A second process using the workspace through the same code."""
    script = "import sys, time\nfrom pathlib import Path\n" + textwrap.dedent(code)
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
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


def test_two_processes_write_at_once_while_a_third_keeps_it_open(tmp_path: Path) -> None:
    path = tmp_path / "ws.duckdb"
    _ready(path)
    holder = open_workspace(path)  # kept open the whole time, reading, like the explorer
    writers = [_child(WRITER, str(path), who, "150") for who in ("a", "b")]
    seen = []
    while any(w.poll() is None for w in writers):
        (n,) = holder.execute("SELECT count(*) FROM t").fetchone()
        seen.append(n)
        time.sleep(0.02)
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
    holder = open_workspace(path)
    holder.execute("INSERT INTO t VALUES ('me', 1)")
    time.sleep(sharing.IDLE * 3)
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
    assert ws._gate.pins == 0
    ws.close()
    assert ws._gate.con is None  # the last user closing lets the file go at once


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
        time.sleep(5)
        cur.execute("COMMIT")
        """,
        str(path),
    )
    assert hog.stdout.readline().strip() == "holding"
    before = sharing.DEFAULT_WAIT
    sharing.set_wait(0.5)
    try:
        with open_workspace(path) as ws, pytest.raises(UserError) as err:
            ws.execute("SELECT count(*) FROM t")
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
        from fintrade_tui.workspace.run_records import RunStore

        RunStore(ws)
    ws = open_workspace(path)
    runs = RunStore(ws)
    watch = WorkspaceWatch(ws)
    runs.start({"question_id": "F1", "condition": "no_rag", "model": "m"})  # our own
    time.sleep(sharing.IDLE * 3)  # let the file go, as the explorer does between statements
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
    time.sleep(sharing.IDLE * 3)
    assert watch.changed()
    assert watch.poll().runs == 1
    assert not watch.changed()
    ws.close()
