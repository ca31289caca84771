"""Deployments of one registry entry (no Ray): each call paced to its deployment's rpm and
tpm, a worker's share of a split limit, a failing deployment cooled down and another one
answering, the answering deployment recorded, keys only from the environment, and a fallback
to another model refused."""

from __future__ import annotations

import asyncio
import time

import pytest

from fintrade_tui.config import Config, DeploymentConfig, ModelConfig
from fintrade_tui.errors import UserError
from fintrade_tui.models import deployments, llm
from fintrade_tui.models.resolve import Model, resolve


def _entry(**kw) -> ModelConfig:
    deps = kw.pop("deps", None) or [
        DeploymentConfig(
            name="a", api_base="http://a.invalid", rpm=600, extra={"mock_response": "A"}
        ),
        DeploymentConfig(
            name="b", api_base="http://b.invalid", rpm=600, extra={"mock_response": "B"}
        ),
    ]
    return ModelConfig(model="openai/gpt-4o-mini", deployments=deps, **kw)


async def _times(pool: deployments.Pool, n: int) -> list[tuple[str, float]]:
    t0 = time.monotonic()

    async def one() -> tuple[str, float]:
        name, _ = await pool.acquire({"model": "m"}, [])
        return name, time.monotonic() - t0

    return await asyncio.gather(*(one() for _ in range(n)))


def test_each_deployment_is_paced_to_its_rpm_and_a_worker_gets_its_share() -> None:
    # 600 rpm = one call per 0.1 s per deployment; 8 calls over two deployments: 4 each
    got = asyncio.run(_times(deployments.Pool("m", _entry()), 8))
    for name in "ab":
        ts = sorted(t for n, t in got if n == name)
        assert len(ts) == 4
        gaps = [b - a for a, b in zip(ts, ts[1:], strict=False)]
        assert min(gaps) >= 0.09, gaps  # never faster than rpm allows
    assert max(t for _, t in got) < 0.6
    # one of 3 workers: a third of the limit, one call per 0.3 s per deployment
    got = asyncio.run(_times(deployments.Pool("m", _entry(), workers=3), 4))
    ts = sorted(t for n, t in got if n == "a")
    assert ts[1] - ts[0] >= 0.29


def test_tpm_holds_calls_until_the_window_has_room() -> None:
    deps = [DeploymentConfig(name="only", tpm=250)]
    pool = deployments.Pool("m", _entry(deps=deps, max_tokens=100))
    pool.spent["only"] = [(time.monotonic() - 59.8, 200)]  # 200 tokens spent 59.8 s ago
    got = asyncio.run(_times(pool, 1))
    assert 0.15 <= got[0][1] < 1.0  # waited for the old spend to leave the window


def test_a_failing_deployment_cools_down_and_the_other_answers(tmp_path) -> None:
    import litellm as lm

    llm.litellm()
    deps = [
        DeploymentConfig(
            name="down",
            api_base="http://down.invalid",
            extra={"mock_response": lm.InternalServerError("boom", "openai", "gpt-4o-mini")},
        ),
        DeploymentConfig(name="up", api_base="http://up.invalid", extra={"mock_response": "fine"}),
    ]
    cfg = Config(models={"m": _entry(deps=deps, cooldown=60)}, workspace=tmp_path / "w.duckdb")
    deployments.set_share(1)
    call = resolve(cfg, "m").call()
    pool = call.pool
    pool.next_free["up"] = time.monotonic() + 0.05  # "down" is chosen first

    async def ask() -> tuple[str, llm.Usage]:
        usage = llm.Usage()
        parts = [
            t
            async for t in llm.stream_chat(
                call, [{"role": "user", "content": "q"}], usage, retries=2, backoff=0.01
            )
        ]
        return "".join(parts), usage

    text, usage = asyncio.run(ask())
    assert text == "fine" and usage.deployment == "up" and usage.retries == 1
    assert pool.cooled["down"] > time.monotonic() + 50


def test_keys_come_from_the_environment_and_fallbacks_are_refused(monkeypatch) -> None:
    deps = [DeploymentConfig(name="k", api_key_env="FINTRADE_TEST_DEP_KEY")]
    with pytest.raises(UserError, match="FINTRADE_TEST_DEP_KEY"):
        deployments.Pool("m", _entry(deps=deps))
    monkeypatch.setenv("FINTRADE_TEST_DEP_KEY", "sk-test-12345678")
    pool = deployments.Pool("m", _entry(deps=deps))
    assert pool._kwargs("k", {"model": "x"})["api_key"] == "sk-test-12345678"
    # a provider echoing a deployment's key never reaches the record
    msg = llm.error_text(ValueError("bad key sk-test-12345678"), llm.Call({}, pool))
    assert "sk-test-12345678" not in msg and "***" in msg
    with pytest.raises(ValueError, match="refused"):
        ModelConfig(model="openai/x", extra={"fallbacks": ["openai/y"]})
    with pytest.raises(ValueError, match="another model"):
        _entry(deps=[DeploymentConfig(name="x", extra={"model": "openai/other"})])
    with pytest.raises(ValueError, match="repeat"):
        _entry(deps=[DeploymentConfig(name="x"), DeploymentConfig(name="x")])


def test_deployments_do_not_change_batch_keys_or_leak_keys() -> None:
    plain = ModelConfig(model="openai/gpt-4o-mini")
    routed = _entry(deps=[DeploymentConfig(name="k", api_key_env="SECRET_ENV")])
    assert Model("a", plain).params == Model("b", routed).params
    assert "SECRET_ENV" not in str(Model("b", routed).params)


def test_the_local_engine_never_imports_ray() -> None:
    import subprocess
    import sys

    code = (
        "import sys, fintrade_tui.cli, fintrade_tui.runs.batch, fintrade_tui.runs.runner,"
        " fintrade_tui.models.deployments, fintrade_tui.runs.batch_shards,"
        " fintrade_tui.runs.ray_engine; print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
