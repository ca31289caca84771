"""Against a real OpenAI-compatible server: llama-cpp-python's own (`python -m llama_cpp.server`,
tests/llama_server.py) serving SmolLM2-135M on loopback, configured the way users point at vLLM,
Ollama or their own llama.cpp: an `openai/...` model with `api_base`. `ask` streams an answer
and records its first-token time, the LLM judge's verdict is held to its JSON schema by the
server, Tool-Use's native tool calls are executed, `run` lands a batch of twenty, and the
Arena streams from it. SmolLM2 answers poorly: these check the path, not the answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config, load_config
from fintrade_tui.models.weights import get, locate
from fintrade_tui.questions.samples import aapl_fy2024
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import save_questions
from tests.conftest import needs_bundle, write_config
from tests.llama_server import ALIAS, llama_server

pytestmark = needs_bundle
QUESTIONS = [f"S-{i}" for i in range(1, 21)]  # no_rag: the batch of twenty
HUNG = 900  # seconds: a model call that takes longer has hung


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    gguf = locate(get("smollm2"), Path("data/models"))  # the packaged weights
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server(gguf, log) as base:
        yield base


@pytest.fixture(scope="module")
def served(built_store: Config, server: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace of twenty copies of the AAPL FY2024 question and a registry whose `srv` is
    the server (a key the server ignores, read from its variable as for any hosted model)."""
    tmp = tmp_path_factory.mktemp("served")
    # a hung call's limit, not the default 120 s: on a loaded machine a four-round tool call
    # once took 120 s, and these tests check the path, not the server's speed
    extra = (
        f"workspace: {tmp / 'ws.duckdb'}\n"
        "models:\n  srv:\n"
        f"    model: openai/{ALIAS}\n    api_base: {server}\n    api_key_env: SRV_KEY\n"
        f"    temperature: 0\n    max_tokens: 24\n    tools: native\n    timeout: {HUNG}\n"
        "  srv-judge:\n"
        f"    model: openai/{ALIAS}\n    api_base: {server}\n    api_key_env: SRV_KEY\n"
        "    temperature: 0\n    max_tokens: 400\n    structured: json_object\n"
        f"    timeout: {HUNG}\n"
        # TELeR L1, the shortest prompts: a 135M model on one thread reads ~100 tokens a second
        "runs:\n  default_model: srv\n  level: L1\n  concurrency: 4\n  per_model: 2\n"
        "judging:\n  model: srv-judge\n"
    )
    config = write_config(tmp / "cfg", built_store.bundle, built_store.store, extra)
    with open_workspace(load_config(config).workspace) as ws:
        save_questions(ws, [aapl_fy2024(built_store.store, q) for q in QUESTIONS])
    return config


@pytest.fixture
def cfg(served: Path) -> Config:
    return load_config(served)


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SRV_KEY", "sk-local-unused")


def _cli(config: Path, *args: str) -> str:
    res = CliRunner().invoke(main, ["--config", str(config), *args])
    assert res.exit_code == 0, f"{res.output[-2000:]}{res.exception!r}"
    return res.stdout


def _runs(cfg: Config, where: str = "true") -> list[dict]:
    with duckdb.connect(str(cfg.workspace), read_only=True) as con:
        cur = con.execute(f"SELECT * FROM runs WHERE {where} ORDER BY started_at")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def test_ask_streams_an_answer_and_records_its_first_token(served: Path) -> None:
    [run] = json.loads(_cli(served, "ask", "S-1", "-c", "no_rag", "--json"))
    assert run["status"] == "completed" and run["answer"].strip()
    assert run["model_string"] == f"openai/{ALIAS}"
    assert 0 < run["ttft"] <= run["duration"]
    assert run["tokens_out"] > 0 and run["retries"] == 0


def test_the_judges_verdict_is_json_held_to_its_schema_by_the_server(cfg: Config) -> None:
    """`structured: json_object` sends llama-cpp-python's form of a schema (its server ignores
    OpenAI's `json_schema` one): the 135M model's verdict parses and scores within 1-5."""
    from fintrade_tui.judging.judge import JudgeInput, judge_run
    from fintrade_tui.workspace.questions import Question
    from fintrade_tui.workspace.scores import DIMENSIONS

    q = Question(id="q", source="t", category="F", text="What was Apple's ROE in FY2024?")
    q.reference_answer = "Apple's ROE was 1.57 (157%)."
    run = {"id": "r", "answer": "Apple's ROE was 1.57 in FY2024, a very high return."}
    score = asyncio.run(judge_run(cfg, JudgeInput(run, q)))
    assert score.status == "ok", score.detail.get("error")
    assert all(1 <= getattr(score, d) <= 5 for d in DIMENSIONS)
    verdict = json.loads(score.detail["raw_outputs"][0])
    assert set(DIMENSIONS) <= set(verdict)


def test_tool_use_runs_the_native_tool_calls_the_server_returns(served: Path, cfg: Config) -> None:
    """`tools: native`: the server's tool calls (it reads `tools` only beside an explicit
    `tool_choice`) are run against the store and recorded with their results; the rounds
    send the assistant's call back with its content, which the server's template reads."""
    _cli(served, "ask", "S-2", "-c", "tool_use", "--json")
    [run] = _runs(cfg, "question_id = 'S-2' AND condition = 'tool_use'")
    assert run["status"] == "completed", run["error"]
    calls = json.loads(run["tool_calls"])
    assert calls and all(c["name"] and "result" in c for c in calls)
    assert [c["n"] for c in calls] == list(range(1, len(calls) + 1))


def test_run_lands_a_batch_of_twenty(served: Path, cfg: Config) -> None:
    """Four at a time, two per model: the server takes them one after another (the same
    prompt twenty times, read once: llama.cpp keeps the prefix it last read)."""
    out = _cli(served, "run", "--questions", "S-*", "--conditions", "no_rag", "--batch", "b20")
    out += _cli(
        served, "run", "--questions", "S-*", "--conditions", "no_rag", "--batch", "b20", "--json"
    )
    summary = json.loads(out.strip().splitlines()[-1])  # the second: everything already landed
    assert summary["planned"] == 20 and summary["skipped_completed"] == 20
    runs = _runs(cfg, "batch = 'b20'")
    assert len(runs) == 20 and {r["question_id"] for r in runs} == set(QUESTIONS)
    assert all(r["status"] == "completed" and r["answer"] and r["ttft"] > 0 for r in runs)


async def test_the_arena_streams_from_the_server(cfg: Config) -> None:
    from fintrade_tui.workspace.run_records import RunStore
    from tests.ui.arena_app import ArenaApp
    from tests.ui.conftest import settle

    cfg.runs = cfg.runs.model_copy(update={"conditions": ["no_rag", "oracle"]})
    app = ArenaApp(cfg, "srv", question_id="S-3")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot, timeout=600)
        runs = RunStore(app.workspace_connection())
        for pane in app.screen.panes():
            assert pane.status == "completed", pane.error
            row = runs.get(pane.run_id)
            assert row["answer"] and pane.markdown.source == row["answer"]
            assert row["model_string"] == f"openai/{ALIAS}"
