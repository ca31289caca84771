"""Batch engine benchmark: the same 500 mocked runs on the local engine and on Ray, in one run.

Run from the project root (needs the store, `fintrade-tui ingest`, and the `ray` extra):

    .venv/bin/python benchmarks/bench_batch.py                  # 500 runs, both engines
    .venv/bin/python benchmarks/bench_batch.py --runs 100 --multi-node

Measures side by side:
1. wall time, runs/s and the per-run overhead (wall time / runs, the model answering at once:
   a litellm `mock_response`) of `run_batch` (local) and `run_ray` on a local Ray started with
   `ray.init(num_cpus=2)` — Ray's start and the first workers are counted, reported apart;
2. with --multi-node: the documented cluster path on this machine — `ray start --head`, a second
   `ray start --address` worker node, then `fintrade-tui run --engine ray --ray-address auto`
   as a subprocess — its summary, then `ray stop`.

The runs are 250 variants of the packaged sample question (Apple FY2024) x {no_rag, oracle}:
conditions that read the store only. Progress to stderr, the report to stdout; workspaces go
to a temp dir.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from fintrade_tui.config import Config, ModelConfig, load_config
from fintrade_tui.runs.runner import Runner, RunSpec
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore

ANSWER = "Apple's ROE was high and its ROA steady; see the evidence."


def _specs(cfg: Config, n: int) -> list[RunSpec]:
    from fintrade_tui.questions.samples import aapl_fy2024

    q = aapl_fy2024(cfg.store, "B-0")
    conds = ["no_rag", "oracle"]
    qs = [replace(q, id=f"B-{i}", text=f"{q.text} (#{i})") for i in range(-(-n // len(conds)))]
    return [RunSpec(x, c, "mock", "L5", 1, "bench") for x in qs for c in conds][:n]


def _cfg(folder: Path) -> Config:
    cfg = load_config()
    models = {"mock": ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": ANSWER})}
    cfg = cfg.model_copy(update={"workspace": folder / "ws.duckdb", "models": models})
    cfg.runs = cfg.runs.model_copy(update={"concurrency": 16, "per_model": 16})
    return cfg


def local(n: int, tmp: Path) -> dict:
    from fintrade_tui.runs.batch import run_batch

    cfg = _cfg(tmp / "local")
    (tmp / "local").mkdir()
    specs = _specs(cfg, n)
    with open_workspace(cfg.workspace) as ws:
        t0 = time.perf_counter()
        s = asyncio.run(run_batch(Runner(cfg, RunStore(ws)), specs, 16, 16))
        wall = time.perf_counter() - t0
    return {"engine": "local", "runs": s.status["completed"], "wall_s": wall, "startup_s": 0.0}


def on_ray(n: int, tmp: Path) -> dict:
    import ray

    from fintrade_tui.runs.ray_engine import run_ray

    cfg = _cfg(tmp / "ray")
    (tmp / "ray").mkdir()
    specs = _specs(cfg, n)
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


def multi_node(n: int, tmp: Path) -> None:
    """Head and a second worker node on this machine, the CLI joining with --ray-address auto."""
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
            print(f"$ {' '.join(cmd[1:])} -> exit {r.returncode}", file=sys.stderr)
            if r.returncode:
                print(r.stderr[-1500:], file=sys.stderr)
                return
        status = subprocess.run(
            [ray_bin, "status"], capture_output=True, text=True, env=env, timeout=60
        )
        lines = status.stdout.splitlines()
        active = (
            [x.strip() for x in lines[lines.index("Active:") + 1 :]] if "Active:" in lines else []
        )
        nodes = " / ".join(active[: next((i for i, x in enumerate(active) if ":" in x), 3)])
        config = tmp / "cluster.yaml"
        base = load_config()
        config.write_text(
            f"bundle: {base.bundle}\nstore: {base.store}\nworkspace: {tmp / 'cluster.duckdb'}\n"
            "models:\n  mock:\n    model: openai/gpt-4o-mini\n"
            f"    extra: {{mock_response: {json.dumps(ANSWER)}}}\n"
        )
        cmd = [cli, "--config", str(config), "run", "--questions", "*", "--limit", str(n)]
        cmd += ["--models", "mock", "--conditions", "no_rag", "--engine", "ray"]
        cmd += ["--ray-address", "auto", "--batch", "cluster", "--json"]
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        wall = time.perf_counter() - t0
        print(f"\nmulti-node: `ray status` active: {nodes}; the CLI exited {r.returncode}")
        if r.returncode == 0:
            print(f"summary ({wall:.1f} s): {r.stdout.strip().splitlines()[-1]}")
        else:
            print(r.stderr[-2000:])
    finally:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True, env=env, timeout=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--multi-node", action="store_true", help="also try ray start head + worker")
    ap.add_argument("--only-multi-node", action="store_true", help="skip the side-by-side part")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.only_multi_node:
            multi_node(min(args.runs, 50), tmp)
            return
        print(f"{args.runs} mocked runs per engine ...", file=sys.stderr)
        rows = [local(args.runs, tmp), on_ray(args.runs, tmp)]
        print(f"{'engine':40} {'runs':>5} {'wall s':>7} {'start s':>7} {'runs/s':>7} {'ms/run':>7}")
        for r in rows:
            rate = r["runs"] / r["wall_s"]
            per = 1000 * r["wall_s"] / max(1, r["runs"])
            print(
                f"{r['engine']:40} {r['runs']:>5} {r['wall_s']:>7.1f} {r['startup_s']:>7.1f}"
                f" {rate:>7.1f} {per:>7.1f}"
            )
        lo, ra = rows
        ratio = (ra["wall_s"] / ra["runs"]) / (lo["wall_s"] / lo["runs"])
        print(f"per-run overhead, ray / local: {ratio:.1f}x (this machine: 2 shared cores)")
        if args.multi_node:
            multi_node(min(args.runs, 50), tmp)


if __name__ == "__main__":
    main()
