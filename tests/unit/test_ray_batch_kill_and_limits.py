"""`run --engine ray` on a local Ray (2 CPUs, no dashboard): the binary's driver SIGKILLed once
two shards are written leaves only whole shards, and the batch resumes without loss or
duplicates; deployment rate limits hold across two workers. Models are litellm
`mock_response` or a scripted custom provider registered in each worker (no network;
tests/unit/ray_cases.py)."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config, DeploymentConfig, ModelConfig
from fintrade_tui.runs.runner import RunSpec
from tests.conftest import needs_bundle, write_config
from tests.unit.ray_cases import (
    ANSWER,
    PACED,
    batch_rows,
    logged_calls,
    ray_base,  # noqa: F401  (the fixture base)
    ray_cfg,
    ray_cluster,  # noqa: F401  (the fixture cluster)
    ray_questions,  # noqa: F401  (the fixture questions)
    run_on_ray,
    worker_setup_logging_grants,
)

ray = pytest.importorskip("ray")
pytestmark = needs_bundle


def _shards(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet"))


@pytest.fixture(scope="module")
def killed(base: Config, cluster: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """`run --engine ray` (the binary, joining the module's Ray) SIGKILLed once two shards of
    six are written: its command, and the shards and runs it left."""
    from fintrade_tui.runs.batch_shards import batch_dir, readable
    from tests.reliability.kill_harness import run_until_stopped

    tmp = tmp_path_factory.mktemp("killed")
    extra = (
        f"workspace: {tmp / 'ws.duckdb'}\n"
        "models:\n  mock:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(ANSWER)}, mock_delay: 0.3}}\n"
        "runs:\n  concurrency: 2\n  per_model: 2\n"
    )
    config = write_config(tmp / "cfg", base.bundle, base.store, extra)
    questions = tmp / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"K{i}",
                    "text": f"What was AAPL's ROE at the end of FY2024 ({i})?",
                    "category": "F",
                    "as_of": "2024-11-01",
                    "tickers": ["AAPL"],
                    "golden_raw": ["ROE"],
                }
            )
            + "\n"  # fmt: skip
            for i in range(1, 7)
        )
    )
    imported = CliRunner().invoke(
        main, ["--config", str(config), "questions", "import", str(questions)]
    )
    assert imported.exit_code == 0, imported.output
    address = ray.get_runtime_context().gcs_address  # join the module's Ray: no second one
    args = [sys.executable, "-m", "fintrade_tui", "--config", str(config), "run"]
    args += ["--questions", "K*", "--models", "mock", "--json"]
    args += ["--conditions", "no_rag,oracle", "--batch", "kill", "--engine", "ray"]
    args += ["--ray-address", address, "--shards", "6"]
    runs_dir = batch_dir(tmp / "ws.duckdb", "kill") / "runs"
    # stopped once the driver has seen two shards written (two more are in flight at the
    # actors and may land while it is stopped; the last two were never handed out)
    # the time-out only guards against a hang: on a machine loaded 5x over (a flake hunt with
    # an index build beside it) the driver and its actors took 4 minutes to come up
    out = run_until_stopped(args[3:], "ray.shard-written:2", program=args[:3], timeout=900)
    # written: waiting in runs/ (the driver lands them only when the batch ends)
    # a worker writes its shard aside and renames it: every shard in runs/ is whole
    whole, cut = readable(_shards(runs_dir) + _shards(runs_dir.parent / "loaded"))
    out = {"args": args, "ws": tmp / "ws.duckdb", "killed": out.killed, "cut": cut}
    return out | {"written": len(whole)}


def test_a_sigkilled_driver_leaves_whole_shards(killed: dict) -> None:
    assert killed["killed"]
    assert 2 <= killed["written"] <= 4
    assert killed["cut"] == []


def test_the_killed_batch_resumes_without_loss_or_duplicates(killed: dict) -> None:
    """The same batch again, driven from this process (its Ray is the module's): a new
    driver, resuming from what the killed one left on disk, without a Python to start. What
    is left goes as one shard: one worker to start (litellm and all), not two."""
    args = killed["args"][3:]
    args[args.index("--shards") + 1] = "1"
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0, f"{again.output[-2000:]}{again.exception!r}"
    summary = json.loads(again.stdout.strip().splitlines()[-1])
    assert summary["planned"] == 12
    # every shard the killed driver's workers wrote landed first on resuming (a worker still
    # finishing its shard as the driver died may add one)
    assert summary["earlier_shards_loaded"] >= killed["written"]
    assert summary["skipped_completed"] >= 2 * 2
    assert summary["skipped_completed"] + summary["status_completed"] == 12
    with duckdb.connect(str(killed["ws"]), read_only=True) as con:
        per_key = con.execute(
            "SELECT batch_key, count(*) FILTER (status = 'completed'), count(*) FROM runs"
            " WHERE batch = 'kill' GROUP BY batch_key"
        ).fetchall()
    assert len(per_key) == 12
    assert all(done == 1 and total == 1 for _, done, total in per_key), per_key


def test_deployment_limits_hold_across_two_workers(
    base: Config, cluster: Path, questions: list, tmp_path: Path
) -> None:
    rpm = 120  # per deployment: two calls a second in all, so each of two workers gets one
    deps = [DeploymentConfig(name=n, api_base=f"http://{n}.invalid", rpm=rpm) for n in ("d1", "d2")]
    cfg = ray_cfg(base, tmp_path, paced=ModelConfig(model="scripted/paced", deployments=deps))
    specs = [RunSpec(q, c, "paced", "L5", 1, "b") for q in questions[:3] for c in PACED]
    for log in ("calls.jsonl", "grants.jsonl"):
        (cluster / log).unlink(missing_ok=True)
    out = run_on_ray(
        cfg, specs, setup=worker_setup_logging_grants
    )  # two shards: one for each worker
    assert out["status_completed"] == 12 and out["workers"] == 2
    grants = logged_calls(cluster, "grants.jsonl")
    assert len(grants) == 12
    workers = {g["pid"] for g in grants}
    assert len(workers) == 2  # both workers ran
    assert {g["nice"] for g in grants} == {os.nice(0)}  # at the tests' priority, not below
    assert {g["interval"] for g in grants} == {60 * 2 / rpm}  # each paced to half the rpm
    # how a worker's calls split between the deployments is the pool's choice; 12 calls over
    # 2 workers x 2 deployments put 3 or more on one pair, so the spacing below is exercised
    per_pair = {
        (pid, name): sorted(g["sent"] for g in grants if (g["pid"], g["deployment"]) == (pid, name))
        for pid in workers
        for name in ("d1", "d2")
    }
    assert max(len(sent) for sent in per_pair.values()) >= 3, grants
    for (_, name), sent in per_pair.items():  # one worker, one deployment: one per interval
        assert all(b >= a + 60 * 2 / rpm for a, b in pairwise(sent)), (name, sent)
    for name in ("d1", "d2"):
        # both workers together: any run of consecutive calls at most rpm/60 a second, plus
        # one per worker (the clock is the machine's: Ray's workers share it)
        sent = sorted(g["sent"] for g in grants if g["deployment"] == name)
        for i in range(len(sent)):
            for j in range(i + 1, len(sent)):
                assert j - i + 1 <= (sent[j] - sent[i] + 1e-9) * rpm / 60 + 2, (name, sent)
    # each grant reached the provider at the granted deployment's endpoint
    seen = Counter(c["base"] for c in logged_calls(cluster))
    assert seen == Counter(f"http://{g['deployment']}.invalid" for g in grants)
    rows = batch_rows(cfg.workspace)
    assert len(rows) == 12
    for r in rows:  # the recorded deployment is the endpoint the provider saw
        assert r["deployment"] in ("d1", "d2")
        assert r["answer"].endswith(f"via http://{r['deployment']}.invalid")
    # and the one the pool granted, in the worker that ran it
    assert Counter((r["pid"], r["deployment"]) for r in rows) == Counter(
        (g["pid"], g["deployment"]) for g in grants
    )
