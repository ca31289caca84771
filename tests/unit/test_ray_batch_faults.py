"""`run --engine ray` on a local Ray (2 CPUs, no dashboard): 30 runs planned and landed once,
7 injected faults recorded, then resent alone and nothing after them, and the records equal
to the local engine's. Models are litellm `mock_response` or a scripted custom provider
registered in each worker (no network; tests/unit/ray_cases.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fintrade_tui.config import Config
from fintrade_tui.runs.runner import Runner
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle
from tests.unit.ray_cases import (
    batch_rows,
    batch_specs,
    logged_calls,
    prompt_hash,
    ray_base,  # noqa: F401  (the fixture base)
    ray_cfg,
    ray_cluster,  # noqa: F401  (the fixture cluster)
    ray_questions,  # noqa: F401  (the fixture questions)
    run_on_ray,
    worker_setup,
)

ray = pytest.importorskip("ray")
pytestmark = needs_bundle


@pytest.fixture(scope="module")
def thirty(
    base: Config, cluster: Path, questions: list, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    """30 runs sent to Ray over one workspace, 7 of them with scripted faults: what the pass
    returned and left (rows, the provider's calls). The passes after it (`resent`, `third`)
    go on from its workspace, each its own test, so Ray starts its workers for them once."""
    cfg = ray_cfg(base, tmp_path_factory.mktemp("thirty"))
    specs = batch_specs(cfg, questions)
    # 7 of beta's runs fail: their prompts, hashed as the provider sees them
    runner = Runner(cfg, None)  # prepare() reads only the store
    beta = [s for s in specs if s.model == "beta"]
    chosen = beta[:5] + beta[7:9]
    faulty = {prompt_hash(runner.prepare(s).messages) for s in chosen}
    (cluster / "faults").write_text("\n".join(faulty))
    (cluster / "calls.jsonl").unlink(missing_ok=True)
    out: dict = {"cfg": cfg, "specs": specs, "chosen": chosen, "faulty": faulty}
    out["first"], out["first_rows"] = run_on_ray(cfg, specs), batch_rows(cfg.workspace)
    out["first_calls"] = logged_calls(cluster)
    (cluster / "faults").unlink()
    (cluster / "calls.jsonl").unlink()
    return out


@pytest.fixture(scope="module")
def resent(thirty: dict, cluster: Path) -> dict:
    """The same thirty sent again, the faults gone. The seven go in one shard: one worker
    (Ray starts it, litellm and all) is enough to show which runs are sent again, and the
    first pass ran on two."""
    cfg, specs = thirty["cfg"], thirty["specs"]
    out = {"summary": run_on_ray(cfg, specs, shards=1), "rows": batch_rows(cfg.workspace)}
    return out | {"calls": logged_calls(cluster)}


def test_ray_starts_with_two_cpus_beside_a_store_of_signals(base: Config, cluster: Path) -> None:
    """The module's own Ray and store, started first (each a setup the passes below share:
    on a loaded machine Ray's processes take tens of seconds to start)."""
    from fintrade_tui.store.db import connect

    assert ray.cluster_resources().get("CPU") == 2
    with connect(base.store) as con:
        tickers = con.execute("SELECT DISTINCT ticker FROM signals ORDER BY ticker").fetchall()
        filings = con.execute("SELECT count(*) FROM filings").fetchone()[0]
    assert tickers == [("AAPL",), ("MSFT",)] and filings == 0


def test_thirty_runs_land_once_and_seven_faults_are_recorded(thirty: dict) -> None:
    specs, chosen, faulty = thirty["specs"], thirty["chosen"], thirty["faulty"]
    assert len(specs) == 30
    assert len(faulty) == 7  # seven distinct prompts: the faults hit exactly seven runs

    first = thirty["first"]
    assert first["pending"] == 30 and first["workers"] == 2
    rows = thirty["first_rows"]
    assert len(rows) == 30 and len({r["batch_key"] for r in rows}) == 30
    errors = [r for r in rows if r["status"] != "completed"]
    assert len(errors) == 7 and all("scripted fault" in r["error"] for r in errors)
    assert {(r["question_id"], r["condition"]) for r in errors} == {
        (s.question.id, s.condition) for s in chosen
    }
    assert first["status_completed"] == 23 and first["status_error"] == 7
    assert len([c for c in thirty["first_calls"] if c["hash"] in faulty]) == 7


def test_the_seven_faults_are_resent_alone_then_nothing_is(thirty: dict, resent: dict) -> None:
    second = resent["summary"]
    assert second["pending"] == 7 and second["skipped_completed"] == 23
    assert second["workers"] == 1
    # exactly those 7 reached the provider again
    assert sorted(c["hash"] for c in resent["calls"]) == sorted(thirty["faulty"])
    rows = resent["rows"]
    assert len(rows) == 30 and all(r["status"] == "completed" for r in rows)

    cfg, specs = thirty["cfg"], thirty["specs"]
    third = run_on_ray(cfg, specs)  # everything landed: nothing to send
    assert third["pending"] == 0 and third["skipped_completed"] == 30
    assert len(batch_rows(cfg.workspace)) == 30


def test_ray_records_equal_the_local_engines(
    base: Config, cluster: Path, thirty: dict, resent: dict, tmp_path: Path
) -> None:
    """The thirty runs' records as Ray left them (seven from the resend) and as the local
    engine writes them."""
    from fintrade_tui.runs.batch import run_batch

    cfg_local = ray_cfg(base, tmp_path)
    worker_setup()  # the scripted provider in this process too, for the local engine
    specs = thirty["specs"]
    with open_workspace(cfg_local.workspace) as ws:
        summary = asyncio.run(run_batch(Runner(cfg_local, RunStore(ws)), specs, 4, 2))
    assert summary.status["completed"] == len(specs)
    fields = ["batch_key", "question_id", "condition", "model", "model_string", "params"]
    fields += ["level", "as_of", "prompt", "prompt_hash", "evidence_ids", "evidence"]
    fields += ["tool_calls", "status", "answer", "question_kind", "origin"]
    ray_rows = [{k: r[k] for k in fields} for r in resent["rows"]]
    local_rows = [{k: r[k] for k in fields} for r in batch_rows(cfg_local.workspace)]
    assert len(ray_rows) == len(specs) == 30
    assert ray_rows == local_rows
    assert all(r["evidence_ids"] for r in ray_rows if r["condition"] == "oracle")
