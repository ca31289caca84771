"""The LLM judge through litellm (scripted replies): invalid output retried then recorded as a
failure, golden-indicator P/R/F1 computed in code; human scores append-only and durable across
a SIGKILL; `report --markdown` on runs made by `run`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.judging.judge import JudgeInput, golden_prf, judge_run
from fintrade_tui.models import llm, providers
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import RESOLVED, Question
from fintrade_tui.workspace.scores import Score, ScoreStore
from tests.conftest import needs_bundle, write_config
from tests.unit.judge_replies import valid_reply

pytestmark = needs_bundle


MALFORMED = '{"accuracy": {"score": 4, "justification": "ok"'  # cut off
OUT_OF_RANGE = valid_reply(acc=7)
MISSING = json.dumps({"accuracy": {"score": 3, "justification": "x"}})


class Script:
    """A litellm custom provider replying from per-model scripts: script/<name>."""

    replies: dict[str, list[str]] = {}
    calls: dict[str, int] = {}

    @classmethod
    def install(cls) -> None:
        from litellm import CustomLLM, ModelResponse

        class Provider(CustomLLM):
            async def acompletion(self, model: str, messages: list, **_):
                name = model.split("/")[-1]  # litellm passes the name without provider
                n = cls.calls.get(name, 0)
                cls.calls[name] = n + 1
                seq = cls.replies[name]
                text = seq[min(n, len(seq) - 1)]
                return ModelResponse(
                    model=model,
                    choices=[{"index": 0, "message": {"role": "assistant", "content": text}}],
                )

        llm.litellm()
        providers.register_provider("script", Provider())


@pytest.fixture
def judge_cfg(built_store: Config, tmp_path: Path) -> Config:
    Script.install()
    Script.calls.clear()
    Script.replies = {
        "good": [valid_reply()],
        "fixes-itself": [MALFORMED, OUT_OF_RANGE, valid_reply(acc=2)],
        "malformed": [MALFORMED],
        "out-of-range": [OUT_OF_RANGE],
        "missing": [MISSING],
    }
    models = {k: ModelConfig(model=f"script/{k}") for k in Script.replies}
    cfg = built_store.model_copy(update={"workspace": tmp_path / "ws.duckdb", "models": models})
    cfg.judging = cfg.judging.model_copy(update={"retries": 2})
    return cfg


def _input() -> JudgeInput:
    q = Question(
        id="J1",
        source="jsonl",
        category="F",
        text="Is Apple profitable?",
        reference_answer="Yes: ROE about 1.6 and ROA about 0.27 in FY2024.",
        tickers=["AAPL"],
        as_of=date(2024, 11, 1),
        golden=["roe", "roa", "debt_equity"],
        status=RESOLVED,
    )
    return JudgeInput({"id": "r1", "answer": "Apple's ROE is high."}, q)


@pytest.mark.parametrize("judge", ["malformed", "out-of-range", "missing"])
def test_invalid_judge_output_is_retried_then_a_failure(judge_cfg: Config, judge: str) -> None:
    s = asyncio.run(judge_run(judge_cfg, _input(), judge))
    assert s.status == "failure" and s.kind == "llm" and s.annotator == judge
    assert Script.calls[judge] == 3  # the first try and two retries
    assert s.accuracy is None and "invalid judge output" in s.detail["error"]
    assert len(s.detail["raw_outputs"]) == 3 and s.detail["prompt_hash"]


def test_a_judge_that_fixes_itself_is_kept_and_f1_is_computed_in_code(judge_cfg: Config) -> None:
    s = asyncio.run(judge_run(judge_cfg, _input(), "fixes-itself"))
    assert s.status == "ok" and s.accuracy == 2 and s.clarity == 5
    assert s.detail["attempts"] == 3
    prf = s.detail["golden_prf"]
    # used {ROE, ROA, EPS}: EPS is no canonical indicator -> M_gen = {roe, roa}
    assert prf["metrics_canonical"] == ["roa", "roe"] and prf["metrics_unmapped"] == ["EPS"]
    assert prf["precision"] == 1.0 and prf["recall"] == pytest.approx(2 / 3)
    assert prf["f1"] == pytest.approx(0.8)


def test_golden_prf_is_a_real_precision() -> None:
    p = golden_prf(["RSI", "ROE", "MACD", "Momentum"], ["roe", "debt_equity"])
    assert p["precision"] == 0.25 and p["recall"] == 0.5
    assert p["f1"] == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert golden_prf([], ["roe"])["precision"] is None


def test_human_scores_are_append_only_with_history(judge_cfg: Config) -> None:
    from fintrade_tui.workspace.run_records import RunStore

    with open_workspace(judge_cfg.workspace) as ws:
        rid = RunStore(ws).start({"question_id": "J1", "condition": "rag", "model": "m"})
        store = ScoreStore(ws)
        store.save(Score(rid, accuracy=3, completeness=3, relevance=3, clarity=3))
        store.save(Score(rid, accuracy=5, completeness=4, relevance=3, clarity=3, note="fixed"))
        (latest,) = store.latest(kind="human")
        assert latest["accuracy"] == 5 and latest["version"] == 2 and latest["note"] == "fixed"
        assert [h["accuracy"] for h in store.history(rid)] == [3, 5]
        from fintrade_tui.errors import UserError

        with pytest.raises(UserError, match="not a score"):
            store.save(Score(rid, accuracy=6))
        with pytest.raises(UserError, match="not found"):
            store.save(Score("nope", accuracy=3))


def test_a_saved_human_score_survives_sigkill(tmp_path: Path) -> None:
    ws_path = tmp_path / "ws.duckdb"
    script = f"""
