"""The streaming core through litellm: mock responses and injected faults (timeout, 429 then
success, 500, a stream cut mid-way, cancel) — each run ends in the right state, the others
complete, and every run is recorded with its prompt and evidence ids."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from fintrade_tui.application.readiness import SEEDS
from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.models import llm, providers
from fintrade_tui.models.resolve import Model, resolve
from fintrade_tui.questions.samples import aapl_fy2024
from fintrade_tui.runs.runner import Runner, RunSpec, drain
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import Question
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle

pytestmark = needs_bundle
ANSWER = "Apple's ROE was high as of the quarter; see the evidence."


class _Faulty:
    """A litellm custom provider whose model name picks the fault: faulty/<kind>."""

    calls: dict[str, int] = {}

    @staticmethod
    def make():
        import litellm
        from litellm import CustomLLM

        class Provider(CustomLLM):
            async def astreaming(self, model: str, messages: list, **_):
                kind = model.split("/", 1)[-1]
                n = _Faulty.calls[kind] = _Faulty.calls.get(kind, 0) + 1
                if kind == "429-then-ok" and n == 1:
                    raise litellm.RateLimitError("slow down", "faulty", model)
                if kind == "500":
                    raise litellm.InternalServerError("boom", "faulty", model)
                for i, word in enumerate(ANSWER.split()):
                    if kind == "cut" and i == 3:
                        raise litellm.APIConnectionError("connection reset", "faulty", model)
                    if kind == "slow" and i == 2:  # stalls until cancelled (timeout, Ctrl-C)
                        await asyncio.Event().wait()
                    yield providers.stream_chunk(word + " ")
                yield providers.stream_chunk("", finished=True)

        return Provider()


@pytest.fixture(scope="module")
def faulty() -> None:
    llm.litellm()
    providers.register_provider("faulty", _Faulty.make())


def _cfg(built_store: Config, tmp: Path) -> Config:
    models = {
        "mock": ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": ANSWER}),
        "slow-timeout": ModelConfig(model="faulty/slow", timeout=1.5),
        **{k: ModelConfig(model=f"faulty/{k}") for k in ("429-then-ok", "500", "cut", "slow")},
    }
    cfg = built_store.model_copy(update={"workspace": tmp / "ws.duckdb", "models": models})
    cfg.runs = cfg.runs.model_copy(update={"backoff": 0.01, "retries": 2})
    return cfg


def _question(built_store: Config) -> Question:
    return aapl_fy2024(built_store.store, "T-AAPL-ROE")


def _run_all(cfg: Config, specs: list[RunSpec], cancel_after: dict[int, int] | None = None):
    """Run specs concurrently; cancel_after {i: n}: cancel spec i after n tokens."""
    with open_workspace(cfg.workspace) as ws:
        store = RunStore(ws)
        runner = Runner(cfg, store)

        async def main() -> list[str]:
            ids = [""] * len(specs)
            tokens = [0] * len(specs)
            tasks: list[asyncio.Task] = []

            def on(i: int):
                def handle(ev) -> None:
                    ids[i] = ev.run_id
                    if ev.kind == "token":
                        tokens[i] += 1
                        if cancel_after and tokens[i] == cancel_after.get(i):
                            tasks[i].cancel()

                return handle

            tasks.extend(
                asyncio.create_task(drain(runner.stream(s), on(i))) for i, s in enumerate(specs)
            )
            await asyncio.gather(*tasks, return_exceptions=True)
            return ids

        ids = asyncio.run(main())
        return [store.get(i) for i in ids]


def test_three_conditions_stream_and_are_recorded(built_store: Config, tmp_path: Path) -> None:
    cfg = _cfg(built_store, tmp_path)
    q = _question(built_store)
    rows = _run_all(cfg, [RunSpec(q, c, "mock") for c in ("no_rag", "indicator_rag", "oracle")])
    for r in rows:
        assert r["status"] == "completed", r["error"]
        assert r["answer"] == ANSWER
        assert r["question_id"] == q.id and r["as_of"] == q.as_of
        assert q.text in r["prompt"]
        assert r["ttft"] is not None and r["duration"] >= r["ttft"]
        assert r["tokens_in"] and r["tokens_out"]
    by = {r["condition"]: r for r in rows}
    assert by["no_rag"]["evidence_ids"] == []
    assert by["oracle"]["evidence_ids"] == ["oracle:AAPL:roe", "oracle:AAPL:roa"]
    assert by["indicator_rag"]["evidence_ids"]
    assert "api_key" not in str(by["oracle"]["params"])


def test_faults_end_in_the_right_state_while_others_complete(
    built_store: Config, tmp_path: Path, faulty: None
) -> None:
    cfg = _cfg(built_store, tmp_path)
    q = _question(built_store)
    names = ["mock", "429-then-ok", "500", "cut", "slow-timeout", "slow", "mock"]
    rows = _run_all(cfg, [RunSpec(q, "no_rag", n) for n in names], cancel_after={5: 2})
    got = {(r["model"], r["status"]) for r in rows}
    assert ("mock", "completed") in got
    ok, e500, cut, timeout, cancelled = rows[1:6]
    assert ok["status"] == "completed" and ok["retries"] == 1 and ok["answer"] == ANSWER + " "
    assert e500["status"] == "error" and "InternalServerError" in e500["error"]
    assert e500["retries"] == 2 and e500["answer"] == ""
    assert cut["status"] == "error" and cut["answer"] == "Apple's ROE was "
    assert timeout["status"] == "timeout" and timeout["answer"]  # partial kept
    assert ANSWER.startswith(timeout["answer"].strip())
    assert cancelled["status"] == "cancelled" and cancelled["answer"] == "Apple's ROE "
    assert rows[0]["status"] == rows[6]["status"] == "completed"


def test_unknown_model_and_missing_key_are_one_line_errors(built_store: Config) -> None:
    from fintrade_tui.errors import UserError

    with pytest.raises(UserError, match="not in the registry"):
        resolve(built_store, "nope")
    spec = ModelConfig(model="openai/gpt-4o-mini", api_key_env="FINTRADE_TEST_NO_SUCH_KEY")
    with pytest.raises(UserError, match="FINTRADE_TEST_NO_SUCH_KEY"):
        Model("remote", spec).call()


@pytest.mark.long  # kills the real binary mid-batch (tests/conftest.py LONG_FILES)
def test_batch_killed_with_sigkill_resumes_without_loss_or_duplicates(
    built_store: Config, tmp_path: Path
) -> None:
    """`run` killed halfway, then started again: every planned run completes exactly once."""
    import json
    import os
    import signal
    import subprocess
    import sys

    import duckdb
    from click.testing import CliRunner

    from fintrade_tui.cli import main
    from tests.conftest import write_config

    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        "models:\n  mock:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(ANSWER)}, mock_delay: 0.4}}\n"
    )
    config = write_config(tmp_path / "cfg", built_store.bundle, built_store.store, extra)
    args = [sys.executable, "-m", "fintrade_tui", "--config", str(config), "run"]
    args += ["--questions", "F1,F2,F3,F4,F5,F6", "--models", "mock", "--json"]
    args += ["--conditions", "no_rag,oracle", "--concurrency", "2", "--batch", "kill"]
    env = os.environ | {"PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, env=env)
    done_before = 0
    for line in proc.stdout:  # kill once a few runs have finished, others mid-way
        done_before += '"status"' in line
        if done_before == 4:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert done_before == 4

    # the binary is what gets killed; the same command started again resumes from what the
    # workspace holds, so it runs here (a second process would only add its imports)
    again = CliRunner().invoke(main, args[3:])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.stdout.strip().splitlines()[-1])
    assert summary["planned"] == 12
    assert summary["skipped_completed"] >= 4
    assert summary["skipped_completed"] + summary["status_completed"] == 12
    with duckdb.connect(str(tmp_path / "ws.duckdb"), read_only=True) as con:
        per_key = con.execute(
            "SELECT batch_key, count(*) FILTER (status = 'completed'), count(*) FROM runs"
            " WHERE batch = 'kill' GROUP BY batch_key"
        ).fetchall()
    assert len(per_key) == 12
    assert all(done == 1 and total == 1 for _, done, total in per_key), per_key


def test_oracle_prompt_holds_exactly_the_golden_values(built_store: Config, tmp_path: Path) -> None:
    """The stored Oracle prompt shows each golden indicator's value at as_of, and no other."""
    from fintrade_tui.questions.indicators import KIND
    from fintrade_tui.store.db import connect
    from fintrade_tui.store.queries import snapshot

    cfg = _cfg(built_store, tmp_path)
    q = _question(built_store)
    (row,) = _run_all(cfg, [RunSpec(q, "oracle", "mock")])
    with connect(cfg.store) as con:
        snap = snapshot(con, "AAPL", q.as_of)
    for name in ("roe", "roa"):
        assert KIND[name] == "ratio"
        assert f"{snap['fundamentals'][name]['value']:.6g}" in row["prompt"]
    others = [n for n, f in snap["fundamentals"].items() if f and n not in ("roe", "roa")]
    assert others
    for name in others:
        assert f"{snap['fundamentals'][name]['value']:.6g}" not in row["prompt"], name


