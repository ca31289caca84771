"""`runs import` of the generic run JSONL, end to end through the CLI: the closing summary, the
stored runs / questions / scores and their provenance, idempotence, the nasty-but-valid file,
bad input (one line, exit 2, nothing written), the label accuracy of 2,400 published-style runs
against the share of `correct` labels computed here with pandas, and the export round trip."""

from __future__ import annotations

import json
import shutil
import tracemalloc
import zipfile
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from benchmarks import synthetic_runs
from fintrade_tui.cli import main
from fintrade_tui.config import Config
from fintrade_tui.imports import generic
from fintrade_tui.imports.load import Planner, map_condition
from fintrade_tui.workspace.connection import open_workspace
from tests.conftest import BUNDLE, write_config

DATA = Path(__file__).resolve().parent.parent / "data" / "external" / "generic"
SEEDS = BUNDLE / "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"


def cli(cfg: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["--config", str(cfg), *args])
    return res.exit_code, res.output


def cli_json(cfg: Path, *args: str) -> dict:
    code, out = cli(cfg, *args, "--json")
    assert code == 0, out
    return json.loads(out)


def counts(ws: Path) -> tuple[int, int, int]:
    con = duckdb.connect(str(ws), read_only=True)
    try:
        return tuple(
            con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("questions", "runs", "scores")
        )
    finally:
        con.close()


