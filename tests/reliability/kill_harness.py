"""Kill harness room: start the real `fintrade-tui` binary (or another command) in its own
process group with `FINTRADE_STOP_AT` naming a stop point (`fintrade_tui/kill_points.py`),
wait until it, or one of its workers, has stopped itself there, SIGKILL the command's pid
while it is stopped, and report every process it started that is still alive afterwards.

The kill lands at the named point every time: a stopped process stays stopped, so waiting
for it is a condition, never a race. Only the command's own pid is killed (as `kill -9 <pid>`
would): its workers are left to die on their own, which is what the tests check. Descendants
are recorded while the command runs (a worker is re-parented to init once its parent dies,
so it cannot be found from the parent afterwards); the group id catches the rest.

Also: `run` (the binary to its end), `invoke` (the command to its end in this process), and
what a killed command left, read from a copy so the check never alters the files (`probe`,
`read_tables`, `read_rows`; `read_lock` holds a workspace as a reader does while copying it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from fintrade_tui.kill_points import ENV, STOP_LINE
from tests.clock import wait_until

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / ".venv" / "bin" / "fintrade-tui"
POLL = 0.05  # seconds between /proc looks: the states looked for last until the harness acts

try:  # psutil when installed, else /proc
    import psutil
except ImportError:  # pragma: no cover - the venv has it
    psutil = None


@dataclass
class Outcome:
    returncode: int  # -9 when the kill landed, the exit code of a command run to its end
    killed: bool
    seconds: float  # from start to the kill (or the end)
    stdout: str
    stderr: str
    survivors: list[str] = field(default_factory=list)  # "pid [state] cmdline" still alive
    seen: int = 0  # descendants recorded while it ran
    pid: int | None = None  # the command's
    stopped: int | None = None  # the pid that stopped at the point (the command or a worker)


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name: state, ppid, ..., start time (19)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """A pid's start time: a (pid, start) pair names one process even if the pid is reused."""
    fields = _stat(pid)
    return fields[19] if fields else None