def test_tool_use_calls_are_recorded_with_arguments_and_results(
    built_store: Config, tmp_path: Path
) -> None:
    """Router (no native tool calling) and native function calling (litellm mock tool calls)."""
    cfg = _cfg(built_store, tmp_path)
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_fundamental", "arguments": '{"ticker": "AAPL", "name": "roe"}'},
    }
    cfg.models["router"] = ModelConfig(
        model="openai/gpt-4o-mini", tools="router", extra={"mock_response": ANSWER}
    )
    cfg.models["native"] = ModelConfig(
        model="openai/gpt-4o-mini",
        tools="native",
        extra={"mock_response": ANSWER, "mock_tool_calls": [call]},
    )
    q = _question(built_store)
    routed, native = _run_all(cfg, [RunSpec(q, "tool_use", m) for m in ("router", "native")])
    for r in (routed, native):
        assert r["status"] == "completed", r["error"]
        assert r["tool_calls"], r["condition"]
        for c in r["tool_calls"]:
            assert c["arguments"] and c["result"]
            assert "error" not in c["result"], c
    names = {(c["name"], c["arguments"].get("name")) for c in routed["tool_calls"]}
    assert {("get_fundamental", "roe"), ("get_fundamental", "roa")} <= names
    first = native["tool_calls"][0]
    assert first["name"] == "get_fundamental" and first["arguments"]["ticker"] == "AAPL"
    assert first["result"]["value"] == pytest.approx(q.oracle["AAPL"]["roe"]["value"], rel=1e-9)
    assert "tool:1:get_fundamental" in [i["id"] for i in native["evidence"]["items"]]


