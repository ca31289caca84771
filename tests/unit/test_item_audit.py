"""Item audit (Core403 -> Core400): the CLI round trip (audit, re-audit, report, failing list,
Core export), validation, the latest-audit rule across annotators, and the pass-rate table on
fixed data with hand-counted expectations."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.errors import UserError
from fintrade_tui.questions.item_audit import failing, pass_rates
from fintrade_tui.workspace.audits import CRITERIA, ItemAuditStore
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import Question, save_questions

PASS_ALL = {
    "clarity": "pass",
    "reference": "correct",
    "evidence": "full",
    "indicators": "adequate",
    "alignment": "pass",
}


def _args(**values: str) -> list[str]:
    return [a for c, v in values.items() for a in (f"--{c}", v)]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws.duckdb"
    with open_workspace(path) as con:
        save_questions(
            con,
            [
                Question("Q1", "jsonl", "F", "Apple's ROE in FY2024?", "ROE about 1.6", ["AAPL"]),
                Question("Q2", "jsonl", "T", "Is MSFT above its 50-day SMA?", "Yes", ["MSFT"]),
                Question("Q3", "jsonl", "FT", "Not audited", None),
            ],
        )
    return path


@pytest.fixture
def cli(ws: Path, tmp_path: Path):
    config = tmp_path / "config.yaml"
    config.write_text(f"bundle: {tmp_path}\nstore: {tmp_path / 'st.duckdb'}\nworkspace: {ws}\n")

    def run(*args: str, code: int = 0) -> str:
        res = CliRunner().invoke(main, ["--config", str(config), *args])
        assert res.exit_code == code, res.output
        return res.output

    return run


def _versions(ws: Path) -> list[tuple[str, str, int]]:
    with duckdb.connect(str(ws), read_only=True) as con:
        return con.execute(
            "SELECT question_id, annotator, version FROM item_audits ORDER BY ALL"
        ).fetchall()


def test_cli_round_trip(cli, ws: Path, tmp_path: Path) -> None:
    one = json.loads(cli("questions", "audit", "Q1", *_args(**PASS_ALL), "--json"))
    assert one["core"] is True and one["version"] == 1 and one["failed"] == {}
    bad = PASS_ALL | {"clarity": "major", "evidence": "missing", "indicators": "na"}
    out = cli("questions", "audit", "Q2", *_args(**bad), "--note", "no source")
    assert "fails" in out and "clarity=major" in out and "evidence=missing" in out
    # re-audit Q2 on one criterion: a new version, the other four and the note kept
    two = json.loads(cli("questions", "audit", "Q2", "--clarity", "minor", "--json"))
    assert two["version"] == 2
    assert {c: two[c] for c in CRITERIA} == bad | {"clarity": "minor"}
    assert two["note"] == "no source" and two["failed"] == {"evidence": "missing"}
    assert _versions(ws) == [("Q1", "analyst", 1), ("Q2", "analyst", 1), ("Q2", "analyst", 2)]

    rep = json.loads(cli("questions", "audit-report", "--json"))
    # by hand, latest audits: Q1 all pass; Q2 clarity minor (passes), evidence missing (fails)
    assert (rep["questions"], rep["audited"], rep["passing"], rep["pct"]) == (3, 2, 1, 50.0)
    crit = rep["criteria"]
    assert {c: (r["audited"], r["passing"], r["pct"]) for c, r in crit.items()} == {
        "clarity": (2, 2, 100.0),
        "reference": (2, 2, 100.0),
        "evidence": (2, 1, 50.0),
        "indicators": (2, 2, 100.0),
        "alignment": (2, 2, 100.0),
    }
    assert crit["clarity"]["counts"] == {"pass": 1, "minor": 1, "major": 0}
    assert crit["evidence"]["counts"] == {"full": 1, "partial": 0, "unsupported": 0, "missing": 1}
    assert crit["indicators"]["counts"]["adequate"] == 1 and crit["indicators"]["counts"]["na"] == 1

    fails = json.loads(cli("questions", "audit-report", "--failing", "--json"))
    assert [(f["question_id"], f["version"], f["failed"]) for f in fails] == [
        ("Q2", 2, {"evidence": "missing"})
    ]
    table = cli("questions", "audit-report")
    assert "all five (Core)" in table and "50.0%" in table

    core, full, plain = tmp_path / "core.jsonl", tmp_path / "all.jsonl", tmp_path / "q.jsonl"
    cli("questions", "audit-export", str(core))
    cli("questions", "audit-export", str(full), "--all")
    cli("questions", "export", str(plain))
    exported = {r["id"]: r for r in map(json.loads, plain.read_text().splitlines())}
    rows = [json.loads(line) for line in core.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["Q1"]
    audit = rows[0].pop("audit")
    assert rows[0] == exported["Q1"]  # the question row exactly as `questions export` writes it
    assert audit["core"] is True and audit["version"] == 1 and audit["clarity"] == "pass"
    everything = [json.loads(line) for line in full.read_text().splitlines()]
    assert [(r["id"], r["audit"]["core"]) for r in everything] == [("Q1", True), ("Q2", False)]
    assert not list(tmp_path.glob("*.tmp"))


def test_cli_bad_input_is_one_line_and_writes_nothing(cli, ws: Path) -> None:
    out = cli("questions", "audit", "Q1", *_args(**PASS_ALL | {"evidence": "most"}), code=2)
    assert "--evidence 'most'" in out and "full, partial, unsupported, missing" in out
    assert "Traceback" not in out
    out = cli("questions", "audit", "Q1", "--clarity", "pass", code=2)
    assert "first audit" in out and "--reference" in out and "--clarity" not in out.split("(")[0]
    out = cli("questions", "audit", "NOPE", *_args(**PASS_ALL), code=2)
    assert "question 'NOPE'" in out and "not found" in out
    with open_workspace(ws) as con:
        assert ItemAuditStore(con).history() == []


def test_latest_is_the_newest_of_any_annotator(ws: Path) -> None:
    with open_workspace(ws) as con:
        store = ItemAuditStore(con)
        t = [datetime(2026, 1, d) for d in (1, 2, 3)]
        store.save("Q1", "ann", created_at=t[0], **PASS_ALL)
        store.save("Q1", "bob", created_at=t[1], **PASS_ALL | {"alignment": "fail"})
        store.save("Q2", "bob", created_at=t[0], **PASS_ALL | {"reference": "unverifiable"})
        store.save("Q2", "ann", created_at=t[2], **PASS_ALL | {"reference": "minor_correction"})
        latest = store.latest()
        assert {q: (a["annotator"], a["alignment"], a["reference"]) for q, a in latest.items()} == {
            "Q1": ("bob", "fail", "correct"),
            "Q2": ("ann", "pass", "minor_correction"),
        }
        assert sorted(store.latest("ann")) == ["Q1", "Q2"]
        assert store.latest("ann")["Q1"]["alignment"] == "pass"
        assert [a["annotator"] for a in store.history("Q1")] == ["ann", "bob"]
        with pytest.raises(UserError, match="--alignment 'maybe'.*pass, unclear, fail"):
            store.save("Q1", "ann", alignment="maybe")
        with pytest.raises(UserError, match="--annotator"):
            store.save("Q1", " ", **PASS_ALL)


def _audit(qid: str, **values: str) -> dict:
    return {"question_id": qid, "annotator": "a", "version": 1, "note": None} | PASS_ALL | values


def test_pass_rate_table_on_fixed_data() -> None:
    audits = {
        a["question_id"]: a
        for a in [
            _audit("A"),  # passes everything
            _audit("B", clarity="minor", evidence="partial", indicators="na"),  # passes (minors)
            _audit("C", reference="major_incorrect", alignment="unclear"),  # fails two
            _audit("D", evidence="unsupported", indicators="missing_critical"),  # fails two
            _audit("E", reference="unverifiable"),  # fails one
        ]
    }
    rep = pass_rates(audits, questions=7)
    assert (rep["questions"], rep["audited"], rep["passing"], rep["pct"]) == (7, 5, 2, 40.0)
    c = rep["criteria"]
    assert c["clarity"]["counts"] == {"pass": 4, "minor": 1, "major": 0}
    assert (c["clarity"]["passing"], c["clarity"]["pct"]) == (5, 100.0)
    assert c["reference"]["counts"] == {
        "correct": 3,
        "minor_correction": 0,
        "major_incorrect": 1,
        "unverifiable": 1,
    }
    assert (c["reference"]["passing"], c["reference"]["pct"]) == (3, 60.0)
    assert (c["evidence"]["passing"], c["evidence"]["pct"]) == (4, 80.0)
    assert c["indicators"]["counts"] == {
        "adequate": 3,
        "minor": 0,
        "missing_critical": 1,
        "incorrect": 0,
        "na": 1,
    }
    assert (c["indicators"]["passing"], c["alignment"]["passing"]) == (4, 4)
    assert c["alignment"]["passing_values"] == ["pass"]
    assert [(f["question_id"], sorted(f["failed"])) for f in failing(audits)] == [
        ("C", ["alignment", "reference"]),
        ("D", ["evidence", "indicators"]),
        ("E", ["reference"]),
    ]
    empty = pass_rates({}, questions=0)
    assert (empty["audited"], empty["pct"], empty["criteria"]["clarity"]["pct"]) == (0, None, None)
