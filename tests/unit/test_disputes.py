"""Disputed references: the append-only store, an errata file's round trip between two
workspaces (mark, correct, re-score against the correction, export, import into a fresh
workspace: the same matrix cells), idempotent imports, bad rows named, and the matrix with the
disputed questions left out. The disputed item is FinQA's published erratum
(czyssrs/FinQA#15): an average of five years of payments divided by four."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.errors import UserError
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.disputes import DisputeStore
from tests.conftest import small_bundle, write_config

QUESTIONS = [
    {"id": "Q1", "text": "What is the average of the lease payments due 2009-2013, in millions?",
     "category": "F", "reference_answer": "5.325"},
    {"id": "Q2", "text": "What was the change in revenue, in millions?", "category": "F",
     "reference_answer": "94"},
]  # fmt: skip
RUNS = [  # m1 averages over five years (4.26), m2 over four as the reference did
    {"question_id": "Q1", "model": "m1", "condition": "closed-book", "answer": "About 4.26."},
    {"question_id": "Q1", "model": "m2", "condition": "closed-book", "answer": "About 5.325."},
    {"question_id": "Q2", "model": "m1", "condition": "closed-book", "answer": "It rose by 94."},
    {"question_id": "Q2", "model": "m2", "condition": "closed-book", "answer": "It rose by 90."},
]
REASON = "the five years' payments (21.3) are divided by 4 instead of 5 (czyssrs/FinQA#15)"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A small store (synthetic prices, no filings) the question import resolves against:
    the bundle and the store."""
    from fintrade_tui.config import load_config
    from fintrade_tui.ingest.pipeline import run_ingest

    root = tmp_path_factory.mktemp("disputes-store")
    cfg = load_config(write_config(root, small_bundle(root, [])))
    run_ingest(cfg)
    return cfg.bundle, cfg.store


def _workspace(root: Path, store: tuple[Path, Path]) -> Path:
    """A config whose workspace holds the two questions and the four imported answers."""
    root.mkdir(parents=True)
    (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    (root / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RUNS))
    extra = f"workspace: {root / 'ws.duckdb'}\n"
    config = write_config(root / "cfg", *store, extra)
    _cli(config, "questions", "import", str(root / "questions.jsonl"))
    _cli(config, "runs", "import", str(root / "runs.jsonl"))
    return config


def _cli(config: Path, *args: str) -> str:
    res = CliRunner().invoke(main, ["--config", str(config), *args])
    assert res.exit_code == 0, f"{args}: {res.output}"
    return res.stdout


def _cells(config: Path, *extra: str) -> dict:
    out = json.loads(_cli(config, "report", "--scores", "match", "--json", *extra))
    cells = {(c["model"], c["condition"], c["category"]): c["accuracy"] for c in out["accuracy"]}
    return {"cells": cells, "disputed": out["disputed"]}


