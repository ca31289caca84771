"""A model name is resolved into its `Model` once per command (models/resolve.py counts every
resolution): `ask` over several conditions, `run` over questions × models × conditions, and
`judge` over many runs each look each model up once, not once per run or per call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.errors import UserError
from fintrade_tui.models import resolve as resolution
from tests.conftest import write_config

ANSWER = "Apple's ROE was about 1.6 and its ROA about 0.27 in fiscal 2024."
DIM = {"score": 4, "justification": "as read"}
JUDGEMENT = json.dumps(
    {
        **dict.fromkeys(("accuracy", "completeness", "relevance", "clarity"), DIM),
        "metrics_used": ["ROE"],
        "fundamental_integration": 4,
        "trading_signal_integration": 1,
        "reasoning_depth": 3,
    }
)


@pytest.fixture
def config(built_store: Config, tmp_path: Path) -> Path:
    entry = "  {}:\n    model: openai/gpt-4o-mini\n    extra: {{mock_response: {}}}\n"
    models = "".join(
        entry.format(name, json.dumps(text))
        for name, text in (("one", ANSWER), ("two", ANSWER), ("judge", JUDGEMENT))
    )
    extra = f"workspace: {tmp_path / 'ws.duckdb'}\njudging: {{model: judge}}\nmodels:\n{models}"
    return write_config(tmp_path / "cfg", built_store.bundle, built_store.store, extra)


def _counted(config: Path, *args: str) -> dict[str, int]:
    """The command's resolutions per model name (the CLI runs in this process)."""
    resolution.RESOLUTIONS.clear()
    res = CliRunner().invoke(main, ["--config", str(config), *args])
    assert res.exit_code == 0, res.output
    return dict(resolution.RESOLUTIONS)


@pytest.mark.long  # a sweep: ask, run, judge and the rest, each on its models
def test_each_command_resolves_each_model_once(config: Path) -> None:
    conditions = "no_rag,oracle,tool_use"
    assert _counted(config, "ask", "F1", "-c", conditions, "-m", "one", "--json") == {"one": 1}
    # 2 models × 2 conditions = 4 runs, all at once: each model makes 2 runs and, under
    # Tool-Use, more calls, so a lookup per run or per call would count 2 or more
    got = _counted(
        config, "run", "--questions", "T1", "--models", "one,two", "-c", "no_rag,tool_use",
        "--concurrency", "4", "--json",
    )  # fmt: skip
    assert got == {"one": 1, "two": 1}
    # the 7 completed runs judged (2 at once): one judge, resolved once
    assert _counted(config, "judge", "--json") == {"judge": 1}
    listed = CliRunner().invoke(main, ["--config", str(config), "runs", "list", "--json"])
    runs = [r for r in json.loads(listed.output) if r["origin"] == "local"]
    assert len(runs) == 7 and {r["status"] for r in runs} == {"completed"}


def test_the_model_says_what_it_is(tmp_path: Path) -> None:
    cfg = Config(
        models={
            "hosted": ModelConfig(model="openai/gpt-4o-mini", tools="native"),
            "here": ModelConfig(model="local/smollm2"),
        },
        workspace=tmp_path / "w.duckdb",
    )
    hosted, here = resolution.resolve(cfg, "hosted"), resolution.resolve(cfg, "here")
    assert (hosted.kind, hosted.local, hosted.tools, hosted.pool) == ("hosted", False, True, None)
    assert (here.kind, here.local_name, here.tools, here.structured) == (
        "local",
        "smollm2",
        False,
        "json_schema",
    )
    assert here.params["gguf_sha256"] and "gguf_sha256" not in hosted.params
    with pytest.raises(UserError, match="not in the registry"):
        resolution.resolve(cfg, "nope")


def test_structured_sends_the_response_format_its_server_reads(tmp_path: Path) -> None:
    """`structured` per model: OpenAI's json_schema shape, llama-cpp-python's json_object one
    with the schema beside it, or none (the prompt asks for JSON); auto follows litellm's
    model map (a self-served name it does not know gets none). Not part of a run's params."""
    from fintrade_tui.judging.asking import response_format

    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    served = "openai/my-served-model"
    cfg = Config(
        models={
            "auto": ModelConfig(model=served),
            "schema": ModelConfig(model=served, structured="json_schema"),
            "object": ModelConfig(model=served, structured="json_object"),
            "prompt": ModelConfig(model="openai/gpt-4o-mini", structured="prompt"),
        },
        workspace=tmp_path / "w.duckdb",
    )
    sent = {n: response_format(resolution.resolve(cfg, n), schema, "v") for n in cfg.models}
    assert sent["auto"] == {} and sent["prompt"] == {}
    assert sent["schema"] == {
        "response_format": {"type": "json_schema", "json_schema": {"name": "v", "schema": schema}}
    }
    assert sent["object"] == {"response_format": {"type": "json_object", "schema": schema}}
    params = {n: resolution.resolve(cfg, n).params for n in ("auto", "object")}
    assert "structured" not in params["object"] and params["auto"] == params["object"]
