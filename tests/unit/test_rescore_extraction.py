"""`judge --rescore --with-extraction`: where the rules defer (no stance, no figure read), a
model copies the answer's conclusion and the rules decide on it; the rules' own verdict stays
beside it. The model is scripted (litellm's mock_response): what it "reads" is fixed, the
verdict on it is the rules'."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import Question, save_questions
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import BUNDLE, write_config

QUESTION = Question("YN1", "byo", "judgement", "Has Pepsico reported any material legal battles?",
                    "No, Pepsico is not involved in material legal battles.")  # fmt: skip
RUNS = {
    # the rules read a stance: decided without the model
    "r1": "PepsiCo has not reported any material legal battles.",
    # the rules read none (a hedge): the model reads "no", the rules call it equal
    "r2": "The 10-K lists routine claims; overall it is unclear whether any is material.",
}
READ = json.dumps({"kind": "yes_no", "final_answer": "no"})


def _config(tmp_path: Path) -> Path:
    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        f"models:\n  reader:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(READ)}}}\n"
    )
    path = write_config(tmp_path / "cfg", BUNDLE, tmp_path / "absent.duckdb", extra)
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        save_questions(ws, [QUESTION])
        runs = RunStore(ws)
        for i, (rid, answer) in enumerate(RUNS.items()):
            runs.start({"id": rid, "question_id": "YN1", "condition": "rag", "model": "m",
                        "started_at": datetime(2025, 1, 2, 10, 0, i)})  # fmt: skip
            runs.finish(rid, status="completed", answer=answer)
    return path


def _rescore(path: Path, *args: str) -> dict:
    res = CliRunner().invoke(main, ["--config", str(path), "judge", "--rescore", *args, "--json"])
    assert res.exit_code == 0, res.output
    return {r["run_id"]: r for r in json.loads(res.output)["results"]}


def test_the_model_reads_only_what_the_rules_defer(tmp_path: Path) -> None:
    path = _config(tmp_path)
    rules = _rescore(path)
    assert (rules["r1"]["verdict"], rules["r1"]["label"]) == ("equal", "correct")
    assert (rules["r2"]["verdict"], rules["r2"]["label"]) == ("deferred", None)
    read = _rescore(path, "--with-extraction", "-m", "reader")
    assert read["r1"]["verdict"] == "equal" and "model read" not in read["r1"]["reason"]
    assert (read["r2"]["verdict"], read["r2"]["label"]) == ("equal", "correct")
    assert "the model read the conclusion as yes_no 'no'" in read["r2"]["reason"]
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        from fintrade_tui.workspace.scores import ScoreStore

        (r2,) = ScoreStore(ws).latest(kind="match", run_ids=["r2"])
    assert r2["detail"]["rules"]["verdict"] == "deferred"
    assert r2["detail"]["extraction"]["final_answer"] == "no"
    assert r2["detail"]["extraction"]["model"] == "openai/gpt-4o-mini"


def test_extraction_reads_as_a_person_reads_only(tmp_path: Path) -> None:
    path = _config(tmp_path)
    res = CliRunner().invoke(main, ["--config", str(path), "judge", "--rescore", "--mode",
                                    "finqa", "--with-extraction", "-m", "reader"])  # fmt: skip
    assert res.exit_code == 2 and "--with-extraction" in res.output
    assert "Traceback" not in res.output