def test_a_dispute_round_trip_gives_the_same_matrix(tmp_path: Path, store) -> None:
    a = _workspace(tmp_path / "a", store)
    _cli(a, "judge", "--rescore")
    before = _cells(a)
    # against the published references: m2 right on Q1 (5.325), m1 right on Q2
    assert {k: v for k, v in before["cells"].items() if k[2] == "F"} == {
        ("m1", "no_rag", "F"): 50.0,
        ("m2", "no_rag", "F"): 50.0,
    }
    row = json.loads(
        _cli(
            a,
            "questions",
            "dispute",
            "Q1",
            "--kind",
            "wrong",
            "--reason",
            REASON,
            "--corrected",
            "4.26",
            "--who",
            "ana",
            "--json",
        )  # fmt: skip
    )
    assert (row["question_id"], row["version"], row["corrected"]) == ("Q1", 1, "4.26")
    out = json.loads(_cli(a, "judge", "--rescore", "--corrected", "--json"))
    assert out["against_corrected"] == 2  # Q1's two answers
    q1 = {r["model"]: r for r in out["results"] if r["question_id"] == "Q1"}
    assert (q1["m1"]["label"], q1["m2"]["label"]) == ("correct", "incorrect")
    with open_workspace(tmp_path / "a" / "ws.duckdb", read_only=True) as ws:
        details = {
            r[0]: json.loads(r[1])
            for r in ws.execute(
                "SELECT s.run_id, s.detail FROM scores s JOIN runs r ON r.id = s.run_id"
                " WHERE s.kind = 'match' AND r.question_id = 'Q1' AND s.version = 2"
            ).fetchall()
        }
    # both shown: the corrected verdict, and the published one beside it
    published = sorted((d["published"]["label"], d["reference"]) for d in details.values())
    assert published == [("correct", "4.26"), ("incorrect", "4.26")]
    after = _cells(a)
    assert after["cells"][("m1", "no_rag", "F")] == 100.0
    assert after["cells"][("m2", "no_rag", "F")] == 0.0
    assert after["disputed"] == {"questions": 1, "left_out": 0}

    errata = tmp_path / "errata.jsonl"
    _cli(a, "questions", "errata", "export", str(errata))
    (line,) = errata.read_text().splitlines()
    assert json.loads(line) | {"at": None} == {
        "question_id": "Q1", "source": "jsonl", "kind": "wrong", "reason": REASON,
        "corrected": "4.26", "who": "ana", "at": None, "reference": "5.325",
    }  # fmt: skip

    b = _workspace(tmp_path / "b", store)
    imported = json.loads(_cli(b, "questions", "errata", "import", str(errata), "--json"))
    assert (imported["appended"], imported["already"], imported["skipped"]) == (1, 0, [])
    again = json.loads(_cli(b, "questions", "errata", "import", str(errata), "--json"))
    assert (again["appended"], again["already"]) == (0, 1)  # a second import adds nothing
    _cli(b, "judge", "--rescore", "--corrected")
    assert _cells(b) == after
    assert _cells(b, "--without-disputed")["disputed"] == {"questions": 1, "left_out": 1}
    left = _cells(b, "--without-disputed")["cells"]
    assert left[("m1", "no_rag", "F")] == 100.0 and left[("m2", "no_rag", "F")] == 0.0
    with open_workspace(tmp_path / "b" / "ws.duckdb", read_only=True) as ws:
        (d,) = DisputeStore(ws, read_only=True).history()
    assert d["origin"] == "errata:errata.jsonl"


def test_the_newest_dispute_counts_and_a_withdrawal_ends_it(tmp_path: Path, store) -> None:
    config = _workspace(tmp_path / "w", store)
    with open_workspace(tmp_path / "w" / "ws.duckdb") as ws:
        store = DisputeStore(ws)
        store.save("Q2", "ambiguous", "in millions or thousands?", "ana")
        store.save("Q2", "wrong", "the table says 90", "bo", corrected="90")
        assert store.latest()["Q2"]["corrected"] == "90"
        store.save("Q2", "withdrawn", "90 was the prior year", "ana")
        assert store.latest() == {}
        assert [d["version"] for d in store.history("Q2")] == [1, 2, 3]
        with pytest.raises(UserError, match="'Q9': is not in this workspace"):
            store.save("Q9", "wrong", "no such question", "ana")
        with pytest.raises(UserError, match="ambiguous yet corrects it"):
            store.save("Q2", "ambiguous", "unclear", "ana", corrected="1")
        when = datetime(2026, 12, 1, 9, 30)
        first = store.save("Q1", "wrong", REASON, "ana", corrected="4.26", at=when)
        assert store.save("Q1", "wrong", REASON, "ana", corrected="4.26", at=when) == first
    out = _cli(config, "questions", "disputes")
    assert "Q1" in out and "Q2" not in out


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"question_id": "Q1", "kind": "wrong", "reason": "x", "who": "a"}\n', "at ''"),
        ('{"question_id": "Q1", "kind": "odd", "reason": "x", "who": "a", "at": "2026-12-01"}\n',
         "kind 'odd': is unknown"),
        ("not json\n", "is not JSON"),
    ],
)  # fmt: skip
def test_a_bad_errata_row_is_one_line_naming_it(
    tmp_path: Path, store, text: str, said: str
) -> None:
    config = _workspace(tmp_path / "w", store)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    res = CliRunner().invoke(
        main, ["--config", str(config), "questions", "errata", "import", str(bad)]
    )
    assert res.exit_code == 2
    assert f"{bad}:1" in res.output and said in res.output
    assert len(res.output.strip().splitlines()) == 1