def small_rag_config(built_store: Config, tmp_path: Path, answer: str) -> Path:
    """A config over the shared store with a fresh workspace and index, and a `mock` model
    answering `answer`. The index is built as always, from fewer and shorter texts: big
    chunks, recent market chunks only, and 16 word pieces of each embedded (the fewest
    allowed; its users assert that RAG found evidence, not how well it ranks)."""
    import json

    from tests.conftest import write_config

    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        f"retrieval: {{index: {tmp_path / 'lancedb'}, child_tokens: 1000, "
        "market_since: 2025-06-01, embed_tokens: 16}\n"
        "models:\n  mock:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(answer)}}}\n"
    )
    return write_config(tmp_path / "cfg", built_store.bundle, built_store.store, extra)


@pytest.mark.long  # builds an index: the embedder over AAPL's filings
def test_ask_on_a_fresh_workspace_builds_what_it_needs(built_store: Config, tmp_path: Path):
    """`ask` with no questions imported and no index: it imports the seeds, indexes the
    question's tickers, streams every condition and stores one run each."""
    import json

    from click.testing import CliRunner

    from fintrade_tui.cli import main

    config = small_rag_config(built_store, tmp_path, ANSWER)
    res = CliRunner().invoke(
        main, ["--config", str(config), "ask", "F1", "-c", "no_rag,rag,oracle", "-m", "mock"]
    )
    assert res.exit_code == 0, res.output
    for label in ("[No-RAG] " + ANSWER, "[RAG] " + ANSWER, "[Oracle] " + ANSWER):
        assert label in res.output
    res = CliRunner().invoke(
        main, ["--config", str(config), "runs", "list", "--json", "--limit", "999"]
    )
    runs = {r["condition"]: r for r in json.loads(res.output) if r["origin"] == "local"}
    assert set(runs) == {"no_rag", "rag", "oracle"}
    # the seeds came with their reference answers, stored as runs of model `reference`
    reference = [r for r in json.loads(res.output) if r["origin"] == "external"]
    seeds = pd.read_csv(built_store.bundle / SEEDS)
    with_answer = seeds["response"].fillna("").str.strip().astype(bool).sum()
    assert [(r["model"], r["condition"]) for r in reference] == [("reference", "reference")] * int(
        with_answer
    )
    f1 = next(r for r in reference if r["question_id"] == "F1")
    assert f1["answer"] == seeds.set_index("question_id").loc["F1", "response"].strip()
    assert all(r["status"] == "completed" and r["question_id"] == "F1" for r in runs.values())
    # F1's golden indicators (ROA, ROE, Earnings/Price) are fundamentals: the prompts' kind
    assert {r["question_kind"] for r in runs.values()} == {"fundamentals"}
    assert runs["rag"]["evidence_ids"] and runs["no_rag"]["evidence_ids"] == []
    assert runs["oracle"]["evidence_ids"] == [
        "oracle:AAPL:roa",
        "oracle:AAPL:roe",
        "oracle:AAPL:earnings_price",
    ]


