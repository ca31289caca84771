"""What the benchmarks share: their common options, timing and the spread of repeated timings,
a fresh process per measurement, the machine's load, the CLI run in-process, and the one table
every bench prints its results as.

The table is plain aligned text that is also a Markdown table (numeric columns right-aligned),
so a run's output can be pasted into docs/benchmarks.md as it is. Progress goes to stderr
(`log`), the report to stdout (`report`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")

# --------------------------------------------------------------------------- options


def parser(doc: str | None, reps: int | None = None) -> argparse.ArgumentParser:
    """A bench's parser: the first line of its docstring as the description, and `--reps` (how
    often each measurement repeats) when `reps` gives its default."""
    ap = argparse.ArgumentParser(description=(doc or "").strip().split("\n")[0])
    if reps is not None:
        ap.add_argument("--reps", type=int, default=reps, help="repetitions of each measurement")
    return ap


def add_store(ap: argparse.ArgumentParser) -> None:
    """`--store` (the built store, only read) and `--bundle` (the data bundle)."""
    ap.add_argument("--store", type=Path, default=Path("data/fintrade.duckdb"))
    ap.add_argument("--bundle", type=Path, default=Path("../shared/data"))


def need_store(path: Path) -> Path:
    """The store's absolute path; no store stops the bench with the fix."""
    if not path.is_file():
        raise SystemExit(f"{path}: no store (fix: `fintrade-tui ingest` first)")
    return path.resolve()


def write_config(
    folder: Path,
    bundle: Path,
    store: Path,
    workspace: Path | None = None,
    extra: str = "",
    name: str = "config.yaml",
) -> Path:
    """A config file in `folder` naming the bundle, the store and a workspace (by default
    `folder/ws.duckdb`), plus `extra` YAML; returns its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    ws = workspace or folder / "ws.duckdb"
    path.write_text(f"bundle: {bundle.resolve()}\nstore: {store}\nworkspace: {ws}\n{extra}")
    return path


def cli(config: Path, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[float, str]:
    """Seconds and output of `fintrade-tui --config CONFIG ARGS` run in this process (click's
    runner, so no interpreter start is counted); an exit code not in `ok` stops the bench (3:
    `run` finished with some runs in error, which a bench of failures may expect)."""
    from click.testing import CliRunner

    from fintrade_tui.cli import main

    t0 = time.perf_counter()
    res = CliRunner().invoke(main, ["--config", str(config), *args])
    took = time.perf_counter() - t0
    if res.exit_code not in ok:
        raise SystemExit(f"{' '.join(args)} failed: {res.output}")
    return took, res.output


# --------------------------------------------------------------------------- timing


def clock(fn: Callable[[], T]) -> tuple[float, T]:
    """Seconds of one call of `fn`, and what it returned."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def timed(fn: Callable[[], object]) -> float:
    """Seconds of one call of `fn`."""
    return clock(fn)[0]


def repeat(fn: Callable[[], object], reps: int) -> list[float]:
    """Seconds of each of `reps` calls of `fn`."""
    return [timed(fn) for _ in range(reps)]


class Spread(NamedTuple):
    """The median and the range of repeated measurements."""

    median: float
    lo: float
    hi: float

    def cells(self, fmt: str = ".3f") -> list[str]:
        """median, min, max, each as `fmt` formats it."""
        return [format(v, fmt) for v in self]


def spread(values: Iterable[float]) -> Spread:
    """Median, min and max of `values`."""
    xs = list(values)
    return Spread(statistics.median(xs), min(xs), max(xs))


