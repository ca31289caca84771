"""Spend seen before it is spent (`run --plan`) and a budget a batch stops at (`--max-cost`, a
model's `max_cost`), against an OpenAI-compatible server on loopback (tests/stub_openai.py)
serving `openai/gpt-4o-mini`, a model name litellm prices, and reporting each answer's usage as
OpenAI counts it (tiktoken's o200k_base, read from the encodings litellm ships). What is
expected comes from litellm's own price map and the server's reported usage, never from the
code under test."""

from __future__ import annotations

import importlib.util
import json
import os
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.cli.runs import BUDGET_STOPPED
from fintrade_tui.config import Config
from fintrade_tui.models.llm import litellm
from tests.conftest import needs_bundle, write_config
from tests.stub_openai import Stub, serving

pytestmark = needs_bundle
KEY = "sk-stub-plan-0123456789"
SENTENCE = "Apple's return on equity stayed high through fiscal 2024, as the filings show. "
# three answers of different lengths, taken in turn (the last one repeats when they run out)
ANSWERS = [SENTENCE * n for n in (3, 6, 9)]


@pytest.fixture(scope="module")
def tokens():
    """OpenAI's count of a text for gpt-4o-mini: tiktoken's o200k_base, from the encoding
    files litellm ships (no download)."""
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.submodule_search_locations
    folder = Path(spec.submodule_search_locations[0]) / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(folder))
    import tiktoken

    enc = tiktoken.get_encoding("o200k_base")
    return lambda text: len(enc.encode(text, disallowed_special=()))


@pytest.fixture(scope="module")
def stub(tokens):
    with serving([{"text": a} for a in ANSWERS * 200], tokens) as s:
        yield s


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_KEY", KEY)


def _config(built_store: Config, folder: Path, stub: Stub, runs: str = "", models: str = ""):
    extra = (
        f"workspace: {folder / 'ws.duckdb'}\n"
        f"runs: {{retries: 0, backoff: 0.01, concurrency: 4, per_model: 4{runs}}}\n"
        "models:\n"
        f"  mini: {{model: openai/gpt-4o-mini, api_base: {stub.base}, api_key_env: STUB_KEY,"
        " max_tokens: 300}\n"
        f"{models}"
    )
    return write_config(folder / "cfg", built_store.bundle, built_store.store, extra)


def _cli(config: Path, *args: str):
    return CliRunner().invoke(main, ["--config", str(config), *args])


def _runs(config: Path, batch: str) -> list[dict]:
    found = _cli(config, "runs", "list", "--batch", batch, "--limit", "1000", "--json")
    assert found.exit_code == 0, found.output
    return json.loads(found.stdout)


def _price() -> tuple[float, float]:
    """gpt-4o-mini's price per prompt and completion token, as litellm's price map holds it."""
    entry = litellm().model_cost["gpt-4o-mini"]
    return entry["input_cost_per_token"], entry["output_cost_per_token"]


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


BATCH = ["--category", "F", "--limit", "20", "-m", "mini", "-c", "no_rag,oracle,long_context"]