def test_no_prompt_holds_a_date_after_as_of(built_store: Config) -> None:
    """Whole prompts (template, evidence, tool results) of seed questions at their as_of, and
    of an AAPL question in the middle of the data, mention no later day."""
    import re

    from fintrade_tui.application.readiness import SEEDS
    from fintrade_tui.questions.importers import read_questions
    from fintrade_tui.questions.resolve import Resolver
    from fintrade_tui.store.db import connect

    cfg = built_store.model_copy()
    cfg.models = {"router": ModelConfig(model="openai/gpt-4o-mini", tools="router")}
    with connect(cfg.store) as con:
        r = Resolver(con, cfg.questions.reference_date)
        seeds = [q for q in read_questions(cfg.bundle / SEEDS, None) if q.id in _SAMPLE]
        questions = [r.evidence(r.resolve(q)) for q in seeds] + [_question(built_store)]
    runner = Runner(cfg, RunStore.__new__(RunStore))  # prepare() needs no records
    for q in questions:
        assert q.as_of, q.id
        for condition in ("no_rag", "indicator_rag", "tool_use", "oracle"):
            prep = runner.prepare(RunSpec(q, condition, "router"))
            days = re.findall(r"\b(\d{4}-\d{2}-\d{2})\b", prep.prompt_text)
            if condition != "no_rag":
                assert days, (q.id, condition)  # the evidence is dated: the check has teeth
            late = [d for d in days if date.fromisoformat(d) > q.as_of]
            assert not late, (q.id, condition, late[:3])


_SAMPLE = {"F1", "F7", "T2", "T9", "FT1", "FT5"}


def test_an_echoed_api_key_never_reaches_the_record() -> None:
    exc = RuntimeError("AuthenticationError: Incorrect API key provided: sk-test-1234567890")
    text = llm.error_text(exc, llm.Call({"api_key": "sk-test-1234567890"}))
    assert "sk-test-1234567890" not in text and "***" in text
