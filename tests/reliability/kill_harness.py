"""Kill harness room: start the real `fintrade-tui` binary in its own process group, SIGKILL
it at a chosen point (after N seconds, after the k-th stderr line, or when a predicate on the
files it writes holds), and report every process it started that is still alive afterwards.

Only the command's own pid is killed (as `kill -9 <pid>` would): its workers are left to die
on their own, which is what the tests check. Descendants are recorded while the command runs
(a worker is re-parented to init once its parent dies, so it cannot be found from the parent
afterwards); the group id catches those started between two polls.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / ".venv" / "bin" / "fintrade-tui"

try:  # psutil when installed, else /proc
    import psutil
except ImportError:  # pragma: no cover - the venv has it
    psutil = None


@dataclass
class Outcome:
    returncode: int  # -9 when the kill landed, the exit code when the command ended first
    killed: bool
    seconds: float  # from start to the kill (or the end)
    stdout: str
    stderr: str
    survivors: list[str] = field(default_factory=list)  # "pid cmdline" alive after the kill
    seen: int = 0  # descendants recorded while it ran


def _proc_children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def _start_time(pid: int) -> str | None:
    """A pid's start time: a (pid, start) pair names one process even if the pid is reused."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None


def descendants(pid: int) -> set[int]:
    """Every living descendant of `pid`."""
    if psutil is not None:
        try:
            return {p.pid for p in psutil.Process(pid).children(recursive=True)}
        except psutil.NoSuchProcess:
            return set()
    kids, out, todo = _proc_children(), set(), [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def group_members(pgid: int) -> set[int]:
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == pgid:
                    out.add(int(entry))
            except OSError:
                continue
    return out


def open_files(pid: int) -> set[str]:
    """The paths a process holds open (its /proc fd links)."""
    out = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return out
    for fd in fds:
        try:
            out.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue
    return out


class Watch:
    """inotify on one folder (Linux, through libc): the loop wakes the moment a file in it is
    created, opened, written or renamed, instead of up to a poll later, so a kill point that
    lasts a few milliseconds (a WAL between a commit and the close) is not missed."""

    MASK = 0x100 | 0x20 | 0x02 | 0x80  # IN_CREATE | IN_OPEN | IN_MODIFY | IN_MOVED_TO

    def __init__(self, folder: Path | None) -> None:
        self.fd = -1
        if folder is None or not folder.is_dir():
            return
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd >= 0 and libc.inotify_add_watch(self.fd, str(folder).encode(), self.MASK) < 0:
            os.close(self.fd)
            self.fd = -1

    def wait(self, seconds: float) -> None:
        """Until an event in the folder or `seconds` passed; the events are drained."""
        if self.fd < 0:
            time.sleep(seconds)
            return
        if select.select([self.fd], [], [], seconds)[0]:
            with contextlib.suppress(BlockingIOError):
                while os.read(self.fd, 65536):
                    pass

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)


def _alive(pid: int, start: str | None) -> bool:
    now = _start_time(pid)
    if now is None or now != start:
        return False
    try:  # a zombie has exited: it holds nothing
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:200]
    except OSError:
        return "?"


def run_and_kill(
    args: list[str],
    *,
    after_seconds: float | None = None,
    after_lines: int | None = None,
    when: Callable[[int], bool] | None = None,
    delay: float = 0.0,
    settle: float = 2.0,
    timeout: float = 120.0,
    env: dict[str, str] | None = None,
    watch: Path | None = None,
) -> Outcome:
    """Run `fintrade-tui ARGS`; SIGKILL it at the first point reached: `after_seconds` from
    the start, the `after_lines`-th line on stderr, or `when(pid)` true (checked every 10 ms
    and at once on each file event in the folder `watch`), each plus `delay` s. `settle` s
    after the kill, list the descendants still alive."""
    events = Watch(watch)  # set up before the start: no early event is missed
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [str(BINARY), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group: what it starts is found by the group id too
        env={**os.environ, **(env or {})},
    )
    lines = {"n": 0}
    out: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

    def read(name: str, stream) -> None:
        for line in iter(stream.readline, b""):
            out[name].append(line)
            if name == "stderr":
                lines["n"] += 1

    readers = [
        threading.Thread(target=read, args=(n, s), daemon=True)
        for n, s in (("stdout", proc.stdout), ("stderr", proc.stderr))
    ]
    for r in readers:
        r.start()
    seen: dict[int, str | None] = {}
    fired_at: float | None = None
    killed = False
    scanned = 0.0
    while proc.poll() is None:
        now = time.monotonic() - t0
        if now - scanned >= 0.1:  # a /proc scan costs a few ms: not at every 10 ms tick
            scanned = now
            for pid in descendants(proc.pid) | (group_members(proc.pid) - {proc.pid}):
                seen.setdefault(pid, _start_time(pid))
        if fired_at is None and (
            (after_seconds is not None and now >= after_seconds)
            or (after_lines is not None and lines["n"] >= after_lines)
            or (when is not None and when(proc.pid))
        ):
            fired_at = now
        if fired_at is not None and now >= fired_at + delay:
            os.kill(proc.pid, signal.SIGKILL)
            killed = True
            break
        if now > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            raise TimeoutError(f"{args} ran {timeout} s without reaching its kill point")
        if fired_at is None:
            events.wait(0.01)
        else:
            time.sleep(min(0.01, max(0.0, fired_at + delay - now)))
    events.close()
    proc.wait()
    seconds = time.monotonic() - t0
    killed = killed and proc.returncode == -signal.SIGKILL
    time.sleep(settle if killed else 0.2)
    survivors = [p for p, st in seen.items() if _alive(p, st)]
    survivors += [p for p in group_members(proc.pid) if p not in survivors]
    report = [f"{p} {_cmdline(p)}" for p in survivors]
    for p in survivors:  # ours: never leave them to the next test
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    for r in readers:
        r.join(timeout=5)
    return Outcome(
        proc.returncode,
        killed,
        seconds,
        b"".join(out["stdout"]).decode(errors="replace"),
        b"".join(out["stderr"]).decode(errors="replace"),
        report,
        len(seen),
    )


def run(args: list[str], timeout: float = 120.0, env: dict[str, str] | None = None) -> Outcome:
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