def test_the_plan_is_within_15_percent_of_what_the_run_records_and_sends_nothing(
    built_store: Config, tmp_path: Path, stub: Stub, env: None
) -> None:
    config = _config(built_store, tmp_path, stub)
    # answers of this model already in the workspace: what the plan's output tokens rest on
    warm = _cli(config, "run", "--category", "T", "--limit", "5", "-m", "mini", "-c", "no_rag")
    assert warm.exit_code == 0, warm.output

    sent = len(stub.requests)
    shown = _cli(config, "run", *BATCH, "--batch", "b1", "--plan", "--json")
    assert shown.exit_code == 0, shown.output
    plan = json.loads(shown.stdout)
    assert len(stub.requests) == sent and _runs(config, "b1") == []  # nothing sent, nothing kept
    (mini,) = plan["models"]
    assert plan["runs"] == mini["runs"] == 60 and plan["skipped_completed"] == 0
    assert mini["tokenizer"] == "o200k_base" and not mini["tokens_in_estimated"]
    assert (mini["input_cost_per_token"], mini["output_cost_per_token"]) == _price()
    assert mini["price_source"] == "litellm" and mini["seconds"] is not None
    assert "mean of the 5 answers" in mini["tokens_out_basis"]
    assert mini["tokens_out_max"] == 60 * 300 and mini["cost_max"] >= mini["cost"]

    ran = _cli(config, "run", *BATCH, "--batch", "b1", "--json")
    assert ran.exit_code == 0, ran.output
    runs = _runs(config, "b1")
    assert len(runs) == 60 and {r["status"] for r in runs} == {"completed"}
    reported = stub.usages[sent:]  # what the server said each answer used
    assert len(reported) == 60
    recorded = Counter((r["tokens_in"], r["tokens_out"]) for r in runs)
    assert recorded == Counter((u["prompt_tokens"], u["completion_tokens"]) for u in reported)
    per_in, per_out = _price()
    for r in runs:  # the recorded cost: litellm's price x the server's reported usage
        assert r["cost"] == pytest.approx(per_in * r["tokens_in"] + per_out * r["tokens_out"])
    cost = sum(r["cost"] for r in runs)
    assert _last_json(ran.stdout)["cost"] == pytest.approx(cost, abs=1e-6)

    tokens_in = sum(u["prompt_tokens"] for u in reported)
    tokens_out = sum(u["completion_tokens"] for u in reported)
    assert plan["tokens_in"] == pytest.approx(tokens_in, rel=0.15)
    assert plan["tokens_out"] == pytest.approx(tokens_out, rel=0.15)
    assert plan["cost"] == pytest.approx(cost, rel=0.15)

    again = _cli(config, "run", *BATCH, "--batch", "b1", "--plan", "--json")
    assert json.loads(again.stdout)["runs"] == 0  # the resume skip: nothing left to make


def test_max_cost_stops_the_batch_at_its_budget_and_a_larger_one_finishes_it(
    built_store: Config, tmp_path: Path, stub: Stub, env: None
) -> None:
    config = _config(built_store, tmp_path, stub)
    args = ["--category", "F", "--limit", "10", "-m", "mini", "-c", "no_rag,oracle,long_context"]
    warm = _cli(config, "run", "--category", "T", "--limit", "5", "-m", "mini", "-c", "no_rag")
    assert warm.exit_code == 0, warm.output
    planned = json.loads(_cli(config, "run", *args, "--batch", "b2", "--plan", "--json").stdout)
    budget = planned["cost"] / 2

    sent = len(stub.requests)
    half = _cli(config, "run", *args, "--batch", "b2", "--max-cost", str(budget), "--json")
    assert half.exit_code == BUDGET_STOPPED == 4, half.output
    (line,) = half.stderr.splitlines()
    assert line.startswith("budget: batch 'b2' spent $") and "runs not sent" in line
    assert "(fix: run the same command with a larger --max-cost" in line
    summary = _last_json(half.stdout)
    runs = _runs(config, "b2")
    spent = sum(r["cost"] for r in runs)
    assert summary["ran"] == len(runs) == len(stub.requests) - sent > 0
    assert summary["held_by_budget"] == 30 - len(runs) > 0
    assert summary["spent"] == pytest.approx(spent, abs=1e-6)
    # at or under the budget, over it only by what runs in flight cost beyond their estimate
    in_flight = 4 * max(r["cost"] for r in runs)
    assert 0.6 * budget <= spent <= budget + in_flight

    same = _cli(config, "run", *args, "--batch", "b2", "--max-cost", str(budget))
    assert same.exit_code == 4 and len(_runs(config, "b2")) == len(runs)  # nothing more sent

    more = _cli(config, "run", *args, "--batch", "b2", "--max-cost", str(4 * budget), "--json")
    assert more.exit_code == 0, more.output
    done = _runs(config, "b2")
    assert len(done) == 30 and {r["status"] for r in done} == {"completed"}
    assert len({(r["question_id"], r["condition"]) for r in done}) == 30  # none repeated
    assert _last_json(more.stdout)["skipped_completed"] == len(runs)


