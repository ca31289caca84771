"""`report --by` (judging/breakdown.py): the matrix of the TAT-QA dev sample split by TAT-QA's
answer type and by its scale. Each question is answered twice — once with its published answer
in TAT-QA's own prediction form (so the matcher, scoring scale separately, calls it correct),
once with a figure no answer holds — and re-scored; every column then holds exactly the
questions the published file gives that answer type (or scale), read here with json.load, each
once per condition, and the numeric answer types' accuracy is 100% and 0%."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import save_questions
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import BUNDLE, write_config

NUMERIC = ("arithmetic", "count")
TATQA = Path(__file__).parents[1] / "data" / "external" / "tatqa" / "dev_sample.json"


def _published() -> list[dict]:
    return [q for ctx in json.loads(TATQA.read_text()) for q in ctx["questions"]]


def _answer(q: dict) -> str:
    """The published answer as a reader would write it, with its scale."""
    gold = q["answer"] if isinstance(q["answer"], list) else [q["answer"]]
    scale = {"percent": "%", "": ""}.get(q["scale"], f" {q['scale']}")
    return "Answer: " + ", ".join(f"{g}{scale}" for g in gold)


def _report(tmp_path: Path, by: str) -> dict:
    cfg = write_config(tmp_path, BUNDLE, tmp_path / "absent.duckdb",
                       f"workspace: {tmp_path / 'ws.duckdb'}\n")  # fmt: skip
    questions = read_questions(TATQA, "tatqa")
    with open_workspace(tmp_path / "ws.duckdb") as ws:
        save_questions(ws, questions)
        runs = RunStore(ws)
        published = {q["uid"]: q for q in _published()}
        for i, q in enumerate(questions):
            pub = published[q.extra["published_id"]]
            for cond, answer in (("oracle", _answer(pub)), ("no_rag", "Answer: 987654321.5")):
                rid = runs.start({"question_id": q.id, "condition": cond, "model": "m",
                                  "started_at": datetime(2025, 1, 2, 10, 0, i % 60)})  # fmt: skip
                runs.finish(rid, status="completed", answer=answer)
    invoke = CliRunner().invoke
    out = invoke(
        main, ["--config", str(cfg), "judge", "--rescore", "--mode", "benchmark", "--json"]
    )
    assert out.exit_code == 0, out.output
    args = ["report", "--scores", "match", "--by", by, "--resamples", "200", "--json"]
    out = invoke(main, ["--config", str(cfg), *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def _cells(report: dict) -> dict[tuple[str, str], dict]:
    return {
        (c["condition"], c["category"]): c
        for c in report["accuracy"]
        if c["category"] not in ("All", "overall")
    }


def test_the_matrix_splits_by_answer_type_and_by_scale(tmp_path: Path) -> None:
    for by in ("answer_type", "scale"):
        want = Counter(q[by] or "none" for q in _published())
        cells = _cells(_report(tmp_path / by, by))
        for cond, share in (("oracle", 100.0), ("no_rag", 0.0)):
            got = {cat: c["n"] for (k, cat), c in cells.items() if k == cond}
            assert got == dict(want), (by, cond)
            if by == "answer_type":  # a figure is matched by value; a span by TAT-QA's EM
                numeric = [c for (k, cat), c in cells.items() if k == cond and cat in NUMERIC]
                assert [c["accuracy"] for c in numeric] == [share] * len(NUMERIC), cond
