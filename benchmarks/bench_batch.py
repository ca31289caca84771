"""Batch engine benchmark: the same 500 mocked runs on the local engine and on Ray, in one run.

Run from the project root (needs the store, `fintrade-tui ingest`, and the `ray` extra):

    .venv/bin/python -m benchmarks.bench_batch                  # 500 runs, both engines
    .venv/bin/python -m benchmarks.bench_batch --runs 100 --multi-node

Measures side by side:
1. wall time, runs/s and the per-run overhead (wall time / runs, the model answering at once:
   a litellm `mock_response`) of `run_batch` (local) and `run_ray` on a local Ray started with
   `ray.init(num_cpus=2)` — Ray's start and the first workers are counted, reported apart;
2. with --multi-node: the documented cluster path on this machine — `ray start --head`, a second
   `ray start --address` worker node, then `fintrade-tui run --engine ray --ray-address auto`
   as a subprocess — its summary, then `ray stop`.

The runs are 250 variants of the packaged sample question (Apple FY2024) x {no_rag, oracle}:
conditions that read the store only. Progress to stderr, the report (one table, a row per
engine) to stdout; workspaces go to a temp dir.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks import harness
from fintrade_tui.config import Config, ModelConfig, load_config
from fintrade_tui.runs.runner import Runner, RunSpec
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore

ANSWER = "Apple's ROE was high and its ROA steady; see the evidence."


def mocked_specs(cfg: Config, n: int) -> list[RunSpec]:
    """`n` runs: variants of the packaged sample question x {no_rag, oracle}, model `mock`."""
    from fintrade_tui.questions.samples import aapl_fy2024

    q = aapl_fy2024(cfg.store, "B-0")
    conds = ["no_rag", "oracle"]
    qs = [replace(q, id=f"B-{i}", text=f"{q.text} (#{i})") for i in range(-(-n // len(conds)))]
    return [RunSpec(x, c, "mock", "L5", 1, "bench") for x in qs for c in conds][:n]


def mocked_config(folder: Path) -> Config:
    """The checkout's config with the workspace in `folder` and one model, `mock`, answering
    at once (litellm's `mock_response`)."""
    cfg = load_config()
    models = {"mock": ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": ANSWER})}
    cfg = cfg.model_copy(update={"workspace": folder / "ws.duckdb", "models": models})
    cfg.runs = cfg.runs.model_copy(update={"concurrency": 16, "per_model": 16})
    return cfg


def local(n: int, tmp: Path) -> dict:
    """`n` mocked runs on the local engine (`run_batch`)."""
    from fintrade_tui.runs.batch import run_batch

    cfg = mocked_config(tmp / "local")
    (tmp / "local").mkdir()
    specs = mocked_specs(cfg, n)
    with open_workspace(cfg.workspace) as ws:
        t0 = time.perf_counter()
        s = asyncio.run(run_batch(Runner(cfg, RunStore(ws)), specs, 16, 16))
        wall = time.perf_counter() - t0
    return {"engine": "local", "runs": s.status["completed"], "wall_s": wall, "startup_s": 0.0}


def on_ray(n: int, tmp: Path) -> dict:
    """`n` mocked runs on a local Ray of 2 CPUs; its start counted, and reported apart."""
    import ray

    from fintrade_tui.runs.ray_engine import run_ray

    cfg = mocked_config(tmp / "ray")
    (tmp / "ray").mkdir()
    specs = mocked_specs(cfg, n)
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter() - t0
    try:
        with open_workspace(cfg.workspace) as ws:
            out = run_ray(Runner(cfg, RunStore(ws)), specs)
    finally:
        ray.shutdown()
    wall = time.perf_counter() - t0
    return {
        "engine": f"ray (2 CPUs, {out['workers']} workers, {out['shards']} shards)",
        "runs": out.get("status_completed", 0),
        "wall_s": wall,
        "startup_s": started,
    }


def multi_node(n: int, tmp: Path) -> tuple[dict | None, list[str]]:
    """Head and a second worker node on this machine, the CLI joining with --ray-address auto:
    the CLI's row (None when the cluster did not start) and notes."""
    ray_bin = str(Path(sys.executable).with_name("ray"))
    cli = str(Path(sys.executable).with_name("fintrade-tui"))
    # a same-machine trial: Ray's token auth off for head, worker and CLI alike (on a real
    # cluster keep it on and give every node the cluster's token)
    env = os.environ | {"RAY_ADDRESS": "", "RAY_AUTH_MODE": "disabled"}
    steps = [
        [ray_bin, "start", "--head", "--num-cpus=1", "--include-dashboard=false", "--port=6390"],
        [ray_bin, "start", "--address=127.0.0.1:6390", "--num-cpus=1"],
    ]
    try:
        for cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
            harness.log(f"$ {' '.join(cmd[1:])} -> exit {r.returncode}")
            if r.returncode:
                return None, [f"multi-node: `{' '.join(cmd[1:3])}` failed", r.stderr[-1500:]]
        status = subprocess.run(
            [ray_bin, "status"], capture_output=True, text=True, env=env, timeout=60
        )
        lines = status.stdout.splitlines()
        active = (
            [x.strip() for x in lines[lines.index("Active:") + 1 :]] if "Active:" in lines else []
        )
        nodes = " / ".join(active[: next((i for i, x in enumerate(active) if ":" in x), 3)])
        extra = (
            "models:\n  mock:\n    model: openai/gpt-4o-mini\n"
            f"    extra: {{mock_response: {json.dumps(ANSWER)}}}\n"
        )
        base = load_config()
        config = harness.write_config(
            tmp, base.bundle, base.store, tmp / "cluster.duckdb", extra, "cluster.yaml"
        )
        cmd = [cli, "--config", str(config), "run", "--questions", "*", "--limit", str(n)]
        cmd += ["--models", "mock", "--conditions", "no_rag", "--engine", "ray"]
        cmd += ["--ray-address", "auto", "--batch", "cluster", "--json"]
        wall, r = harness.clock(
            lambda: subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        )
        row = {"engine": f"ray cluster via the CLI, exit {r.returncode}", "wall_s": wall}
        notes = [f"multi-node: `ray status` active: {nodes}; the CLI exited {r.returncode}"]
        if r.returncode == 0:
            notes.append(f"summary ({wall:.1f} s): {r.stdout.strip().splitlines()[-1]}")
        else:
            notes.append(r.stderr[-2000:])
        return row, notes
    finally:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True, env=env, timeout=120)


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--multi-node", action="store_true", help="also try ray start head + worker")
    ap.add_argument("--only-multi-node", action="store_true", help="skip the side-by-side part")
    args = ap.parse_args()
    rows: list[dict] = []
    notes: list[str] = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.only_multi_node:
            harness.log(f"{args.runs} mocked runs per engine ...")
            rows = [local(args.runs, tmp), on_ray(args.runs, tmp)]
            lo, ra = rows
            ratio = (ra["wall_s"] / ra["runs"]) / (lo["wall_s"] / lo["runs"])
            notes.append(
                f"per-run overhead, ray / local: {ratio:.1f}x (this machine: 2 shared cores)"
            )
        if args.multi_node or args.only_multi_node:
            row, more = multi_node(min(args.runs, 50), tmp)
            rows += [row] if row else []
            notes += more
    cells = []
    for r in rows:
        runs = r.get("runs")
        cells.append(
            [
                r["engine"],
                runs,
                f"{r['wall_s']:.1f}",
                f"{r['startup_s']:.1f}" if "startup_s" in r else None,
                f"{runs / r['wall_s']:.1f}" if runs else None,
                f"{1000 * r['wall_s'] / max(1, runs):.1f}" if runs else None,
            ]
        )
    harness.report(
        f"{args.runs} mocked runs per engine",
        ["engine", "runs", "wall s", "start s", "runs/s", "ms/run"],
        cells,
        notes,
    )


if __name__ == "__main__":
    main()