import signal
from pathlib import Path
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore
ws = open_workspace(Path({str(ws_path)!r}))
rid = RunStore(ws).start({{"question_id": "Q", "condition": "rag", "model": "m"}})
ScoreStore(ws).save(Score(rid, accuracy=4, completeness=2, relevance=5, clarity=1, note="kill"))
print(rid, flush=True)
signal.pause()  # until the test kills it
"""
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    rid = proc.stdout.readline().strip()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert rid
    with duckdb.connect(str(ws_path)) as con:
        (row,) = ScoreStore(con).latest(kind="human")
    assert row["run_id"] == rid and row["note"] == "kill"
    assert (row["accuracy"], row["completeness"], row["relevance"], row["clarity"]) == (4, 2, 5, 1)


def test_report_markdown_on_runs_from_run(built_store: Config, tmp_path: Path) -> None:
    """`run` (mock answers) -> `judge` (a scripted judge) -> `score` -> `report --markdown`."""
    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        "models:\n  mock:\n    model: openai/gpt-4o-mini\n"
        "    extra: {mock_response: 'Apple ROE was 1.6 [E1].'}\n"
        "  judge:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(valid_reply(acc=4))}}}\n"
        "  pair:\n    model: openai/gpt-4o-mini\n"
        '    extra: {mock_response: \'{"winner": "A", "reason": "first"}\'}\n'
        "judging:\n  model: judge\n"
    )
    config = write_config(tmp_path / "cfg", built_store.bundle, built_store.store, extra)

    def cli(*args: str):
        res = CliRunner().invoke(main, ["--config", str(config), *args])
        assert res.exit_code == 0, res.output
        return res.output

    # one question of each category: every cell of the matrix below has its run (judging
    # costs ~0.3 CPU-s a run, mostly its numeric audit)
    cli("run", "-q", "F1,T1,FT1", "-m", "mock", "-c", "no_rag,oracle", "--json")
    judged = json.loads(cli("judge", "--json"))
    assert len(judged) == 6 and all(j["status"] == "ok" for j in judged)
    runs = json.loads(cli("runs", "list", "--json"))
    cli("score", runs[0]["id"], "--accuracy", "2", "--completeness", "3", "--note", "too vague")
    md = cli("report", "--markdown", "--resamples", "200")
    assert "## Accuracy (llm scores)" in md
    assert "| Condition | F | T | FT | Overall |" in md
    assert "| No-RAG | 80.0 | 80.0 | 80.0 | 80.0 |" in md
    assert "| Oracle | 80.0 (+0.0%) | 80.0 (+0.0%) | 80.0 (+0.0%) | 80.0 (+0.0%) |" in md
    assert "Holm" in md and "## Human-judge agreement" in md
    assert "LLM judge judge = openai/gpt-4o-mini (a hosted model), 6 runs" in md
    rep = json.loads(cli("report", "--json", "--resamples", "200"))
    assert rep["judges"] == [
        {"judge": "judge", "model": "openai/gpt-4o-mini", "runs": 6, "local": False,
         "agreement": None, "agreement_line": "agreement with people unmeasured"}
    ]  # fmt: skip
    agree = rep["agreement"]
    acc = next(a for a in agree if a["dimension"] == "accuracy")
    assert acc["n"] == 1 and acc["bias"] == 2.0  # judge 4 vs human 2
    # a judge that always prefers the first answer: equal points, no order consistency
    # (F1's two runs and its reference answer: 3 pairs, both orders)
    t = json.loads(cli("tournament", "F1", "-m", "pair", "--json"))
    assert t["n_calls"] == 6 and t["consistency"] == 0.0
    assert sorted(t["points"].values()) == [2.0, 2.0, 2.0]
