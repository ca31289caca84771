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


def _answered(
    runs: RunStore,
    i: int,
    rid: str,
    qid: str,
    cond: str,
    texts: list[str],
    model: tuple[str, str],
    answer: str,
) -> None:
    """Run `rid`: `qid` under `cond` with `texts` as its evidence, by `model` (name, model
    string), started the i-th (a second apart) and completed with `answer`."""
    runs.start({"id": rid, "question_id": qid, "condition": cond, "model": model[0],
                "model_string": model[1], "level": "L5", "as_of": date(2024, 11, 1),
                "evidence": _run(rid, cond, texts)["evidence"],
                "started_at": datetime(2025, 1, 2, 10, 0, i)})  # fmt: skip
    runs.finish(rid, status="completed", answer=answer)


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
            _answered(runs, i, rid, qid, cond, texts, ("m", "script/m"), "Apple's ROE is 1.2.")
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

    from fintrade_tui.reports.causes import calculation_departs_at

    table = [["", "2019", "2018"], ["revenue", "5829", "5735"]]
    extra = {"program": "subtract(5829, 5735), divide(#0, 5735)", "table_norm": table}
    q = SimpleNamespace(extra=extra | {"passages": []}, text="what was the percentage change?",
                        reference_answer="1.6%", source="finqa")  # fmt: skip
    wrong = "Revenue grew from 5735 to 5829: 5829 - 5735 = 94, and 94 / 5829 = 1.61%."
    assert calculation_departs_at(q, {"answer": wrong}) == 1
    assert calculation_departs_at(q, {"answer": "5829 - 5735 = 94; 94 / 5735 = 1.64%."}) is None
    assert calculation_departs_at(SimpleNamespace(extra={}), {"answer": wrong}) is None


def _claim(indicator: str, value: float, unit: str, store: float, verdict: str) -> dict:
    return {"text": f"{indicator} {value}{unit}", "span": [0, 1], "value": value, "unit": unit,
            "indicator": indicator, "ticker": "AAPL", "store_value": store, "room": "store",
            "source": "filing", "verdict": verdict, "why": ""}  # fmt: skip


# the No-RAG answer of issue 54 (the Arena on F4, the local model): ROE 25.1 %, Debt/Equity 0.75
# and E/P 2.7 % where the filing has 0.264, 0.085 and 0.020 — the local judge gave it 5 of 5
WRONG_FIGURES = {
    "as_of": "2024-11-01",
    "summary": {"SUPPORTED": 0, "CONTRADICTED": 3, "NOT_FOUND": 0, "checked": 3},
    "claims": [
        _claim("roe", 25.1, "%", 0.264, "CONTRADICTED"),
        _claim("debt_equity", 0.75, "", 0.085, "CONTRADICTED"),
        _claim("earnings_price", 2.7, "%", 0.020, "CONTRADICTED"),
    ],
}
RIGHT_FIGURES = {
    "as_of": "2024-11-01",
    "summary": {"SUPPORTED": 1, "CONTRADICTED": 0, "NOT_FOUND": 0, "checked": 1},
    "claims": [_claim("roe", 160.6, "%", 1.6059, "SUPPORTED")],
}


def _judged_workspace(path: Path) -> None:
    """F4 and F5, each answered by `local` under No-RAG (judge 5) and RAG (judge 2, its figures
    all retrieved and supported): F4's No-RAG answer states three figures the audit
    contradicts, F5's one it supports. Judge scores only: no person, no matcher."""
    with open_workspace(path) as ws:
        save_questions(ws, [_q("F4"), _q("F5")])
        runs, scores = RunStore(ws), ScoreStore(ws)
        plan = [
            ("n4", "F4", "no_rag", [], 5, WRONG_FIGURES),
            ("g4", "F4", "rag", FIGURES, 2, RIGHT_FIGURES),
            ("n5", "F5", "no_rag", [], 5, RIGHT_FIGURES),
            ("g5", "F5", "rag", FIGURES, 2, RIGHT_FIGURES),
        ]
        for i, (rid, qid, cond, texts, acc, audit) in enumerate(plan):
            answer = "ROE 25.1 %, Debt/Equity 0.75, E/P 2.7 %."
            _answered(runs, i, rid, qid, cond, texts, ("local", "local/qwen"), answer)
            detail = {"audit": audit}
            scores.save(Score(rid, kind="llm", annotator="judge", accuracy=acc, completeness=4,
                              relevance=4, clarity=4, detail=detail))  # fmt: skip


