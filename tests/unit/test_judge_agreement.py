"""A judge's measured agreement with people: `calibrate-judge` over labelled answers (a scripted
judge that calls every answer right), the figures kept per judge model in the workspace, κ
against sklearn's, and the line `report` and the case study print beside the judge's scores."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score

from fintrade_tui.cli import main
from fintrade_tui.judging.calibration import agreement, kappa, sample
from fintrade_tui.judging.session import llm_judges
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.judge_agreement import AgreementStore, describe
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore
from tests.conftest import BUNDLE, write_config

ALWAYS_RIGHT = {
    "accuracy": {"score": 5, "justification": "matches"},
    "completeness": {"score": 4, "justification": "full"},
    "relevance": {"score": 5, "justification": "on topic"},
    "clarity": {"score": 4, "justification": "clear"},
    "metrics_used": [],
    "fundamental_integration": 1,
    "trading_signal_integration": 1,
    "reasoning_depth": 1,
}
# people: 3 correct, 2 incorrect, 1 refusal (left out of the sample: correct vs incorrect only)
LABELS = ["correct", "incorrect", "correct", "refusal", "incorrect", "correct"]


def _labelled(path: Path) -> Path:
    lines = [
        {"question_id": f"q{i}", "question": f"What was revenue in FY202{i}?", "model": "m",
         "condition": "rag", "answer": f"Revenue was ${i}.0 billion.",
         "reference_answer": f"${i}.0 billion", "label": label}
        for i, label in enumerate(LABELS)
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def config(tmp_path: Path) -> Path:
    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        "models:\n  judge:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(json.dumps(ALWAYS_RIGHT))}}}\n"
        "judging:\n  model: judge\n"
    )
    return write_config(tmp_path / "cfg", BUNDLE, tmp_path / "absent.duckdb", extra)


def test_kappa_is_sklearns() -> None:
    rng = random.Random(7)
    for _ in range(20):
        truth = [rng.random() < 0.6 for _ in range(40)]
        guess = [t if rng.random() < 0.7 else not t for t in truth]
        assert kappa(truth, guess) == pytest.approx(cohen_kappa_score(truth, guess))
    assert kappa([True, True], [True, True]) is None  # one class only: undefined


def test_undecided_answers_count_as_misses_but_not_in_kappa() -> None:
    got = agreement([True, None, False, True], [True, True, False, False])
    assert (got["n"], got["decided"]) == (4, 3)
    assert got["agreement"] == pytest.approx(2 / 4)
    assert got["agreement_decided"] == pytest.approx(2 / 3)
    assert got["kappa"] == pytest.approx(cohen_kappa_score([1, 0, 0], [1, 0, 1]), abs=1e-4)


def test_calibrate_judge_measures_keeps_and_reports(config: Path, tmp_path: Path) -> None:
    labelled = _labelled(tmp_path / "labelled.jsonl")
    run = CliRunner().invoke(
        main, ["--config", str(config), "calibrate-judge", "--labelled", str(labelled), "--json"]
    )
    assert run.exit_code == 0, run.output
    got = json.loads(run.output)
    # 5 answers people called correct or incorrect; the judge calls all right: 3 of 5 agree
    assert (got["n"], got["decided"], got["judge"]) == (5, 5, "judge")
    assert got["agreement"] == pytest.approx(0.6)
    assert got["kappa"] == pytest.approx(cohen_kappa_score([1, 0, 1, 0, 1], [1, 1, 1, 1, 1]))
    assert got["judge_model"] == "openai/gpt-4o-mini" and got["labelled_set"] == "labelled.jsonl"
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        stored = AgreementStore(ws).latest()
        assert stored["judge"]["agreement"] == pytest.approx(0.6)
        # a run this judge scored: `report` names the judge with its measured agreement
        rid = RunStore(ws).start({"question_id": "q1", "condition": "rag", "model": "m"})
        detail = {"judge_model": "openai/gpt-4o-mini"}
        ScoreStore(ws).save(Score(rid, "llm", "judge", accuracy=5, detail=detail))
        (judge,) = llm_judges(ws)
    assert judge["agreement_line"] == "agrees with people 60% (κ 0.00, n 5, labelled.jsonl)"
    assert judge["agreement"]["n"] == 5
    text = CliRunner().invoke(main, ["--config", str(config), "report", "--resamples", "50"])
    assert "this judge agrees with people 60% (κ 0.00, n 5, labelled.jsonl)" in text.output


def test_a_judge_never_measured_says_so(tmp_path: Path) -> None:
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        rid = RunStore(ws).start({"question_id": "q1", "condition": "rag", "model": "m"})
        ScoreStore(ws).save(Score(rid, "llm", "other", accuracy=5, detail={"judge_model": "x/y"}))
        (judge,) = llm_judges(ws)
    assert judge["agreement"] is None
    assert judge["agreement_line"] == describe(None) == "agreement with people unmeasured"


def test_a_bad_labelled_line_is_one_error_naming_it(config: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "q", "question": "Q?", "answer": "a", "label": "maybe"}\n')
    res = CliRunner().invoke(main, ["--config", str(config), "calibrate-judge",
                                    "--labelled", str(bad)])  # fmt: skip
    assert res.exit_code == 2
    assert f"{bad}:1" in res.output and "label 'maybe'" in res.output
    assert "Traceback" not in res.output


def test_the_sample_is_spread_and_leaves_out_refusals(tmp_path: Path) -> None:
    from fintrade_tui.judging.calibration import load

    rows = load(_labelled(tmp_path / "l.jsonl"))
    picked = sample(rows, 3)
    # of q0, q1, q2, q4, q5 (q3 is a refusal): every 5/3-th
    assert [r.id.split("#")[0] for r in picked] == ["q0", "q1", "q4"]
    assert all(r.person != "refusal" for r in sample(rows, 99)) and len(sample(rows, 99)) == 5
