"""Deployments of one registry entry (no Ray): each call paced to its deployment's rpm and
tpm, a worker's share of a split limit, a failing deployment cooled down and another one
answering, the answering deployment recorded, keys only from the environment, and a fallback
to another model refused. Pacing runs in fake time (tests/clock.py): what is asserted is when
the pool let each call go."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from pytest import approx

from fintrade_tui.config import Config, DeploymentConfig, ModelConfig
from fintrade_tui.errors import UserError
from fintrade_tui.models import deployments, llm
from fintrade_tui.models.resolve import Model, resolve
from tests.clock import FakeClock


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


def _grants(clock: FakeClock, pool: deployments.Pool, n: int) -> list[tuple[str, float]]:
    """n concurrent calls: the deployment each was given and when (seconds of fake time from
    the start; the clock jumps whenever every call waits)."""
    t0 = clock.monotonic()

    async def one() -> tuple[str, float]:
        name, _ = await pool.acquire({"model": "m"}, [])
        return name, clock.monotonic() - t0

    async def all_calls() -> list[tuple[str, float]]:
        return await asyncio.gather(*(one() for _ in range(n)))

    return clock.run(all_calls())


def _by_deployment(got: list[tuple[str, float]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for name, t in got:
        out.setdefault(name, []).append(t)
    return {name: sorted(ts) for name, ts in out.items()}


def test_each_deployment_is_paced_to_its_rpm_and_a_worker_gets_its_share() -> None:
    # 600 rpm = one call per 0.1 s per deployment; 8 calls over two deployments: 4 each, at
    # the pace exactly (never faster, and no slower: the pool spreads them over both)
    clock = FakeClock()
    got = _by_deployment(_grants(clock, deployments.Pool("m", _entry(), clock=clock), 8))
    assert got == {name: approx([0.0, 0.1, 0.2, 0.3], abs=1e-9) for name in "ab"}
    # one of 3 workers: a third of the limit, one call per 0.3 s per deployment
    clock = FakeClock()
    got = _by_deployment(_grants(clock, deployments.Pool("m", _entry(), 3, clock=clock), 4))
    assert got == {name: approx([0.0, 0.3], abs=1e-9) for name in "ab"}


def test_tpm_holds_calls_until_the_window_has_room() -> None:
    clock = FakeClock()
    deps = [DeploymentConfig(name="only", tpm=250)]
    pool = deployments.Pool("m", _entry(deps=deps, max_tokens=100), clock=clock)
    pool.spent["only"] = [(clock.monotonic() - 59.8, 200)]  # 200 tokens spent 59.8 s ago
    # a call counts 100 tokens: the first waits for the old spend to leave the window, two
    # fit in it then, and the third waits for the first of them to leave in turn
    got = _grants(clock, pool, 3)
    assert sorted(t for _, t in got) == approx([0.2, 0.2, 60.2], abs=1e-9)


def test_a_cooling_deployment_is_left_out_until_its_cooldown_ends() -> None:
    clock = FakeClock()
    pool = deployments.Pool("m", _entry(cooldown=30), clock=clock)
    pool.cool_down("a")
    assert pool.cooled["a"] == clock.monotonic() + 30
    assert _by_deployment(_grants(clock, pool, 3)) == {"b": approx([0.0, 0.1, 0.2], abs=1e-9)}
    clock.advance(30)
    assert {name for name, _ in _grants(clock, pool, 2)} == {"a", "b"}  # back
    # every deployment cooling: the call waits for the one back soonest
    pool.cool_down("a")
    clock.advance(20)
    pool.cool_down("b")  # back 30 s from now, "a" 10 s from now
    assert _grants(clock, pool, 1) == [("a", approx(10.0, abs=1e-9))]


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
    resolved = resolve(cfg, "m").call()
    assert resolved.pool is deployments.pool("m", cfg.models["m"])  # the process's pool
    clock = FakeClock()
    pool = deployments.Pool("m", cfg.models["m"], clock=clock)
    call = llm.Call(resolved.kwargs, pool)
    t0 = clock.monotonic()
    pool.next_free["up"] = t0 + 0.05  # "down" is chosen first

    async def ask() -> tuple[str, llm.Usage]:
        usage = llm.Usage()
        parts = [
            t
            async for t in llm.stream_chat(
                call, [{"role": "user", "content": "q"}], usage, retries=2, backoff=0.01
            )
        ]
        return "".join(parts), usage

    with ThreadPoolExecutor(1) as thread:  # litellm's own loop; the test moves the clock
        answer = thread.submit(asyncio.run, ask())
        clock.until_waiting(1)  # the retry waits for "up"'s turn: "down" is cooling
        assert pool.sent["down"] == t0 and pool.cooled["down"] == t0 + 60
        assert not answer.done()
        clock.advance(0.05)
        text, usage = answer.result(timeout=120)
    assert text == "fine" and usage.deployment == "up" and usage.retries == 1
    assert pool.sent["up"] == approx(t0 + 0.05, abs=1e-9)  # up's turn honoured


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
