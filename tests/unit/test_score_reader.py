"""Which score counts for a run (workspace/score_reader.py): the one rule by hand — a settled
dimension is the adjudicator's score, any other the annotators' mean — and, on the
hand-populated workspace (populate() of test_failures_export.py) with one run scored by two
annotators (accuracy 5 and 1) and settled by an adjudicator (4), the same human accuracy in
`report --json`, the table the Results screen builds, the lane tables, human–judge agreement,
`export html --view` and the runs export. The Results screen itself: tests/ui/
test_results_settled.py."""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config
from fintrade_tui.judging.session import agreement_pairs
from fintrade_tui.reports.accuracy import report_table, score_rows
from fintrade_tui.stats.annotators import adjudicate
from fintrade_tui.stats.lanes import run_scores, workspace_lanes
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.score_reader import counted_scores, mean_by_run
from fintrade_tui.workspace.scores import Score, ScoreStore
from tests.conftest import write_config
from tests.unit.test_failures_export import populate

SETTLED = 4  # r02's accuracy: ana 5, bo 1 (mean 3), settled at 4
SETTLED_PCT = 100 * SETTLED / 5  # the matrix's cell on the 1-5 scale (a score of 5 is 100 %)
# r02 (alpha, rag, F1) by the rule: accuracy 4, completeness 3, relevance 4, clarity 4
R02_RUN_SCORE = (4 + 3 + 4 + 4) / 4
R01_RUN_SCORE = (4 + 3 + 4 + 4) / 4  # ana's r01, alpha's no_rag run of F1: the lanes' baseline


def _row(run: str, who: str, settled: bool = False, **dims: int) -> dict:
    detail = {"adjudication": {"reason": "r", "scores": {}}} if settled else {}
    return {"run_id": run, "annotator": who, "protocol": None, "detail": detail} | {
        d: dims.get(d) for d in ("accuracy", "completeness", "relevance", "clarity")
    }


def test_a_settled_dimension_replaces_the_annotators_and_the_others_are_their_mean() -> None:
    rows = [
        _row("r1", "ana", accuracy=5, completeness=4, clarity=2),
        _row("r1", "bo", accuracy=1, completeness=2, relevance=3),
        _row("r1", "adjudicated", settled=True, accuracy=4),  # completeness left to the mean
        _row("r2", "ana", accuracy=5),
        _row("r2", "bo", accuracy=2),
    ]
    assert counted_scores(rows) == {
        ("r1", None): {"accuracy": 4.0, "completeness": 3.0, "relevance": 3.0, "clarity": 2.0},
        ("r2", None): {"accuracy": 3.5},
    }
    # mean_by_run reads by the same rule
    assert mean_by_run(rows) == {
        "r1": {"accuracy": 4.0, "completeness": 3.0, "relevance": 3.0, "clarity": 2.0},
        "r2": {"accuracy": 3.5},
    }


def test_the_newest_adjudication_settles_and_an_adjudication_alone_counts() -> None:
    early, late = datetime(2025, 1, 1), datetime(2025, 1, 2)
    rows = [
        _row("r1", "ana", accuracy=5),
        _row("r1", "bo", accuracy=1),
        _row("r1", "adj-a", settled=True, accuracy=2) | {"created_at": late},
        _row("r1", "adj-b", settled=True, accuracy=4) | {"created_at": early},
        _row("r2", "adjudicated", settled=True, relevance=3),
    ]
    assert counted_scores(rows) == {
        ("r1", None): {"accuracy": 2.0},
        ("r2", None): {"relevance": 3.0},
    }


def test_judge_protocols_stay_apart_and_mixing_them_is_refused() -> None:
    rows = [
        _row("r1", "judge", accuracy=2) | {"protocol": "per_condition"},
        _row("r1", "judge", accuracy=5) | {"protocol": "common"},
    ]
    assert counted_scores(rows) == {
        ("r1", "per_condition"): {"accuracy": 2.0},
        ("r1", "common"): {"accuracy": 5.0},
    }
    with pytest.raises(ValueError, match="mixed"):
        mean_by_run(rows)
    assert mean_by_run(rows, "common") == {"r1": {"accuracy": 5.0}}


def settle_r02(ws: duckdb.DuckDBPyConnection) -> None:
    """On populate()'s workspace: `bo` scores r02 (alpha, rag, F1) accuracy 1 where `ana` gave
    5, the other dimensions as ana's; an adjudicator settles its accuracy at 4."""
    ScoreStore(ws).save(
        Score("r02", "human", "bo", accuracy=1, completeness=3, relevance=4, clarity=4)
    )
    adjudicate(ws, "r02", {"accuracy": SETTLED}, "the ROE is wrong, the D/E right")