def test_an_answer_the_audit_contradicts_is_not_right_whatever_the_judge_gave(
    tmp_path: Path,
) -> None:
    """Issue 54: F4's No-RAG answer, judged 5 with three figures contradicted, is wrong (by the
    audit) for the failure causes, the RAG-worse filter and the case study, which show the
    judge's 5 beside it; the judge–audit disagreement is a filter of its own. F5, the same
    with its figure supported, keeps the judge's verdict: its RAG failure is `knew_it`."""
    from fintrade_tui.config import Config
    from fintrade_tui.exports.case_data import load_case, resolve_runs
    from fintrade_tui.exports.case_study import write_case_study
    from fintrade_tui.exports.html_report import render_case
    from fintrade_tui.reports.failures import failure_cases

    _judged_workspace(tmp_path / "ws.duckdb")
    with open_workspace(tmp_path / "ws.duckdb", read_only=True) as ws:
        rows = {r["run_id"]: r for r in failure_causes(ws)}
        cases = failure_cases(ws, {"rag_worse", "judge_audit", "contradicted"})
        cfg = Config(store=tmp_path / "store.duckdb", workspace=tmp_path / "ws.duckdb")
        md = write_case_study(cfg, ws, ["n4", "g4"]).read_text(encoding="utf-8")
        html = render_case(load_case(ws, resolve_runs(ws, ["n4", "g4"])))
    # the control: No-RAG right by the judge and the audit, RAG wrong with the figures in view
    assert rows["g5"]["cause"] == "knew_it" and "n5" not in rows
    # F4: No-RAG is no longer right, so RAG's failure is not "knew it" — and says why
    assert rows["g4"]["cause"] != "knew_it"
    why = (
        "the judge gave accuracy 5, but the audit contradicts 3 of its figures (ROE 25.1% vs"
        " 0.264 in the store; Debt/Equity 0.75 vs 0.085 in the store; Earnings/Price 2.7% vs"
        " 0.02 in the store)"
    )
    assert f"No-RAG run n4 is not right: {why}" in rows["g4"]["rule"]
    # the No-RAG answer itself is a failed answer, decided by the audit
    n4 = rows["n4"]
    assert (n4["verdict"], n4["by"]) == ("wrong", "audit") and f"(counted wrong: {why})" in n4[
        "rule"
    ]
    # RAG worse: F4's No-RAG counts 2, not 5 — RAG's 2 is no worse; F5's pair stays listed
    listed = [(c["filter"], c["run_ids"]) for c in cases]
    assert listed == [
        ("rag_worse", ["n5", "g5"]),
        ("contradicted", ["n4"]),
        ("judge_audit", ["n4"]),
    ]
    # the disagreement shows both sides
    case = cases[-1]
    assert case["reason"] == why
    assert case["numbers"]["judge_accuracy"] == 5 and case["numbers"]["contradicted"] == 3
    assert case["numbers"]["supported"] == 0
    # the case study: the judge's 5 in the scores table, the verdict that counts beside it
    assert "| llm | judge | 1 | ok | 5 | 4 | 4 | 4 |" in md
    assert f"- **Verdict:** wrong (by audit): {why}; the judge's accuracy counts as 2" in md
    assert "- **Verdict:** wrong (by judge)" in md  # RAG: the judge's own verdict
    assert '<p class="counted counted-wrong judge-audit"><b>Verdict:</b> wrong (by audit)' in html


def test_counts_as_right_overrules_the_machines_never_a_person() -> None:
    from fintrade_tui.reports.rightness import counts_as_right, score_verdict

    bad = WRONG_FIGURES
    v = counts_as_right("right", "judge", bad, 5)
    assert (v.verdict, v.by, v.accuracy, v.contradicted) == ("wrong", "audit", 2, 3)
    assert v.judge_audit and v.why.startswith("the judge gave accuracy 5, but the audit")
    v = counts_as_right("right", "matcher", bad)
    assert (v.verdict, v.by) == ("wrong", "audit")
    assert v.why.startswith("the matcher called it right, but the audit contradicts 3")
    # a person's verdict stands; the judge's disagreement with the audit is still noted
    v = counts_as_right("right", "label", bad, 5)
    assert (v.verdict, v.by, v.right) == ("right", "label", True) and v.judge_audit
    assert "judge ≠ audit: the judge gave accuracy 5" in v.line()
    # a judge in two minds (3) counts wrong too; a wrong or a refusal keeps its source
    assert (counts_as_right(None, "", bad, 3).verdict, counts_as_right(None, "", bad, 3).by) == (
        "wrong", "audit",
    )  # fmt: skip
    assert counts_as_right(None, "", bad, 3).judge_audit is None  # the judge did not say right
    assert counts_as_right("wrong", "judge", bad, 2).by == "judge"
    assert counts_as_right("refused", "matcher", bad).verdict == "refused"
    # the audit takes "right" away, never gives it: judge low, figures supported, no dispute
    v = counts_as_right("wrong", "judge", RIGHT_FIGURES, 1)
    assert (v.verdict, v.by, v.accuracy, v.judge_audit) == ("wrong", "judge", 1, None)
    assert counts_as_right("right", "judge", RIGHT_FIGURES, 5).right is True
    assert counts_as_right(None, "", None).verdict is None
    # the stack: judge, then the matcher, a person's accuracy, a person's label
    assert score_verdict(5) == ("right", "judge")
    assert score_verdict(5, {"label": "incorrect"}) == ("wrong", "matcher")
    assert score_verdict(5, {"label": "correct", "detail": {"verdict": "refused"}}) == (
        "refused", "matcher",
    )  # fmt: skip
    assert score_verdict(1, None, 4.5) == ("right", "human")
    assert score_verdict(1, None, 4.5, ["Incorrect"]) == ("wrong", "label")
    assert score_verdict(3, None, 3, ["partial"]) == (None, "")
