"""Failure causes: evidence recall counted by hand on constructed evidence, each cause rule on
constructed runs with their evidence, and `report --by cause` on a workspace of those runs."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.audits.recall import evidence_recall, run_texts
from fintrade_tui.cli import main
from fintrade_tui.reports.causes import attribute, cause_table, failure_causes
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.disputes import DisputeStore
from fintrade_tui.workspace.questions import RESOLVED, Question, save_questions
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore
from tests.conftest import write_config

ORACLE = {  # AAPL's ROE and ROA at the as-of, as Question.oracle holds them
    "AAPL": {
        "roe": {"value": 1.6059, "kind": "ratio", "source": "filing"},
        "roa": {"value": 0.2568, "kind": "percent", "source": "filing"},
    }
}


def _q(qid: str = "F1") -> Question:
    return Question(
        qid, "fintradebench", "F", "Is Apple's ROE high given its ROA?", tickers=["AAPL"],
        scope="company", as_of=date(2024, 11, 1), golden_raw=["ROE", "ROA"],
        golden=["roe", "roa"], status=RESOLVED, oracle=ORACLE, reference_answer="Yes: ROE 1.61.",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("texts", "found", "missing"),
    [
        # both, as the Oracle writes them
        (["AAPL return on equity = 1.6059 — 10-K FY2024", "AAPL return on assets = 25.68%"], 2, []),
        # the ROE as a percentage in prose; the ROA nowhere
        (["Apple's return on equity reached 160.6% in fiscal 2024."], 1, ["AAPL roa"]),
        # figures of the filing, none of them the ratios
        (["Net sales were $391,035 million and net income $93,736 million."], 0,
         ["AAPL roe", "AAPL roa"]),
        # a near miss beyond the 2% tolerance is not the figure
        (["ROE of 1.70 and ROA of 30%"], 0, ["AAPL roe", "AAPL roa"]),
    ],
)  # fmt: skip
def test_evidence_recall_counted_by_hand(texts: list[str], found: int, missing: list) -> None:
    got = evidence_recall(_q(), texts)
    assert (got["needed"], got["found"], got["missing"]) == (2, found, missing)
    assert got["recall"] == found / 2


def test_recall_of_a_question_needing_nothing_is_none() -> None:
    q = _q()
    q.oracle = {}
    assert evidence_recall(q, ["ROE 1.6059"]) == {
        "needed": 0, "found": 0, "recall": None, "missing": [], "stated": [],
    }  # fmt: skip


def _run(rid: str, cond: str, texts: list[str] = ()) -> dict:
    items = [{"id": f"e{i}", "track": "filing", "text": t} for i, t in enumerate(texts)]
    return {"id": rid, "condition": cond, "evidence": {"items": items}}


def _audit(supported: int = 0, contradicted: int = 0) -> dict:
    claims = [{"verdict": "SUPPORTED"}] * supported + [{"verdict": "CONTRADICTED"}] * contradicted
    return {"claims": claims}


FIGURES = ["AAPL return on equity = 1.6059", "AAPL return on assets = 25.68%"]


def _cause(
    run, verdict="wrong", others=None, audit=None, dispute=None, suspect=None, departs=None
) -> tuple:
    recall = evidence_recall(_q(), run_texts(run)) if run_texts(run) else None
    return attribute(run, verdict, others or {}, recall, audit, dispute, suspect, departs)


def test_each_cause_rule_on_constructed_runs() -> None:
    rag_missing = _run("rag1", "rag", ["Net sales were $391,035 million."])
    rag_full = _run("rag2", "rag", FIGURES)
    oracle_right = (_run("or1", "oracle", FIGURES), "right")
    no_rag_right = (_run("nr1", "no_rag"), "right")
    no_rag_wrong = (_run("nr2", "no_rag"), "wrong")

    assert _cause(rag_full, "refused")[0] == "refused"
    dispute = {"kind": "wrong", "who": "ana", "reason": "ROA is 0.26, not 1.61"}
    cause, rule = _cause(rag_full, dispute=dispute)
    assert cause == "benchmark_suspect" and "disputed as wrong by ana" in rule
    suspect = [{"rule": "average_count", "why": "the average adds 5 figures and divides by 4"}]
    assert _cause(rag_full, suspect=suspect) == (
        "benchmark_suspect",
        "suspect reference (average_count): the average adds 5 figures and divides by 4",
    )
    cause, rule = _cause(rag_full, others={"no_rag": no_rag_right})
    assert (cause, rule) == ("knew_it", "right under No-RAG (run nr1), wrong with this evidence")
    cause, rule = _cause(rag_missing, others={"no_rag": no_rag_wrong, "oracle": oracle_right})
    assert cause == "retrieval_miss"
    assert rule == (
        "right under Oracle (run or1); RAG's evidence states 0 of the 2 figures the question"
        " needs (missing: AAPL roe, AAPL roa)"
    )
    # all figures retrieved, one contradicted: misread, not a retrieval miss
    cause, rule = _cause(rag_full, others={"oracle": oracle_right}, audit=_audit(1, 1))
    assert cause == "misread" and "recall 2/2" in rule and "contradicts 1 figure" in rule
    cause, rule = _cause(oracle_right[0], audit=_audit(0, 2))
    assert cause == "misread" and rule.startswith("the Oracle's evidence")
    # right figures, wrong conclusion
    cause, rule = _cause(rag_full, others={"oracle": (oracle_right[0], "wrong")}, audit=_audit(2))
    assert cause == "reasoning" and "2 supported, none contradicted" in rule
    # a calculation that leaves the reference program's: a reasoning miss, figures or not
    assert _cause(rag_missing, departs=1) == (
        "reasoning", "the answer's calculation leaves the reference program's at step 2",
    )  # fmt: skip
    # nothing to decide with: each missing piece named
    cause, rule = _cause(rag_missing)
    assert cause == "undetermined"
    assert rule == (
        "no Oracle run of this model; no numeric audit of the answer (judge or re-score it)"
    )
    cause, rule = _cause(rag_missing, others={"oracle": oracle_right}, audit=_audit(0, 1))
    # a contradicted figure that the evidence never stated: retrieval fired first
    assert cause == "retrieval_miss"
    cause, rule = _cause(_run("nr3", "no_rag"), audit=_audit(0, 1))
    assert (cause, rule) == (
        "undetermined", "figures contradicted, but the evidence did not state them all",
    )  # fmt: skip


def _workspace(path: Path) -> None:
    """F1 answered by m under No-RAG (wrong), RAG (wrong, no figures retrieved) and Oracle
    (right); F2 by m under RAG (wrong, figures retrieved, one contradicted) and Oracle
    (wrong); F3 refused under No-RAG; F4 disputed and wrong."""
    with open_workspace(path) as ws:
        save_questions(ws, [_q(q) for q in ("F1", "F2", "F3", "F4")])
        runs, scores = RunStore(ws), ScoreStore(ws)
        plan = [
            ("a1", "F1", "no_rag", [], "incorrect", None),
            ("a2", "F1", "rag", ["Net sales were $391,035 million."], "incorrect", None),
            ("a3", "F1", "oracle", FIGURES, "correct", None),
            ("b1", "F2", "rag", FIGURES, "incorrect", _audit(1, 1)),
            ("b2", "F2", "oracle", FIGURES, "incorrect", _audit(0, 2)),
            ("c1", "F3", "no_rag", [], "refusal", None),
            ("d1", "F4", "no_rag", [], "incorrect", None),
        ]
        for i, (rid, qid, cond, texts, label, audit) in enumerate(plan):
            runs.start({"id": rid, "question_id": qid, "condition": cond, "model": "m",
                        "model_string": "script/m", "level": "L5", "as_of": date(2024, 11, 1),
                        "evidence": _run(rid, cond, texts)["evidence"],
                        "started_at": datetime(2025, 1, 2, 10, 0, i)})  # fmt: skip
            runs.finish(rid, status="completed", answer="Apple's ROE is 1.2.")
            scores.save(Score(rid, kind="human", annotator="ana", label=label))
            if audit:
                detail = {"audit": audit}
                scores.save(Score(rid, kind="llm", annotator="judge", accuracy=3, detail=detail))
        DisputeStore(ws).save("F4", "wrong", "the ROE is 1.61, not 1.2", "bo", corrected="1.61")


def test_failure_causes_and_the_cause_table_of_a_workspace(tmp_path: Path) -> None:
    _workspace(tmp_path / "ws.duckdb")
    with open_workspace(tmp_path / "ws.duckdb", read_only=True) as ws:
        rows = failure_causes(ws)
    got = {r["run_id"]: r["cause"] for r in rows}
    assert got == {
        "a1": "undetermined",  # No-RAG wrong: nothing to compare it with, no audit
        "a2": "retrieval_miss",
        "b1": "misread",
        "b2": "misread",
        "c1": "refused",
        "d1": "benchmark_suspect",
    }
    a2 = next(r for r in rows if r["run_id"] == "a2")
    assert a2["recall"]["found"] == 0 and a2["by"] == "label" and a2["verdict"] == "wrong"
    assert cause_table(rows) == [
        {"cause": "refused", "category": "F", "condition": "no_rag", "n": 1},
        {"cause": "benchmark_suspect", "category": "F", "condition": "no_rag", "n": 1},
        {"cause": "retrieval_miss", "category": "F", "condition": "rag", "n": 1},
        {"cause": "misread", "category": "F", "condition": "oracle", "n": 1},
        {"cause": "misread", "category": "F", "condition": "rag", "n": 1},
        {"cause": "undetermined", "category": "F", "condition": "no_rag", "n": 1},
    ]


def test_report_by_cause_json(tmp_path: Path) -> None:
    _workspace(tmp_path / "ws.duckdb")
    extra = f"workspace: {tmp_path / 'ws.duckdb'}\n"
    config = write_config(tmp_path / "cfg", tmp_path / "bundle", tmp_path / "store.duckdb", extra)
    res = CliRunner().invoke(main, ["--config", str(config), "report", "--by", "cause", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["by"] == "cause" and len(out["cases"]) == 6
    assert {r["cause"]: r["n"] for r in out["causes"] if r["condition"] == "rag"} == {
        "retrieval_miss": 1,
        "misread": 1,
    }
    text = CliRunner().invoke(main, ["--config", str(config), "report", "--by", "cause"])
    assert text.exit_code == 0 and "retrieval miss" in text.stdout


def test_where_an_answers_calculation_leaves_the_reference_program() -> None:
    """FinQA-style: the reference divides the change by 2018's revenue; one answer divides by
    2019's (it leaves at step 2), the other follows the program."""
    from types import SimpleNamespace

    from fintrade_tui.reports.causes import _departs

    table = [["", "2019", "2018"], ["revenue", "5829", "5735"]]
    extra = {"program": "subtract(5829, 5735), divide(#0, 5735)", "table_norm": table}
    q = SimpleNamespace(extra=extra | {"passages": []}, text="what was the percentage change?",
                        reference_answer="1.6%", source="finqa")  # fmt: skip
    wrong = "Revenue grew from 5735 to 5829: 5829 - 5735 = 94, and 94 / 5829 = 1.61%."
    assert _departs(q, {"answer": wrong}) == 1
    assert _departs(q, {"answer": "5829 - 5735 = 94; 94 / 5735 = 1.64%."}) is None
    assert _departs(SimpleNamespace(extra={}), {"answer": wrong}) is None
