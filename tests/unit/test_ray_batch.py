"""`run --engine ray` on a local Ray (2 CPUs, no dashboard): 30 runs planned and landed once,
7 injected faults recorded and resent alone, a SIGKILLed driver resumed without loss or
duplicates, records equal to the local engine's, and deployment rate limits held across two
workers. Models are litellm `mock_response` or a scripted custom provider registered in
each worker (no network)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from collections import Counter
from datetime import date
from itertools import pairwise
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config, DeploymentConfig, ModelConfig
from fintrade_tui.runs.ray_engine import WORKER_NICENESS
from fintrade_tui.runs.runner import Runner, RunSpec
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle, small_bundle, write_config

ray = pytest.importorskip("ray")
pytestmark = needs_bundle
ANSWER = "AAPL's RSI was 55 on the day, not overbought; see the evidence."
# cheap conditions: none needs the retrieval index, nor statsforecast in each worker (Forecast
# summary imports and fits it: seconds of CPU per worker for what the local engine tests)
CONDITIONS = ["no_rag", "oracle", "tool_use"]  # x 5 questions x 2 models: thirty runs
PACED = ["no_rag", "oracle", "indicator_rag", "tool_use"]  # x 3 questions: twelve calls


def _hash(messages: list) -> str:
    text = json.dumps([m.get("content") for m in messages], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _setup() -> None:
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

            h = _hash(messages)
            with open(folder / "calls.jsonl", "a") as f:
                f.write(json.dumps({"base": api_base, "hash": h}) + "\n")
            faults = folder / "faults"
            if faults.exists() and h in faults.read_text().split():
                raise litellm.BadRequestError("scripted fault", model, "scripted")
            yield providers.stream_chunk(f"{ANSWER} via {api_base or 'default'}")
            yield providers.stream_chunk("", finished=True)

    gateway.litellm()
    providers.register_provider("scripted", Scripted())


def _setup_logging_grants() -> None:
    """`_setup`, and each deployment a worker's pool grants logged to grants.jsonl: the
    worker's pid, the deployment, when the pool let the call go (`Pool.sent`, read from the
    pool itself: no client latency in it), the pool's interval and the worker's niceness."""
    from fintrade_tui.models import deployments

    _setup()
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


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """A store of the module's own, ingested in a second: AAPL's and MSFT's synthetic prices
    and their signals, no filings (the batches ask about trading signals). Built before Ray
    starts in this process."""
    from fintrade_tui.config import load_config
    from fintrade_tui.ingest.pipeline import run_ingest

    root = tmp_path_factory.mktemp("ray-store")
    cfg = load_config(write_config(root, small_bundle(root, [])))
    run_ingest(cfg)
    return cfg


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
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


@pytest.fixture(scope="module")
def questions(base: Config) -> list:
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


def _cfg(base: Config, tmp: Path, **models: ModelConfig) -> Config:
    models = models or {
        "alpha": ModelConfig(
            model="openai/gpt-4o-mini", tools="router", extra={"mock_response": ANSWER}
        ),
        "beta": ModelConfig(model="scripted/beta", tools="router"),
    }
    cfg = base.model_copy(update={"workspace": tmp / "ws.duckdb", "models": models})
    cfg.runs = cfg.runs.model_copy(update={"backoff": 0.01, "retries": 1})
    return cfg


def _specs(cfg: Config, questions: list, batch: str = "b") -> list[RunSpec]:
    return [
        RunSpec(q, c, m, "L5", 1, batch) for q in questions for m in cfg.models for c in CONDITIONS
    ]


def _ray(cfg: Config, specs: list[RunSpec], setup=_setup, **kw) -> dict:
    from fintrade_tui.runs.ray_engine import run_ray

    with open_workspace(cfg.workspace) as ws:
        return run_ray(Runner(cfg, RunStore(ws)), specs, setup=setup, **kw)


def _rows(ws_path: Path, batch: str = "b") -> list[dict]:
    with duckdb.connect(str(ws_path), read_only=True) as con:
        cur = con.execute("SELECT * FROM runs WHERE batch = ? ORDER BY batch_key", [batch])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _calls(folder: Path, name: str = "calls.jsonl") -> list[dict]:
    path = folder / name
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def thirty(
    base: Config, cluster: Path, questions: list, tmp_path_factory: pytest.TempPathFactory
) -> dict:
    """30 runs sent to Ray over one workspace, 7 of them with scripted faults: what the pass
    returned and left (rows, the provider's calls). The passes after it (`resent`, `third`)
    go on from its workspace, each its own test, so Ray starts its workers for them once."""
    cfg = _cfg(base, tmp_path_factory.mktemp("thirty"))
    specs = _specs(cfg, questions)
    # 7 of beta's runs fail: their prompts, hashed as the provider sees them
    runner = Runner(cfg, None)  # prepare() reads only the store
    beta = [s for s in specs if s.model == "beta"]
    chosen = beta[:5] + beta[7:9]
    faulty = {_hash(runner.prepare(s).messages) for s in chosen}
    (cluster / "faults").write_text("\n".join(faulty))
    (cluster / "calls.jsonl").unlink(missing_ok=True)
    out: dict = {"cfg": cfg, "specs": specs, "chosen": chosen, "faulty": faulty}
    out["first"], out["first_rows"] = _ray(cfg, specs), _rows(cfg.workspace)
    out["first_calls"] = _calls(cluster)
    (cluster / "faults").unlink()
    (cluster / "calls.jsonl").unlink()
    return out


@pytest.fixture(scope="module")
def resent(thirty: dict, cluster: Path) -> dict:
    """The same thirty sent again, the faults gone. The seven go in one shard: one worker
    (Ray starts it, litellm and all) is enough to show which runs are sent again, and the
    first pass ran on two."""
    cfg, specs = thirty["cfg"], thirty["specs"]
    out = {"summary": _ray(cfg, specs, shards=1), "rows": _rows(cfg.workspace)}
    return out | {"calls": _calls(cluster)}


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
    third = _ray(cfg, specs)  # everything landed: nothing to send
    assert third["pending"] == 0 and third["skipped_completed"] == 30
    assert len(_rows(cfg.workspace)) == 30


def test_ray_records_equal_the_local_engines(
    base: Config, cluster: Path, thirty: dict, resent: dict, tmp_path: Path
) -> None:
    """The thirty runs' records as Ray left them (seven from the resend) and as the local
    engine writes them."""
    from fintrade_tui.runs.batch import run_batch

    cfg_local = _cfg(base, tmp_path)
    _setup()  # the scripted provider in this process too, for the local engine
    specs = thirty["specs"]
    with open_workspace(cfg_local.workspace) as ws:
        summary = asyncio.run(run_batch(Runner(cfg_local, RunStore(ws)), specs, 4, 2))
    assert summary.status["completed"] == len(specs)
    fields = ["batch_key", "question_id", "condition", "model", "model_string", "params"]
    fields += ["level", "as_of", "prompt", "prompt_hash", "evidence_ids", "evidence"]
    fields += ["tool_calls", "status", "answer", "question_kind", "origin"]
    ray_rows = [{k: r[k] for k in fields} for r in resent["rows"]]
    local_rows = [{k: r[k] for k in fields} for r in _rows(cfg_local.workspace)]
    assert len(ray_rows) == len(specs) == 30
    assert ray_rows == local_rows
    assert all(r["evidence_ids"] for r in ray_rows if r["condition"] == "oracle")


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
    cfg = _cfg(base, tmp_path, paced=ModelConfig(model="scripted/paced", deployments=deps))
    specs = [RunSpec(q, c, "paced", "L5", 1, "b") for q in questions[:3] for c in PACED]
    for log in ("calls.jsonl", "grants.jsonl"):
        (cluster / log).unlink(missing_ok=True)
    out = _ray(cfg, specs, setup=_setup_logging_grants)  # two shards: one for each worker
    assert out["status_completed"] == 12 and out["workers"] == 2
    grants = _calls(cluster, "grants.jsonl")
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
    seen = Counter(c["base"] for c in _calls(cluster))
    assert seen == Counter(f"http://{g['deployment']}.invalid" for g in grants)
    rows = _rows(cfg.workspace)
    assert len(rows) == 12
    for r in rows:  # the recorded deployment is the endpoint the provider saw
        assert r["deployment"] in ("d1", "d2")
        assert r["answer"].endswith(f"via http://{r['deployment']}.invalid")
    # and the one the pool granted, in the worker that ran it
    assert Counter((r["pid"], r["deployment"]) for r in rows) == Counter(
        (g["pid"], g["deployment"]) for g in grants
    )
