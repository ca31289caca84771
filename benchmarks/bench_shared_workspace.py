"""The explorer while another process writes its workspace: frame gaps and screen open times
with a 1,000-run batch writing (`run_batch` with a mocked model, in its own process, as
`fintrade-tui run` does), side by side with an idle workspace, in one run.

Each measurement is a fresh process running the explorer headless (`App.run_test`), the
subjects interleaved `--reps` times:

- idle: nothing else uses the workspace;
- busy: a writer process runs the batch as `fintrade-tui run` does (its records grouped, a
  transaction every 0.5 s) and keeps writing while the explorer opens;
- per-run: the same batch writing each run's records in transactions of their own (three a
  run), the way a run writes alone (the Arena).

Measured in the explorer: launch -> the Universe's rows on screen; then Company for `--tickers`
(each: Enter on the ticker -> its ratio table filled, then back); Results on the label matrix
while `runs import` of 2,400 labelled runs runs in another process (from the import
transaction's start, before its commit, to the new models on screen); the event loop's gaps all the
while (a 10 ms heartbeat timer: the largest gap, its p99, gaps over 50 ms) and the frames
rendered; how long the explorer waited for the workspace's lock (the rest of any slowdown
is the writer's CPU on a shared machine). The writer reports the runs it wrote during the
measurement. Printed: one table, the median of the reps per subject, then each busy subject /
idle.

    .venv/bin/python -m benchmarks.bench_shared_workspace [--runs 1000] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks import harness, synthetic_runs
from fintrade_tui.config import Config

TICKERS = ["AAPL", "MSFT", "NVDA", "AMZN", "GOOGL"]


def writer(workspace: Path, runs: int, grouped: bool) -> None:
    """The batch: `runs` mocked runs through the real runner and batch engine, its records
    grouped as `fintrade-tui run` writes them, or (`grouped` False) three transactions a run."""
    from benchmarks.bench_batch import mocked_config, mocked_specs
    from fintrade_tui.runs.batch import run_batch
    from fintrade_tui.runs.runner import Runner
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.run_records import RunStore
    from fintrade_tui.workspace.write_behind import BufferedRunStore

    cfg = mocked_config(workspace.parent)
    cfg.workspace = workspace
    cfg.runs = cfg.runs.model_copy(update={"concurrency": 4, "per_model": 4})
    specs = mocked_specs(cfg, runs)
    with open_workspace(workspace) as ws:
        store = BufferedRunStore(ws) if grouped else RunStore(ws)
        print("writing", flush=True)
        t0 = time.perf_counter()
        s = asyncio.run(run_batch(Runner(cfg, store), specs, 4, 4))
        if grouped:
            store.close()
        harness.emit({"runs": s.status["completed"], "wall_s": time.perf_counter() - t0})


async def explore(cfg: Config, tickers: list[str]) -> dict[str, Any]:
    from textual.widgets import DataTable

    from fintrade_tui.ui.app import FinTradeApp

    beats: list[float] = []
    frames: list[float] = []

    class Measured(FinTradeApp):
        def _display(self, screen: Any, renderable: Any) -> None:
            frames.append(time.perf_counter())
            super()._display(screen, renderable)

    t0 = time.perf_counter()
    app = Measured(cfg, start="universe")
    async with app.run_test(size=(150, 45)) as pilot:
        app.set_interval(0.01, lambda: beats.append(time.perf_counter()))

        async def until(check: Any, limit: float = 120) -> float:
            start = time.perf_counter()
            while not check():
                assert time.perf_counter() - start < limit, "the screen never filled"
                await asyncio.sleep(0.005)
            return time.perf_counter()

        def rows(selector: str) -> bool:
            tables = app.screen.query(selector).results(DataTable)
            return any(t.row_count for t in tables)

        universe = await until(lambda: rows("#universe-table")) - t0
        opens = []
        for ticker in tickers:
            start = time.perf_counter()
            app.action_goto("company", ticker=ticker)
            await until(lambda: rows("#company-fundamentals"))
            opens.append(time.perf_counter() - start)
            await pilot.press("escape")
            await pilot.pause(0.2)
        shown_s = await import_shown(app, pilot, cfg)
        end = time.perf_counter()
        waited = app.workspace_connection()._gate.waited
    gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
    return {
        "universe_s": universe,
        "company_s": statistics.median(opens),
        "company_max_s": max(opens),
        "gap_max_ms": max(gaps) * 1000 if gaps else 0,
        "gap_p99_ms": harness.pct(gaps, 99, empty=0) * 1000,
        "gaps_over_50ms": sum(g > 0.05 for g in gaps),
        "frames": len(frames),
        "import_shown_s": shown_s,
        "workspace_wait_s": waited,  # of all that: waiting for the writer's lock
        "seconds": end - t0,
    }


async def import_shown(app: Any, pilot: Any, cfg: Config) -> float:
    """Results open on the label matrix; `fintrade-tui runs import` of 2,400 labelled runs in
    another process: seconds from its transaction's start (before the commit) until the
    matrix shows the new models."""
    from textual.widgets import DataTable

    from fintrade_tui.workspace.connection import open_workspace

    folder = cfg.workspace.parent
    published = folder / "published.jsonl"
    synthetic_runs.write(published, questions=150)
    config = harness.write_config(folder, cfg.bundle, cfg.store, cfg.workspace, name="import.yaml")
    app.action_goto("results")
    await pilot.pause(0.5)
    app.screen.kind = "labels"
    app.screen.reload_accuracy()
    await pilot.pause(1.0)

    def models() -> set[str]:
        grid = app.screen.query_one("#accuracy", DataTable)
        return {str(grid.get_row_at(i)[0]) for i in range(grid.row_count)}

    cmd = [sys.executable, "-m", "fintrade_tui", "--config", str(config), "runs", "import"]
    proc = subprocess.Popen([*cmd, str(published)], stdout=subprocess.DEVNULL)
    start = time.monotonic()
    while not set(synthetic_runs.MODELS) <= models():
        assert time.monotonic() - start < 300, "the imported runs never showed"
        await asyncio.sleep(0.01)
    shown = datetime.now()
    assert proc.wait() == 0
    with open_workspace(cfg.workspace) as ws:
        (began,) = ws.execute("SELECT max(imported_at) FROM runs").fetchone()
    return (shown - began).total_seconds()


def one(subject: str, folder: Path, runs: int, tickers: list[str]) -> dict[str, Any]:
    """One measurement in this process: the explorer on a fresh workspace, a writer process
    started first unless `subject` is idle."""
    from fintrade_tui.config import load_config
    from fintrade_tui.workspace.connection import open_workspace

    cfg = load_config()
    cfg.workspace = folder / f"{subject}.duckdb"
    with open_workspace(cfg.workspace):
        pass
    proc = None
    if subject != "idle":
        cmd = ["--write", str(cfg.workspace), "--runs", str(runs)]
        cmd += ["--per-run"] if subject == "per-run" else []
        argv = harness.module_argv("bench_shared_workspace", *cmd)
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=harness.ROOT)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
        start = time.monotonic()
        while _runs(cfg.workspace) < 20:  # past the first runs' litellm import: full speed
            assert proc.poll() is None and time.monotonic() - start < 300, "the batch stalled"
            time.sleep(0.2)
    count = _runs(cfg.workspace) if proc else 0
    out = asyncio.run(explore(cfg, tickers))
    if proc is not None:
        out["runs_written_meanwhile"] = _runs(cfg.workspace) - count
        proc.terminate()
        proc.wait()
    return out


def _runs(path: Path) -> int:
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(path) as ws:
        tables = ws.execute("SELECT 1 FROM information_schema.tables WHERE table_name = 'runs'")
        if not tables.fetchone():
            return 0
        return ws.execute("SELECT count(*) FROM runs WHERE batch = 'bench'").fetchone()[0]


def main() -> None:
    ap = harness.parser(__doc__, reps=3)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--tickers", default=",".join(TICKERS))
    ap.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # the writer process
    ap.add_argument("--per-run", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # one measurement: idle | busy | per-run
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.write:
        return writer(a.write, a.runs, grouped=not a.per_run)
    tickers = a.tickers.split(",")
    if a.one:
        return harness.emit(one(a.one, a.folder, a.runs, tickers))
    subjects = ("idle", "busy", "per-run")
    results: dict[str, list[dict[str, Any]]] = {s: [] for s in subjects}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(a.reps):
            for subject in subjects:
                folder = Path(tmp) / f"{subject}-{rep}"
                folder.mkdir()
                args = ["--one", subject, "--folder", str(folder)]
                args += ["--runs", str(a.runs), "--tickers", a.tickers]
                results[subject].append(harness.child("bench_shared_workspace", *args))
                harness.log(f"rep {rep + 1} {subject}: {results[subject][-1]}")
    keys = [k for k in results["idle"][0] if k != "seconds"]
    med = {s: {k: statistics.median(r[k] for r in rs) for k in keys} for s, rs in results.items()}
    rows = []
    for k in keys:
        i, b, p = (med[s][k] for s in subjects)
        ratios = [f"{x / i:.2f}" if i else "-" for x in (b, p)]
        rows.append([k, f"{i:.3f}", f"{b:.3f}", f"{p:.3f}", *ratios])
    written = [
        statistics.median(r["runs_written_meanwhile"] for r in results[s]) for s in subjects[1:]
    ]
    rows.append(
        ["runs written meanwhile", None, f"{written[0]:.0f}", f"{written[1]:.0f}", None, None]
    )
    harness.report(
        f"explorer with a {a.runs}-run batch writing vs an idle workspace ({a.reps} reps, median)",
        ["measure", "idle", "busy", "per-run", "busy/idle", "per-run/idle"],
        rows,
    )
    return None


if __name__ == "__main__":
    main()
