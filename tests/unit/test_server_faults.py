"""A hosted model's faults as a real HTTP server gives them (tests/stub_openai.py on loopback,
an `openai/...` model with `api_base`, the way users configure vLLM or Ollama): the run record
counts every attempt (the OpenAI client's own retries are off), a Retry-After is waited out,
a 500 ends the run after the configured attempts, and a broken or stalled stream ends it with
one clear error line. The retry waits are recorded instead of slept (`llm.sleep`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fintrade_tui.config import Config, DeploymentConfig, ModelConfig
from fintrade_tui.models import deployments, llm
from fintrade_tui.questions.samples import aapl_fy2024
from fintrade_tui.runs.runner import Runner, RunSpec, drain
from fintrade_tui.ui.faults import fault
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle
from tests.stub_openai import serving

pytestmark = needs_bundle
ANSWER = "Apple's ROE was 1.57 at the end of FY2024, well above its peers."
KEY = "sk-stub-0123456789"


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The retry waits asked for, in order (none is slept)."""
    asked: list[float] = []

    async def record(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(llm, "sleep", record)
    monkeypatch.setenv("STUB_KEY", KEY)
    return asked


def _run(built_store: Config, tmp: Path, model: ModelConfig, retries: int = 3) -> dict:
    cfg = built_store.model_copy(update={"workspace": tmp / "ws.duckdb", "models": {"m": model}})
    cfg.runs = cfg.runs.model_copy(update={"backoff": 0.01, "retries": retries})
    spec = RunSpec(aapl_fy2024(built_store.store, "S-1"), "no_rag", "m")
    with open_workspace(cfg.workspace) as ws:
        store = RunStore(ws)
        ids: list[str] = []
        asyncio.run(drain(Runner(cfg, store).stream(spec), lambda ev: ids.append(ev.run_id)))
        return store.get(ids[-1])


def _model(base: str, **kw) -> ModelConfig:
    return ModelConfig(model="openai/stub-model", api_base=base, api_key_env="STUB_KEY", **kw)


def test_two_429s_are_counted_and_their_retry_after_waited_out(
    built_store: Config, tmp_path: Path, waits: list[float]
) -> None:
    limited = {"status": 429, "headers": {"Retry-After": "2"}, "message": "slow down"}
    with serving([limited, limited, {"text": ANSWER}]) as stub:
        run = _run(built_store, tmp_path, _model(stub.base))
    assert run["status"] == "completed" and run["answer"] == ANSWER
    assert run["retries"] == 2
    assert len(stub.requests) == 3  # no request the client library retried on its own
    assert waits == [2.0, 2.0]  # backoff 0.01 and 0.02, the server asked for 2 s each time
    assert all(r["headers"]["authorization"] == f"Bearer {KEY}" for r in stub.requests)
    assert KEY not in str(run)


def test_each_429_cools_its_deployment_down(
    built_store: Config, tmp_path: Path, waits: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    cooled: list[str] = []
    real = deployments.Pool.cool_down
    monkeypatch.setattr(
        deployments.Pool, "cool_down", lambda self, name: cooled.append(name) or real(self, name)
    )
    limited = {"status": 429, "headers": {"Retry-After": "1"}}
    with serving([limited, limited, {"text": ANSWER}]) as stub:
        deps = [DeploymentConfig(name="only", api_base=stub.base)]
        model = ModelConfig(model="openai/stub-model", api_key_env="STUB_KEY", deployments=deps)
        model.cooldown = 0  # the one deployment is tried again at once
        run = _run(built_store, tmp_path, model)
    assert run["status"] == "completed" and run["retries"] == 2
    assert cooled == ["only", "only"] and run["deployment"] == "only"


def test_a_retry_after_too_long_ends_the_run_instead_of_stalling_it(
    built_store: Config, tmp_path: Path, waits: list[float]
) -> None:
    with serving([{"status": 429, "headers": {"Retry-After": "3600"}}]) as stub:
        run = _run(built_store, tmp_path, _model(stub.base))
    assert run["status"] == "error" and run["error"].startswith("RateLimitError")
    assert run["retries"] == 0 and len(stub.requests) == 1 and waits == []


def test_a_500_ends_the_run_after_the_configured_attempts(
    built_store: Config, tmp_path: Path, waits: list[float]
) -> None:
    with serving([{"status": 500, "message": "upstream exploded"}]) as stub:
        run = _run(built_store, tmp_path, _model(stub.base), retries=2)
    assert run["status"] == "error" and run["retries"] == 2
    assert len(stub.requests) == 3 and waits == [0.01, 0.02]
    assert run["error"].startswith("InternalServerError") and "\n" not in run["error"]


def test_a_broken_event_stream_ends_with_one_error_line_and_keeps_the_partial_answer(
    built_store: Config, tmp_path: Path, waits: list[float]
) -> None:
    with serving([{"broken": ANSWER}]) as stub:
        run = _run(built_store, tmp_path, _model(stub.base))
    assert run["status"] == "error"
    assert run["answer"] and ANSWER.startswith(run["answer"]) and run["answer"] != ANSWER
    # what the pane and `ask` show: one line, the inner error, the partial answer marked cut
    shown = fault(run["status"], run["error"], run["answer"])
    assert shown.kind == "connection" and shown.cut and shown.chars == len(run["answer"])
    assert shown.reason == (
        "APIConnectionError: OpenAIException - Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)"
    )
    assert len(stub.requests) == 1  # text had arrived: not retried (it would repeat it)


def test_a_stalled_stream_times_out_with_one_line(
    built_store: Config, tmp_path: Path, waits: list[float]
) -> None:
    # the subject is a time-out: the model's 1 s is waited for real
    with serving([{"stall": ANSWER}]) as stub:
        run = _run(built_store, tmp_path, _model(stub.base, timeout=1))
    assert run["status"] == "timeout" and run["error"] == "no complete answer within 1 s"
    assert ANSWER.startswith(run["answer"]) and run["answer"]