@pytest.fixture(scope="module")
def seeded(built_store: Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace holding the 150 seed questions (and their reference runs), built once."""
    folder = tmp_path_factory.mktemp("seeded")
    cfg = write_config(folder, BUNDLE, built_store.store, f"workspace: {folder / 'ws.duckdb'}\n")
    rep = cli_json(cfg, "questions", "import", str(SEEDS))
    assert rep["questions"] == 150 and rep["reference_runs"] == 150
    return folder / "ws.duckdb"


@pytest.fixture
def cfg(seeded: Path, built_store: Config, tmp_path: Path) -> Path:
    shutil.copy(seeded, tmp_path / "ws.duckdb")
    return write_config(tmp_path, BUNDLE, built_store.store, f"workspace: {tmp_path}/ws.duckdb\n")


def test_small_file_imports_with_provenance_and_a_second_import_adds_nothing(cfg: Path) -> None:
    ws = cfg.parent / "ws.duckdb"
    before = counts(ws)
    rep = cli_json(cfg, "runs", "import", str(DATA / "runs_small.jsonl"))
    (f,) = rep["files"]
    assert f["format"] == "jsonl" and (f["runs"], f["added"], f["existing"]) == (7, 7, 0)
    assert f["questions_created"] == 1 and f["questions_resolved"] == 1  # BYO-1; F1 is a seed
    assert f["scores_added"] == 7
    assert f["labels"] == {"correct": 4, "incorrect": 2, "refusal": 1}
    assert f["conditions"] == {"long_context": 1, "no_rag": 2, "oracle": 2, "rag": 2}
    assert counts(ws) == (before[0] + 1, before[1] + 7, before[2] + 7)

    runs = cli_json(cfg, "runs", "list", "--question", "BYO-1")
    gpt = next(r for r in runs if r["model"] == "gpt-4o")
    assert gpt["answer"] == "60922" and gpt["condition"] == "rag"  # a number, as text
    assert (gpt["origin"], gpt["source_format"], gpt["source_locator"]) == (
        "external",
        "jsonl",
        "line 5",
    )
    assert gpt["condition_label"] == "retrieval" and gpt["variant"] == "shared-store"
    assert gpt["source_file"] == str((DATA / "runs_small.jsonl").resolve())
    assert len(gpt["content_hash"]) == 64 and gpt["id"] == gpt["content_hash"][:12]
    assert gpt["cost"] == pytest.approx(0.0012) and gpt["as_of"] == "2024-03-01"
    q = cli_json(cfg, "questions", "show", "BYO-1")
    assert q["tickers"] == ["NVDA"] and q["as_of"] == "2024-03-01" and q["source"] == "byo-demo"
    assert q["category"] == "numeric" and q["reference_answer"] == "60,922 million USD"
    oracle = next(r for r in cli_json(cfg, "runs", "list", "-q", "F1") if r["condition"] == "oracle"
                  and r["model"] == "gpt-4o")  # fmt: skip
    shown = cli_json(cfg, "runs", "show", oracle["id"])
    item = shown["evidence"]["items"][0]
    assert item["text"].startswith("ROA 0.31") and item["title"] == "AAPL 10-K 2024, p. 17"

    scores = cli_json(cfg, "scores", "export", str(cfg.parent / "s.jsonl"))
    assert scores["scores"] == before[2] + 7
    rows = [json.loads(x) for x in (cfg.parent / "s.jsonl").read_text().splitlines()]
    byo = next(r for r in rows if r["run_id"] == gpt["id"])
    assert (byo["kind"], byo["annotator"], byo["label"]) == ("human", "paper:human", "correct")
    assert (byo["accuracy"], byo["clarity"], byo["completeness"]) == (5, 4, None)

    again = cli_json(cfg, "runs", "import", str(DATA / "runs_small.jsonl"))["files"][0]
    assert (again["added"], again["existing"], again["scores_added"]) == (0, 7, 0)
    assert counts(ws) == (before[0] + 1, before[1] + 7, before[2] + 7)


def test_nasty_file_imports_numbers_bytes_duplicates_and_unknown_conditions(cfg: Path) -> None:
    f = cli_json(cfg, "runs", "import", str(DATA / "nasty.jsonl"))["files"][0]
    assert (f["runs"], f["added"], f["duplicates"]) == (5, 4, ["line 5 = line 2"])
    assert f["conditions"] == {"my-own-setting": 1, "unspecified": 3}
    assert f["warnings"] == ["line 4: non-UTF-8 bytes replaced with U+FFFD"]
    by_q = {r["question_id"]: r for r in cli_json(cfg, "runs", "list", "--model", "m1")}
    assert by_q["7"]["answer"] == "3" and by_q["N2"]["answer"] == "[1.64, 1.53]"
    assert by_q["N3"]["answer"] == "Tim Cook \ufffd\ufffd"
    assert by_q["N2"]["condition"] == "my-own-setting"
    n4 = cli_json(cfg, "questions", "show", "N4")
    assert (
        n4["text"] == "" and n4["status"] == "unresolved" and "no question text" in n4["reasons"][0]
    )


@pytest.mark.parametrize(
    "name, needles",
    [
        ("bad_malformed.jsonl", ["bad_malformed.jsonl line 2", "not valid JSON"]),
        ("bad_missing_answer.jsonl", ["bad_missing_answer.jsonl line 2", "missing answer"]),
        ("bad_missing_model.jsonl", ["bad_missing_model.jsonl line 1", "missing model"]),
        ("bad_truncated.jsonl", ["bad_truncated.jsonl line 2", "not valid JSON"]),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(cfg: Path, name: str, needles) -> None:
    ws = cfg.parent / "ws.duckdb"
    before = counts(ws)
    # the good file first: one import of several files is one transaction
    code, out = cli(cfg, "runs", "import", str(DATA / "runs_small.jsonl"), str(DATA / name))
    assert code == 2 and "Traceback" not in out and len(out.strip().splitlines()) == 1
    assert all(n in out for n in needles) and "fix:" in out, out
    assert counts(ws) == before


def test_unknown_format_and_a_zip_that_is_not_a_log(cfg: Path, tmp_path: Path) -> None:
    ws = cfg.parent / "ws.duckdb"
    before = counts(ws)
    text = tmp_path / "notes.txt"
    text.write_text("just some notes\n")
    code, out = cli(cfg, "runs", "import", str(text))
    assert code == 2 and "notes.txt: is not a run log" in out and "--format" in out
    other = tmp_path / "archive.eval"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("readme.txt", "not an inspect log")
    code, out = cli(cfg, "runs", "import", str(other))
    assert code == 2 and "archive.eval" in out and len(out.strip().splitlines()) == 1
    assert counts(ws) == before


def test_dry_run_counts_and_writes_nothing(cfg: Path) -> None:
    ws = cfg.parent / "ws.duckdb"
    before = counts(ws)
    rep = cli_json(cfg, "runs", "import", str(DATA / "runs_small.jsonl"), "--dry-run")
    assert rep["dry_run"] and rep["totals"]["added"] == 7 and counts(ws) == before


def test_model_and_condition_flags_set_every_run(cfg: Path) -> None:
    cli_json(cfg, "runs", "import", str(DATA / "runs_small.jsonl"), "-m", "x", "--condition", "RAG")
    runs = [r for r in cli_json(cfg, "runs", "list", "--model", "x") if r["origin"] == "external"]
    assert len(runs) == 7 and {r["condition"] for r in runs} == {"rag"}
    assert {r["extra"]["file_model"] for r in runs} == {"gpt-4o", "llama-3-8b"}


def test_label_accuracy_equals_the_share_of_correct_labels(cfg: Path, tmp_path: Path) -> None:
    path = tmp_path / "published.jsonl"
    assert synthetic_runs.write(path, questions=150) == 2400
    f = cli_json(cfg, "runs", "import", str(path))["files"][0]
    assert f["added"] == 2400 and f["questions_created"] == 150
    rep = cli_json(cfg, "report", "--scores", "labels", "--source", "synthetic-byo",
                   "--resamples", "200")  # fmt: skip
    got = {(c["model"], c["condition"], c["category"]): c for c in rep["accuracy"]}
    df = pd.read_json(path, lines=True)
    df["condition"] = df["condition"].map(map_condition)
    df["right"] = (df["label"] == "correct").astype(float)
    overall = df.groupby(["model", "condition"])["right"].mean() * 100
    assert len(overall) == 16
    for (model, cond), share in overall.items():
        assert got[(model, cond, "overall")]["accuracy"] == pytest.approx(share, abs=1e-9)
        assert got[(model, cond, "overall")]["n"] == 150
    for (model, cond, cat), share in (
        df.groupby(["model", "condition", "category"])["right"].mean() * 100
    ).items():
        assert got[(model, cond, cat)]["accuracy"] == pytest.approx(share, abs=1e-9)
    assert {c["category"] for c in rep["accuracy"]} == {
        "judgement", "numeric", "ratio", "trend", "overall"
    }  # fmt: skip


def test_a_50_mb_file_is_streamed(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    line = {"question_id": "Q", "model": "m", "answer": "x" * 100_000}
    with path.open("w") as fh:
        for i in range(500):
            fh.write(json.dumps(line | {"question_id": f"Q{i}"}) + "\n")
    assert path.stat().st_size > 50_000_000
    tracemalloc.start()
    stream = generic.read(path)
    first = next(stream)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert first.question_id == "Q0" and peak < 2_000_000  # one line, not the file
    assert sum(1 for _ in stream) == 499
    ws = open_workspace(tmp_path / "ws.duckdb")
    try:
        rep = Planner(ws).add_file(path, "jsonl", generic.read(path))
        assert rep.added == 500
    finally:
        ws.close()


def test_judge_audit_and_case_study_treat_imported_runs_like_ours(
    seeded: Path, built_store: Config, tmp_path: Path
) -> None:
    from tests.unit.judge_replies import valid_reply

    shutil.copy(seeded, tmp_path / "ws.duckdb")
    extra = (
        f"workspace: {tmp_path}/ws.duckdb\n"
        "models:\n  judge:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(valid_reply(acc=2))}}}\n"
        "judging:\n  model: judge\n"
    )
    cfg = write_config(tmp_path, BUNDLE, built_store.store, extra)
    cli_json(cfg, "runs", "import", str(DATA / "runs_small.jsonl"))
    judged = cli_json(cfg, "judge")
    ids = {r["id"] for r in cli_json(cfg, "runs", "list", "--origin", "external", "--limit", "999")}
    imported = {
        r["id"] for r in cli_json(cfg, "runs", "list", "--batch", "import:runs_small.jsonl")
    }
    # every imported answer is judged; the seeds' reference answers are not (not asked for)
    assert {j["run"] for j in judged} == imported and len(imported) == 7 and ids > imported
    assert all(j["status"] == "ok" and j["accu"] == 2 for j in judged)
    # F1 (Apple as of Sept 2025): the audit compared the oracle answer's ROA/ROE with the store
    oracle = next(
        r
        for r in cli_json(cfg, "runs", "list", "-q", "F1", "--batch", "import:runs_small.jsonl")
        if r["condition"] == "oracle" and r["model"] == "gpt-4o"
    )
    row = next(j for j in judged if j["run"] == oracle["id"])
    assert row["audit s/c/n"] is not None
    # labels and the judge meet in the agreement table's label row
    agree = cli_json(cfg, "report", "--resamples", "100")["agreement"]
    label = next(a for a in agree if a["dimension"] == "label")
    assert label["n"] == 7  # seven labelled runs, all judged 2
    from fintrade_tui.config import load_config
    from fintrade_tui.exports.case_study import write_case_study

    con = open_workspace(tmp_path / "ws.duckdb")
    try:
        path = write_case_study(load_config(cfg), con, [oracle["id"]], tmp_path / "case.md")
    finally:
        con.close()
    text = path.read_text(encoding="utf-8")
    assert "With ROA 0.31 and ROE 1.52, yes." in text and "paper:human" in text