@pytest.fixture
def settled_ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws.duckdb"
    ws = open_workspace(path)
    try:
        populate(ws)
        settle_r02(ws)
    finally:
        ws.close()
    return path


def _cell(flat: list[dict], model: str, condition: str, category: str) -> dict:
    (cell,) = [
        c
        for c in flat
        if (c["model"], c["condition"], c["category"]) == (model, condition, category)
    ]
    return cell


def test_every_reader_in_process_counts_the_settled_score(settled_ws: Path) -> None:
    from fintrade_tui.stats.tables import flatten

    ws = open_workspace(settled_ws)
    try:
        rows = {r["run_id"]: r["score"] for r in score_rows(ws, "human")}
        assert rows["r02"] == SETTLED and rows["r01"] == 4
        # what the Results screen builds: score_rows, then report_table (screens/results/reads.py)
        table = report_table(score_rows(ws, "human"), "human", "no_rag", 200)
        assert table is not None
        assert _cell(flatten(table), "alpha", "rag", "F")["accuracy"] == SETTLED_PCT
        # the lane tables: each run's mean over the dimensions, accuracy the settled one
        by_run = {r["run_id"]: r["score"] for r in run_scores(ws, "human")}
        assert by_run["r02"] == R02_RUN_SCORE
        (lanes,) = workspace_lanes(ws, "human", n_resamples=200)
        (row,) = [
            r
            for r in lanes["rows"]
            if (r["model"], r["condition"], r["lane"]) == ("alpha", "rag", "F")
        ]
        assert row["n_paired"] == 1 and row["delta"] == R02_RUN_SCORE - R01_RUN_SCORE
        # human–judge agreement pairs the settled accuracy with the judge's
        pairs = {(p["run_id"], p["dimension"]): p["human"] for p in agreement_pairs(ws) if p}
        assert pairs[("r02", "accuracy")] == SETTLED
    finally:
        ws.close()


def _cli(config: Path, *args: str) -> str:
    res = CliRunner().invoke(main, ["--config", str(config), *args])
    assert res.exit_code == 0, res.output
    return res.output


def test_report_json_lanes_and_the_runs_export_count_the_settled_score(
    settled_ws: Path, tmp_path: Path
) -> None:
    from tests.conftest import BUNDLE

    config = write_config(
        tmp_path / "cfg", BUNDLE, tmp_path / "store.duckdb", f"workspace: {settled_ws}\n"
    )
    rep = json.loads(_cli(config, "report", "--scores", "human", "--json", "--resamples", "200"))
    assert _cell(rep["accuracy"], "alpha", "rag", "F")["accuracy"] == SETTLED_PCT
    (lanes,) = rep["lanes"]["human"]
    (row,) = [
        r for r in lanes["rows"] if (r["model"], r["condition"], r["lane"]) == ("alpha", "rag", "F")
    ]
    assert row["delta"] == R02_RUN_SCORE - R01_RUN_SCORE
    assert {a["dimension"]: a["n"] for a in rep["agreement"]}["accuracy"] == 4
    out = tmp_path / "runs.csv"
    _cli(config, "runs", "export", str(out), "--json")
    with out.open(encoding="utf-8") as f:
        runs = {r["run_id"]: r for r in csv.DictReader(f)}
    assert float(runs["r02"]["human_accuracy"]) == SETTLED
    assert float(runs["r02"]["human_completeness"]) == 3  # not settled: the annotators' mean
    assert runs["r02"]["human_annotators"] == "adjudicated|ana|bo"


def test_the_view_report_shows_the_settled_accuracy(
    built_store: Config, settled_ws: Path, tmp_path: Path
) -> None:
    config = write_config(
        tmp_path / "cfg", built_store.bundle, built_store.store, f"workspace: {settled_ws}\n"
    )
    out = tmp_path / "view.html"
    _cli(config, "export", "html", "--view", "--scores", "human", "--resamples", "200",
         "-o", str(out))  # fmt: skip
    page = out.read_text(encoding="utf-8")
    cells = dict(
        re.findall(
            r'data-model="alpha" data-condition="rag" data-category="([^"]*)"\s+'
            r'data-n="\d+" data-accuracy="([^"]*)"',
            page,
        )
    )
    assert float(cells["F"]) == SETTLED_PCT
    rep = json.loads(_cli(config, "report", "--scores", "human", "--json", "--resamples", "200"))
    assert float(cells["F"]) == _cell(rep["accuracy"], "alpha", "rag", "F")["accuracy"]
