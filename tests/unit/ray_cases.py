"""What the Ray batch tests share (tests/unit/test_ray_batch_*.py): each module's own local Ray
(the fixture `cluster`, imported as `ray_cluster`: 2 CPUs, no dashboard, workers at the tests'
priority), its own store of synthetic prices and signals (`base`, as `ray_base`) and five
trading-signal questions resolved against it (`questions`, as `ray_questions`); the scripted
provider each Ray worker registers (`worker_setup`: faults by prompt hash, every call logged)
and the batch helpers: a config, the run specs, a batch sent to Ray, the rows it left."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest

from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.runs.ray_engine import WORKER_NICENESS
from fintrade_tui.runs.runner import Runner, RunSpec
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import small_bundle, write_config

ray = pytest.importorskip("ray")
ANSWER = "AAPL's RSI was 55 on the day, not overbought; see the evidence."
# cheap conditions: none needs the retrieval index, nor statsforecast in each worker (Forecast
# summary imports and fits it: seconds of CPU per worker for what the local engine tests)
CONDITIONS = ["no_rag", "oracle", "tool_use"]  # x 5 questions x 2 models: thirty runs
PACED = ["no_rag", "oracle", "indicator_rag", "tool_use"]  # x 3 questions: twelve calls


def prompt_hash(messages: list) -> str:
    text = json.dumps([m.get("content") for m in messages], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def worker_setup() -> None:
    """Runs in each Ray worker (pickled by value): the scripted provider `scripted/...`
    fails when the prompt's hash is listed in $FINTRADE_TEST_DIR/faults, logs every call
    (api_base, hash) to calls.jsonl, and answers with the api_base that it saw."""
    from litellm import CustomLLM

    from fintrade_tui.models import llm as gateway
    from fintrade_tui.models import providers

    folder = Path(os.environ["FINTRADE_TEST_DIR"])

    class Scripted(CustomLLM):
        async def astreaming(self, model: str, messages: list, api_base=None, **_):
            import litellm

            h = prompt_hash(messages)
            with open(folder / "calls.jsonl", "a") as f:
                f.write(json.dumps({"base": api_base, "hash": h}) + "\n")
            faults = folder / "faults"
            if faults.exists() and h in faults.read_text().split():
                raise litellm.BadRequestError("scripted fault", model, "scripted")
            yield providers.stream_chunk(f"{ANSWER} via {api_base or 'default'}")
            yield providers.stream_chunk("", finished=True)

    gateway.litellm()
    providers.register_provider("scripted", Scripted())


def worker_setup_logging_grants() -> None:
    """`worker_setup`, and each deployment a worker's pool grants logged to grants.jsonl: the
    worker's pid, the deployment, when the pool let the call go (`Pool.sent`, read from the
    pool itself: no client latency in it), the pool's interval and the worker's niceness."""
    from fintrade_tui.models import deployments

    worker_setup()
    if getattr(deployments.Pool.acquire, "logs_grants", False):
        return
    folder = Path(os.environ["FINTRADE_TEST_DIR"])
    acquire = deployments.Pool.acquire

    async def logged(self, kwargs, messages=None):
        name, kw = await acquire(self, kwargs, messages)
        grant = {"pid": os.getpid(), "deployment": name, "sent": self.sent[name]}
        grant["nice"] = os.nice(0)  # the worker's priority
        with open(folder / "grants.jsonl", "a") as f:
            f.write(json.dumps(grant | {"interval": self.interval[name]}) + "\n")
        return name, kw

    logged.logs_grants = True  # type: ignore[attr-defined]
    deployments.Pool.acquire = logged


@pytest.fixture(scope="module", name="base")
def ray_base(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """A store of the module's own, ingested in a second: AAPL's and MSFT's synthetic prices
    and their signals, no filings (the batches ask about trading signals). Built before Ray
    starts in this process."""
    from fintrade_tui.config import load_config
    from fintrade_tui.ingest.pipeline import run_ingest

    root = tmp_path_factory.mktemp("ray-store")
    cfg = load_config(write_config(root, small_bundle(root, [])))
    run_ingest(cfg)
    return cfg


@pytest.fixture(scope="module", name="cluster")
def ray_cluster(tmp_path_factory: pytest.TempPathFactory):
    from ray import cloudpickle  # Ray's own copy pickles the workers' setup

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    folder = tmp_path_factory.mktemp("scripted")
    os.environ["FINTRADE_TEST_DIR"] = str(folder)  # the workers inherit it
    # as `run --engine ray` starts its own Ray: workers at the tests' priority, not Ray's
    # default 15 below it (on a loaded machine each pass took ~100 s instead of ~5)
    os.environ[WORKER_NICENESS] = "0"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield folder
    ray.shutdown()


AS_OF = "2024-06-28"  # a Friday inside the synthetic prices (2021-06-01 on)


@pytest.fixture(scope="module", name="questions")
def ray_questions(base: Config) -> list:
    """Five trading-signal questions about AAPL, resolved against the store (the Oracle's
    evidence: the RSI and moving average it read at the as-of)."""
    from fintrade_tui.questions.resolve import Resolver
    from fintrade_tui.store.db import connect
    from fintrade_tui.workspace.questions import RESOLVED, Question

    def question(i: int) -> Question:
        return Question(
            id=f"R-{i}",
            source="jsonl",
            category="T",
            text=f"Was AAPL overbought on {AS_OF}, by its 14-day RSI and 50-day average? ({i})",
            tickers=["AAPL"],
            scope="company",
            as_of=date.fromisoformat(AS_OF),
            golden_raw=["RSI", "SMA 50"],
            golden=["rsi_14", "sma_50"],
            status=RESOLVED,
        )

    with connect(base.store) as con:
        resolver = Resolver(con, date(2025, 9, 30))
        return [resolver.evidence(question(i)) for i in range(1, 6)]


def ray_cfg(base: Config, tmp: Path, **models: ModelConfig) -> Config:
    models = models or {
        "alpha": ModelConfig(
            model="openai/gpt-4o-mini", tools="router", extra={"mock_response": ANSWER}
        ),
        "beta": ModelConfig(model="scripted/beta", tools="router"),
    }
    cfg = base.model_copy(update={"workspace": tmp / "ws.duckdb", "models": models})
    cfg.runs = cfg.runs.model_copy(update={"backoff": 0.01, "retries": 1})
    return cfg


def batch_specs(cfg: Config, questions: list, batch: str = "b") -> list[RunSpec]:
    return [
        RunSpec(q, c, m, "L5", 1, batch) for q in questions for m in cfg.models for c in CONDITIONS
    ]


def run_on_ray(cfg: Config, specs: list[RunSpec], setup=worker_setup, **kw) -> dict:
    from fintrade_tui.runs.ray_engine import run_ray

    with open_workspace(cfg.workspace) as ws:
        return run_ray(Runner(cfg, RunStore(ws)), specs, setup=setup, **kw)


def batch_rows(ws_path: Path, batch: str = "b") -> list[dict]:
    with duckdb.connect(str(ws_path), read_only=True) as con:
        cur = con.execute("SELECT * FROM runs WHERE batch = ? ORDER BY batch_key", [batch])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def logged_calls(folder: Path, name: str = "calls.jsonl") -> list[dict]:
    path = folder / name
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