def test_an_entry_s_own_prices_and_max_cost(
    built_store: Config, tmp_path: Path, stub: Stub, env: None
) -> None:
    own = (
        f"  own: {{model: openai/stub-model, api_base: {stub.base}, api_key_env: STUB_KEY,"
        " input_cost_per_token: 0.0000002, output_cost_per_token: 0.000001, max_cost: 0.004}\n"
        f"  unpriced: {{model: openai/stub-model, api_base: {stub.base}}}\n"
    )
    config = _config(built_store, tmp_path, stub, models=own)
    args = ["--category", "F", "--limit", "10", "-m", "own", "-c", "no_rag,oracle"]
    planned = json.loads(_cli(config, "run", *args, "--batch", "b3", "--plan", "--json").stdout)
    assert planned["models"][0]["price_source"] == "config"
    assert planned["models"][0]["tokens_in_estimated"]  # no tokenizer known for the name
    assert planned["cost_max"] > 0.004  # the cap is below what the batch would cost

    sent = len(stub.requests)
    capped = _cli(config, "run", *args, "--batch", "b3")
    assert capped.exit_code == 4, capped.output
    assert "own reached its max_cost $0.004000" in capped.stderr
    assert "(fix: raise max_cost of the model in config.yaml" in capped.stderr
    runs = _runs(config, "b3")
    reported = stub.usages[sent:]
    assert len(runs) == len(reported) > 0
    for r in runs:  # the entry's own prices x the server's reported usage
        assert r["cost"] == pytest.approx(2e-7 * r["tokens_in"] + 1e-6 * r["tokens_out"])
    assert sum(r["cost"] for r in runs) <= 0.004 + 4 * max(r["cost"] for r in runs)

    bad = _cli(config, "run", "-q", "F1", "-m", "unpriced", "-c", "no_rag", "--max-cost", "1")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --max-cost with model 'unpriced'")
    assert "set input_cost_per_token and output_cost_per_token in models.unpriced" in bad.stderr
    ray = _cli(config, "run", "-q", "F1", "-m", "mini", "--engine", "ray", "--max-cost", "1")
    assert ray.exit_code == 2 and ray.stderr.startswith("error: --engine ray")


def test_a_best_of_run_records_every_call_it_made(
    built_store: Config, tmp_path: Path, stub: Stub, env: None
) -> None:
    config = _config(built_store, tmp_path, stub, runs=", best_of: 2")
    sent = len(stub.requests)
    ran = _cli(config, "run", "-q", "F1", "-m", "mini", "-c", "no_rag", "--batch", "b4")
    assert ran.exit_code == 0, ran.output
    (run,) = _runs(config, "b4")
    reported = stub.usages[sent:]
    assert len(reported) == 3  # two candidates and the choice between them
    assert run["tokens_in"] == sum(u["prompt_tokens"] for u in reported)
    assert run["tokens_out"] == sum(u["completion_tokens"] for u in reported)
    per_in, per_out = _price()
    assert run["cost"] == pytest.approx(per_in * run["tokens_in"] + per_out * run["tokens_out"])


def test_the_budget_gate_counts_what_is_recorded_and_what_is_in_flight() -> None:
    from fintrade_tui.runs.budget import Budget
    from fintrade_tui.runs.runner import RunSpec
    from fintrade_tui.workspace.questions import Question

    q = Question(id="Q1", source="jsonl", category="F", text="?")
    a, b = RunSpec(q, "no_rag", "a"), RunSpec(q, "no_rag", "b")
    # the whole batch may spend 10, model a 4; b spent 1 in an earlier invocation; 3 a run
    gate = Budget(10.0, {"a": 4.0}, {"b": 1.0}, lambda spec: 3.0)
    assert gate.admit(a)  # 1 + 3 <= 10; a: 3 <= 4
    assert not gate.admit(a)  # a: 3 in flight + 3 > 4: a stops, b goes on
    assert gate.admit(b)  # 1 + 3 in flight + 3 = 7 <= 10
    gate.settle(a, 2.5)  # a's recorded cost replaces its estimate
    assert gate.spent_total() == 3.5 and gate.in_flight["a"] == 0
    assert gate.admit(b)  # 3.5 + 3 in flight + 3 = 9.5 <= 10
    assert not gate.admit(b) and gate.stopped_all  # 3.5 + 6 + 3 > 10: the batch stops
    assert not gate.admit(a)
    gate.settle(b, None)  # no usage reported: its estimate counts
    assert gate.spent_total() == 6.5
    d = gate.to_dict()
    assert d["held_by_budget"] == 3 and d["left"] == 3.5 and d["stopped_models"] == ["a"]
    line = gate.line("x")
    assert line.startswith("budget: batch 'x' spent $6.5000 of $10.0000 ($3.5000 left)")
    assert "a reached its max_cost $4.0000" in line and "3 runs not sent" in line
