"""`runs export` / `scores export` / `report --csv|--parquet` on the hand-populated workspace of
test_failures_export: the JSONL imported into an empty workspace gives back the same runs and
the same latest scores; CSV and Parquet open in DuckDB with the documented columns."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from fintrade_tui.exports.runs_table import REPORT_COLUMNS, RUN_COLUMNS, SCORE_COLUMNS
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import ScoreStore
from tests.conftest import BUNDLE, write_config
from tests.unit.test_failures_export import RUNS, populate
from tests.unit.test_import_generic import cli_json

RUN_KEYS = ("id", "question_id", "model", "condition", "status", "answer", "tokens_in")
RUN_KEYS += ("tokens_out", "duration", "prompt", "error", "as_of")
SCORE_KEYS = ("run_id", "kind", "annotator", "accuracy", "completeness", "relevance")
SCORE_KEYS += ("clarity", "label", "note", "status")


@pytest.fixture
def two(built_store, tmp_path: Path) -> tuple[Path, Path]:
    """A populated workspace A and an empty workspace B, each with its own config."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    con = open_workspace(tmp_path / "a" / "ws.duckdb")
    populate(con)
    con.close()
    return tuple(
        write_config(
            tmp_path / n, BUNDLE, built_store.store, f"workspace: {tmp_path / n}/ws.duckdb\n"
        )
        for n in ("a", "b")
    )


def _runs(cfg: Path) -> dict[str, dict]:
    con = open_workspace(cfg.parent / "ws.duckdb", read_only=True)
    try:
        return {r["id"]: {k: r[k] for k in RUN_KEYS} for r in RunStore(con, True).list(limit=999)}
    finally:
        con.close()


def _scores(cfg: Path) -> set[tuple]:
    con = open_workspace(cfg.parent / "ws.duckdb", read_only=True)
    try:
        return {tuple(s[k] for k in SCORE_KEYS) for s in ScoreStore(con, True).latest(status=None)}
    finally:
        con.close()


def test_jsonl_export_reimports_to_the_same_runs_and_scores(two) -> None:
    a, b = two
    path = a.parent / "runs.jsonl"
    assert cli_json(a, "runs", "export", str(path))["runs"] == len(RUNS)
    rep = cli_json(b, "runs", "import", str(path))["files"][0]
    assert rep["format"] == "jsonl" and rep["added"] == len(RUNS)
    assert _runs(b) == _runs(a)
    assert _scores(b) == _scores(a) and len(_scores(a)) > 10
    # the origin of a re-imported run is the export; where it came from is kept
    shown = cli_json(b, "runs", "show", "r02")
    assert shown["origin"] == "external" and shown["extra"]["exported"]["origin"] == "local"
    assert shown["extra"]["exported"]["audit"]["CONTRADICTED"] == 1
    again = cli_json(b, "runs", "import", str(path))["files"][0]
    assert (again["added"], again["scores_added"]) == (0, 0)


def test_csv_and_parquet_exports_open_in_duckdb_with_the_documented_columns(two) -> None:
    a, _ = two
    con = duckdb.connect()
    for fmt in ("csv", "parquet"):
        runs, scores, report = (a.parent / f"{n}.{fmt}" for n in ("runs", "scores", "report"))
        cli_json(a, "runs", "export", str(runs))
        cli_json(a, "scores", "export", str(scores), "--history")
        cli_json(a, "report", "--resamples", "100", f"--{fmt}", str(report))
        for path, cols in ((runs, RUN_COLUMNS), (scores, SCORE_COLUMNS), (report, REPORT_COLUMNS)):
            rel = con.sql(f"SELECT * FROM '{path}'")
            assert rel.columns == cols, (path, rel.columns)
        cols = "run_id, human_accuracy, llm_accuracy, audit_contradicted"
        rows = con.execute(f"SELECT {cols} FROM '{runs}' ORDER BY run_id").fetchall()
        assert [r[0] for r in rows] == sorted(r[0] for r in RUNS)
        r01, r02 = rows[0], rows[1]
        assert (r01[1], r01[2]) == (4, 4)  # the latest LLM version (v2 = 4), the analyst's 4
        assert r02[3] == 1
        (n_scores,) = con.execute(f"SELECT count(*) FROM '{scores}'").fetchone()
        (n_latest,) = con.execute(f"SELECT count(*) FROM '{scores}' WHERE latest").fetchone()
        assert n_scores == n_latest + 1  # r01's first LLM version is history
        models = con.execute(f"SELECT DISTINCT model FROM '{report}' ORDER BY 1").fetchall()
        assert models == [("alpha",), ("beta",)]