def pct(values: Iterable[float], p: float, empty: float = math.nan) -> float:
    """The nearest-rank `p`th percentile of `values` (`empty` when there are none)."""
    xs = sorted(values)
    if not xs:
        return empty
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Steps(dict[str, list[float]]):
    """Seconds of named steps over repetitions, in the order first seen."""

    COLUMNS = ("step", "best s", "median s", "runs/s")

    def add(self, step: str, seconds: float) -> float:
        """One repetition's seconds of `step`; returns them."""
        self.setdefault(step, []).append(seconds)
        return seconds

    def rows(self, runs: int) -> list[list[str]]:
        """Per step: best and median seconds, and `runs` per second at its best (`COLUMNS`)."""
        return [
            [k, f"{min(v):.2f}", f"{statistics.median(v):.2f}", f"{runs / min(v):.0f}"]
            for k, v in self.items()
        ]


# --------------------------------------------------------------------------- processes, load


def module_argv(module: str, *args: str) -> list[str]:
    """The command running `benchmarks.<module>` with `args` in a fresh interpreter."""
    return [sys.executable, "-m", f"benchmarks.{module}", *args]


def child(module: str, *args: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One measurement in a fresh process (its imports, memory and event loop its own):
    `python -m benchmarks.<module> ARGS` from the project root, its last stdout line read as
    JSON (`emit`). A failed child stops the bench with the end of its stderr."""
    out = subprocess.run(
        module_argv(module, *args),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=None if env is None else os.environ | dict(env),
    )
    if out.returncode:
        raise SystemExit(f"{module} {' '.join(args)}: failed\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def emit(result: Mapping[str, Any]) -> None:
    """A child's result, one JSON line on stdout (what `child` reads)."""
    print(json.dumps(result), flush=True)


def load() -> tuple[float, float, float]:
    """The 1/5/15-minute load averages: other processes share the cores."""
    return os.getloadavg()


def machine(start: Sequence[float], extra: str = "") -> str:
    """A line naming the CPUs and the load averages at `start` and now (re-run when high)."""
    fmt = " ".join
    return (
        f"machine: {os.cpu_count()} CPUs{extra}; load average (1/5/15 min) "
        f"{fmt(f'{x:.1f}' for x in start)} at start, {fmt(f'{x:.1f}' for x in load())} at end"
    )


def log(msg: str) -> None:
    """Progress, time-stamped, to stderr."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the report

_NUMBER = re.compile(r"[-+<>~]?\s?([\d.,]*\d(e[-+]?\d+)?|nan|inf)\s?[a-zA-Z%×/]{0,4}")


def _text(cell: object) -> str:
    return "-" if cell is None else str(cell).replace("|", "\\|")


def render(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """`rows` under `columns` as an aligned Markdown table; numeric columns right-aligned."""
    body = [[_text(c) for c in r] for r in rows]
    head = [_text(c) for c in columns]
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    right = [
        i > 0 and all(_NUMBER.fullmatch(r[i]) or r[i] in ("", "-", "—") for r in body)
        for i in range(len(head))
    ]

    def line(cells: list[str]) -> str:
        padded = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    marks = [
        "-" * (w + 1) + ":" if r else "-" * (w + 2) for w, r in zip(widths, right, strict=True)
    ]
    rule = "|" + "|".join(marks) + "|"
    return "\n".join([line(head), rule, *(line(r) for r in body)])


def report(
    title: str | Sequence[str],
    columns: Sequence[str],
    rows: Iterable[Sequence[object]],
    notes: Sequence[str] = (),
) -> None:
    """A bench's results on stdout: its title line(s), the one table, then short notes (what
    the columns mean, a verdict)."""
    for t in [title] if isinstance(title, str) else title:
        print(t)
    print()
    print(render(columns, rows))
    if notes:
        print()
        print("\n".join(notes), flush=True)


def checks(items: Sequence[tuple[str, bool, str]]) -> tuple[list[str], int]:
    """PASS/FAIL lines for (name, ok, detail) checks, and the exit status (1 when one fails)."""
    lines = [f"{'PASS' if ok else 'FAIL'}  {name:<44} {detail}" for name, ok, detail in items]
    return lines, 0 if all(ok for _, ok, _ in items) else 1