def _state(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[0] if fields else None


def descendants(pid: int) -> set[int]:
    """Every living descendant of `pid`."""
    if psutil is not None:
        try:
            return {p.pid for p in psutil.Process(pid).children(recursive=True)}
        except psutil.NoSuchProcess:
            return set()
    kids: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        if fields := _stat(int(entry)):
            kids.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = set(), [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def group_members(pgid: int) -> set[int]:
    out = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            if os.getpgid(int(entry)) == pgid:
                out.add(int(entry))
    return out


def _alive(pid: int, start: str | None) -> bool:
    """Still the same process, and not a zombie (a zombie has exited: it holds nothing)."""
    fields = _stat(pid)
    return fields is not None and fields[19] == start and fields[0] != "Z"


def _survivors(pgid: int, seen: dict[int, str | None]) -> list[int]:
    """The processes recorded while the command ran, and those of its group, still alive."""
    group = {p: _start_time(p) for p in group_members(pgid)}
    return sorted(p for p, start in (group | seen).items() if _alive(p, start))


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return "?"


class _Output:
    """The command's stdout and stderr, read by two threads as they come (a full pipe would
    block it before its point)."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
        self.readers = [
            threading.Thread(target=self._read, args=(name, stream), daemon=True)
            for name, stream in (("stdout", proc.stdout), ("stderr", proc.stderr))
        ]
        for r in self.readers:
            r.start()

    def _read(self, name: str, stream) -> None:
        for line in iter(stream.readline, b""):
            self.chunks[name].append(line)

    def text(self, name: str) -> str:
        for r in self.readers:
            r.join(timeout=5)  # EOF once every holder of the pipes is gone
        return b"".join(self.chunks[name]).decode(errors="replace")


def run_until_stopped(
    args: list[str],
    point: str,
    *,
    program: list[str] | None = None,
    timeout: float = 300.0,
    settle: float = 10.0,
    env: dict[str, str] | None = None,
) -> Outcome:
    """Run `fintrade-tui ARGS` (or `program + ARGS`) with FINTRADE_STOP_AT=`point` (`NAME` or
    `NAME:N`); once it or a descendant is stopped there, SIGKILL the command's pid. Then wait
    up to `settle` s for every process it started to die, and list those still alive.

    Fails (AssertionError) when the command ends without reaching the point, and
    (TimeoutError) when it has not reached it within `timeout` s."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [*(program or [str(BINARY)]), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group: what it starts is found by the group id too
        env={**os.environ, **(env or {}), ENV: point},
        cwd=ROOT,
    )
    output = _Output(proc)
    seen: dict[int, str | None] = {}
    stopped = None
    while stopped is None and proc.poll() is None:
        family = descendants(proc.pid) | (group_members(proc.pid) - {proc.pid})
        for pid in family:
            seen.setdefault(pid, _start_time(pid))
        stopped = next((p for p in (proc.pid, *sorted(family)) if _state(p) in ("T", "t")), None)
        if stopped is None:
            if time.monotonic() - t0 > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                said = (output.text("stdout") + output.text("stderr"))[-3000:]
                raise TimeoutError(f"{args} did not reach {point} within {timeout} s: {said}")
            time.sleep(POLL)  # waiting on /proc: a condition polled, not a guessed delay
    if stopped is None:
        raise AssertionError(
            f"{args} ended (rc {proc.returncode}) without reaching {point}:"
            f" {output.text('stderr')[-800:]}"
        )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    seconds = time.monotonic() - t0
    survivors = _survivors(proc.pid, seen)
    deadline = time.monotonic() + settle
    while survivors and time.monotonic() < deadline:
        time.sleep(POLL)  # the subject: workers die on their own once the command is killed
        survivors = _survivors(proc.pid, seen)
    report = [f"{p} [{_state(p)}] {_cmdline(p)}" for p in survivors]
    for p in survivors:  # ours: never leave them to the next test
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    stderr = output.text("stderr")
    said = STOP_LINE.split("{reached}")[0].format(point=point.partition(":")[0])
    assert any(
        line.startswith(said) and f"(pid {stopped})" in line for line in stderr.splitlines()
    ), f"pid {stopped} stopped, but not at {point}: {stderr[-800:]}"
    return Outcome(
        proc.returncode,
        proc.returncode == -signal.SIGKILL,
        seconds,
        output.text("stdout"),
        stderr,
        report,
        len(seen),
        proc.pid,
        stopped,
    )


def invoke(args: list[str]) -> Outcome:
    """`fintrade-tui ARGS` run to its end in this process, through click's CliRunner: for a
    command the test does not kill, where starting the binary is not what it tests."""
    from click.testing import CliRunner

    from fintrade_tui.cli import main

    t0 = time.monotonic()
    res = CliRunner().invoke(main, args)
    failed = "" if res.exception is None or res.exit_code == 0 else repr(res.exception)
    return Outcome(res.exit_code, False, time.monotonic() - t0, res.stdout, res.stderr + failed)


@contextlib.contextmanager
def read_lock(db: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold a workspace's lock file shared, as a fintrade-tui reader does, e.g. to copy the
    file: a command `invoke`d here lets the file go (closing it checkpoints its WAL into it) a
    moment after it ends, and this waits for that. No lock file: nothing to wait for."""
    lock = Path(f"{db}.lock")
    if not lock.is_file():
        yield
        return
    fd = os.open(lock, os.O_RDONLY)
    try:

        def locked() -> bool:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        wait_until(locked, timeout, what=f"a shared lock on {lock}")
        yield
    finally:
        os.close(fd)  # the lock goes with it


def file_sha(path: Path) -> str | None:
    """A file's sha256 (None: no file)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


@contextlib.contextmanager
def probe(db: Path):
    """A read-only connection to a copy of the file and its WAL: what the next process would
    see, without touching the files under test."""
    copy = db.with_name(f"probe-{db.name}")
    with read_lock(db):
        shutil.copyfile(db, copy)
        if Path(f"{db}.wal").is_file():
            shutil.copyfile(f"{db}.wal", f"{copy}.wal")
    try:
        with duckdb.connect(str(copy), read_only=True) as con:
            yield con
    finally:
        copy.unlink()
        Path(f"{copy}.wal").unlink(missing_ok=True)


def read_tables(db: Path, skip: dict[str, str] | None = None) -> dict[str, tuple[int, str]]:
    """Rows and a content digest per table, as the next process would read them."""
    if not db.is_file():
        return {}
    out = {}
    with probe(db) as con:
        for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
            where = (skip or {}).get(t, "true")
            out[t] = con.execute(
                f"SELECT count(*), md5(coalesce(string_agg(CAST(x AS VARCHAR), chr(10)"
                f" ORDER BY CAST(x AS VARCHAR)), '')) FROM (SELECT {t} AS x FROM {t}"
                f" WHERE {where})"
            ).fetchone()
    return out


def read_rows(db: Path, sql: str) -> list[tuple]:
    """A query's rows, as the next process would read them."""
    with probe(db) as con:
        return con.execute(sql).fetchall()


def run(args: list[str], timeout: float = 300.0, env: dict[str, str] | None = None) -> Outcome:
    """Run `fintrade-tui ARGS` to its end (no kill)."""
    t0 = time.monotonic()
    res = subprocess.run(
        [str(BINARY), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return Outcome(res.returncode, False, time.monotonic() - t0, res.stdout, res.stderr)
