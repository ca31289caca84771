"""Cold start: from exec of the real `fintrade-tui` binary to its first screen drawn, side by side
with Textual's own floor (a minimal app with a header, a table and a footer, same terminal).

Each subject runs as a fresh process in a pseudo-terminal of --size; the clock stops when the
screen's marker is on the terminal: for the app, a ticker row of the Universe table (the
first screen with its data, read from the DuckDB store); for the floor, its one table row.
Subjects alternate `--reps` times, so a drift in machine load hits both alike. With --evict the
venv's and the store's pages are dropped from the page cache before each rep
(posix_fadvise DONTNEED: clean pages only, no root needed), as after a reboot.

Printed: a table, per subject the median, min and max in seconds, then app / textual; then the
same figures as one JSON line (`app` and `textual` with `median_s`, `min_s`, `max_s`,
`app_over_textual`, `evicted`, `load`). Goal: the app's median under 1 s.

    .venv/bin/python -m benchmarks.bench_cold_start [--reps 5] [--size 160x48] [--evict]
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from benchmarks import harness
from benchmarks.harness import ROOT

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")

FLOOR = """
from textual.app import App
from textual.widgets import DataTable, Footer, Header

class Floor(App):
    def compose(self):
        yield Header()
        yield DataTable()
        yield Footer()

    def on_mount(self):
        t = self.query_one(DataTable)
        t.add_columns("ticker", "name")
        t.add_row("FLOORROW", "ready")

Floor().run()
"""


def evict(paths: list[Path]) -> int:
    """Drop these files' clean pages from the page cache; returns how many files."""
    n = 0
    for top in paths:
        files = [top] if top.is_file() else (p for p in top.rglob("*") if p.is_file())
        for f in files:
            try:
                fd = os.open(f, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                n += 1
            finally:
                os.close(fd)
    return n


def launch(argv: list[str], marker: bytes, size: tuple[int, int], timeout: float = 60.0) -> float:
    """Seconds from exec to `marker` on the terminal."""
    master, slave = pty.openpty()
    cols, rows = size
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = os.environ | {"TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)}
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, start_new_session=True
    )
    os.close(slave)
    seen = b""
    try:
        while time.perf_counter() - t0 < timeout:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
                if marker in ANSI.sub(b"", seen):
                    return time.perf_counter() - t0
            if proc.poll() is not None:
                break
        tail = ANSI.sub(b"", seen)[-400:].decode(errors="replace")
        raise SystemExit(f"{argv[0]}: no {marker!r} on screen (exit {proc.poll()}): {tail}")
    finally:
        os.write(master, b"\x11")  # ctrl+q
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def main() -> None:
    ap = harness.parser(__doc__, reps=5)
    ap.add_argument("--size", default="160x48")
    ap.add_argument("--evict", action="store_true", help="drop the page cache before each rep")
    ap.add_argument("--config", default=None, help="config.yaml (default: the checkout's)")
    ap.add_argument("--marker", default="AAPL", help="text of the app's first screen")
    args = ap.parse_args()
    cols, rows = (int(x) for x in args.size.split("x"))
    binary = str(Path(sys.executable).parent / "fintrade-tui")
    app = [binary] + (["--config", args.config] if args.config else [])
    subjects = {
        "app": (app, args.marker.encode()),
        "textual": ([sys.executable, "-c", FLOOR], b"FLOORROW"),
    }
    store = ROOT / "data" / "fintrade.duckdb"
    cached = [Path(sys.prefix), store]
    times: dict[str, list[float]] = {k: [] for k in subjects}
    for _ in range(args.reps):
        for name, (argv, marker) in subjects.items():
            if args.evict:
                evict(cached)
            times[name].append(launch(argv, marker, (cols, rows)))
    spreads = {name: harness.spread(ts) for name, ts in times.items()}
    out: dict = {
        name: {"median_s": round(t.median, 3), "min_s": round(t.lo, 3), "max_s": round(t.hi, 3)}
        for name, t in spreads.items()
    }
    out["app_over_textual"] = round(out["app"]["median_s"] / out["textual"]["median_s"], 2)
    out["evicted"] = args.evict
    out["load"] = round(harness.load()[0], 1)
    harness.report(
        f"exec -> first screen, terminal {args.size}, {args.reps} reps"
        f"{', page cache dropped before each' if args.evict else ''}, load {out['load']}",
        ["subject", "median s", "min s", "max s"],
        [[name, *t.cells()] for name, t in spreads.items()],
        [f"app / textual: {out['app_over_textual']}x (goal: the app's median under 1 s)"],
    )
    harness.emit(out)


if __name__ == "__main__":
    main()
