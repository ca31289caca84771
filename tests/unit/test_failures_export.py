"""Failure cases and case-study export on a workspace populated by hand (no models): every
filter selects exactly its cases, the latest score versions count, the export holds the
question, the answers, the scores and the audit verdicts and never an API key.

`populate()` is shared with the Pilot tests (tests/ui/test_results_*.py)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import duckdb
import pytest

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.exports.case_study import write_case_study
from fintrade_tui.reports.failures import FILTERS, failure_cases
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import FULL, PARTIAL, RESOLVED, Question, save_questions
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore
from fintrade_tui.workspace.screenings import DETERMINISTIC, Flag, FlagStore

QUESTIONS = [
    Question(
        "F1",
        "fintradebench",
        "F",
        "As of November 1, 2024, is Apple's return on equity high given its debt to equity?",
        reference_answer="Apple's ROE is very high (about 1.6) because buybacks shrink equity.",
        tickers=["AAPL"],
        scope="company",
        as_of=date(2024, 11, 1),
        window_start=date(2024, 11, 1),
        window_end=date(2024, 11, 1),
        golden_raw=["ROE", "Debt/Equity"],
        golden=["roe", "debt_to_equity"],
        status=RESOLVED,
        coverage=FULL,
        oracle={
            "AAPL": {
                "roe": {
                    "value": 1.6059,
                    "kind": "ratio",
                    "source": "filing",
                    "fiscal_year": 2024,
                    "fiscal_period": "Q4",
                    "period_end": "2024-09-28",
                    "available_from": "2024-11-01",
                    "accession": "0000320193-24-000123",
                    "estimated": False,
                },
                "debt_to_equity": {
                    "value": 1.8723,
                    "kind": "ratio",
                    "source": "filing",
                    "fiscal_year": 2024,
                    "fiscal_period": "Q4",
                    "period_end": "2024-09-28",
                    "available_from": "2024-11-01",
                    "accession": "0000320193-24-000123",
                    "estimated": False,
                },
            }
        },
    ),
    Question(
        "T2",
        "fintradebench",
        "T",
        "Was Microsoft overbought at the end of September 2024 by its 14-day RSI?",
        reference_answer="No: the RSI was near 50.",
        tickers=["MSFT"],
        scope="company",
        as_of=date(2024, 9, 30),
        window_start=date(2024, 9, 1),
        window_end=date(2024, 9, 30),
        golden_raw=["RSI"],
        golden=["rsi_14"],
        status=RESOLVED,
        coverage=FULL,
        oracle={
            "MSFT": {
                "rsi_14": {
                    "value": 51.2,
                    "kind": "signal",
                    "source": "signals (fintradebench prices)",
                    "date": "2024-09-30",
                    "available_from": "2024-09-30",
                }
            }
        },
    ),
    Question(
        "FT3",
        "fintradebench",
        "FT",
        "Given NVIDIA's momentum and margins in June 2025, is the trend supported?",
        tickers=["NVDA"],
        scope="company",
        as_of=date(2025, 6, 30),
        window_start=date(2025, 6, 1),
        window_end=date(2025, 6, 30),
        golden_raw=["momentum", "ROE"],
        golden=["momentum_20d", "roe"],
        status=RESOLVED,
        coverage=PARTIAL,
        coverage_missing=["NVDA:roe: no filing or vendor value available by as_of"],
    ),
    Question(
        "X9",
        "jsonl",
        "F",
        "How did the mystery company do?",
        status="unresolved",
        reasons=["no company named"],
    ),
]

# id, question, condition, model, status, answer
RUNS = [
    ("r01", "F1", "no_rag", "alpha", "completed", "Apple's ROE is high, about 160%."),
    ("r02", "F1", "rag", "alpha", "completed", "Apple's ROE is 0.90 and its D/E is 1.87."),
    ("r03", "T2", "no_rag", "alpha", "completed", "MSFT's RSI was 50."),
    ("r04", "T2", "rag", "alpha", "completed", "The 14-day RSI was 51.2, not overbought."),
    ("r05", "F1", "no_rag", "beta", "error", ""),
    ("r06", "FT3", "rag", "beta", "timeout", "NVIDIA's momentum"),
    ("r07", "FT3", "no_rag", "beta", "completed", "Momentum is positive."),
    ("r08", "F1", "oracle", "alpha", "completed", "ROE 1.606 and D/E 1.872 per the filing."),
]

AUDIT_R02 = {
    "as_of": "2024-11-01",
    "summary": {"SUPPORTED": 1, "CONTRADICTED": 1, "NOT_FOUND": 0, "checked": 2},
    "claims": [
        {
            "text": "Apple's ROE is 0.90",
            "span": [15, 19],
            "value": 0.9,
            "unit": "",
            "indicator": "roe",
            "ticker": "AAPL",
            "store_value": 1.6059,
            "source": "filing 0000320193-24-000123",
            "verdict": "CONTRADICTED",
            "rel_error": 0.44,
            "why": "ROE 0.9 but the store has 1.606, off by 44% (filing)",
        },
        {
            "text": "its D/E is 1.87",
            "span": [35, 39],
            "value": 1.87,
            "unit": "",
            "indicator": "debt_to_equity",
            "ticker": "AAPL",
            "store_value": 1.8723,
            "source": "filing 0000320193-24-000123",
            "verdict": "SUPPORTED",
            "rel_error": 0.001,
            "why": "Debt/Equity 1.87 agrees with the store's 1.872 (filing)",
        },
    ],
}
AUDIT_OK = {
    "as_of": "2024-09-30",
    "summary": {"SUPPORTED": 1, "CONTRADICTED": 0, "NOT_FOUND": 0, "checked": 1},
    "claims": [dict(AUDIT_R02["claims"][1], ticker="MSFT", indicator="rsi_14", value=51.2)],
}


def llm_score(run: str, acc: int, clarity: int = 4, audit: dict | None = None) -> Score:
    detail = {
        "judge_model": "script/judge",
        "justifications": {
            "accuracy": f"accuracy reasoning for {run}",
            "completeness": "covers the golden indicators",
            "relevance": "on topic",
            "clarity": "clear",
        },
        "metrics_used": ["ROE", "Debt/Equity"],
        "golden_prf": {
            "metrics_canonical": ["debt_to_equity", "roe"],
            "metrics_unmapped": [],
            "golden": ["debt_to_equity", "roe"],
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
        },
        "audit": audit,
    }
    return Score(run, "llm", "judge", acc, 3, 4, clarity, detail=detail)


def populate(ws: duckdb.DuckDBPyConnection) -> None:
    """The fixture workspace: 4 questions, 8 runs, LLM and human scores (see RUNS)."""
    save_questions(ws, QUESTIONS)
    runs = RunStore(ws)
    for i, (rid, qid, cond, model, status, answer) in enumerate(RUNS):
        runs.start(
            {
                "id": rid,
                "question_id": qid,
                "condition": cond,
                "model": model,
                "model_string": f"script/{model}",
                "params": {"model": f"script/{model}", "temperature": 0.2},
                "level": "L5",
                "as_of": next(q.as_of for q in QUESTIONS if q.id == qid),
                "prompt": "prompt",
                "prompt_hash": "abc123",
                "evidence_ids": ["chunk:aapl-10k-item7-3"] if cond == "rag" else [],
                "evidence": {
                    "condition": cond,
                    "items": [
                        {
                            "id": "chunk:aapl-10k-item7-3",
                            "track": "filing",
                            "title": "AAPL 10-K filed 2024-11-01, Item 7",
                            "available_from": "2024-11-01",
                        }
                    ]
                    if cond == "rag"
                    else [],
                    "notes": [],
                },
                "started_at": datetime(2025, 1, 2, 10, 0, i),
            }
        )
        runs.finish(
            rid,
            status=status,
            answer=answer,
            ttft=0.25,
            duration=1.5 + i,
            tokens_in=900,
            tokens_out=60,
            retries=0,
            error={"error": "RateLimitError: 429 too many requests", "timeout": "timed out"}.get(
                status
            ),
        )
    scores = ScoreStore(ws)
    scores.save(llm_score("r01", 1))  # superseded below: the latest version counts
    scores.save(llm_score("r01", 4))
    scores.save(llm_score("r02", 2, audit=AUDIT_R02))
    scores.save(llm_score("r03", 3))
    scores.save(llm_score("r04", 4, audit=AUDIT_OK))
    scores.save(llm_score("r07", 3, clarity=3))
    scores.save(llm_score("r08", 5))
    human = dict(kind="human", annotator="ana")
    scores.save(Score("r01", **human, accuracy=4, completeness=3, relevance=4, clarity=4))
    scores.save(Score("r02", **human, accuracy=5, completeness=3, relevance=4, clarity=4, note="x"))
    scores.save(Score("r07", **human, accuracy=3, completeness=3, relevance=4, clarity=1))
    scores.save(Score("r08", **human, accuracy=5, completeness=3, relevance=4, clarity=4))
    # labels, as an imported file brings them: a human-kind score with a label and no rubric
    labels = dict(kind="human", annotator="paper:human")
    scores.save(Score("r01", **labels, label="incorrect", note="ROE is far above 100%"))
    scores.save(Score("r08", **labels, label="correct"))
    scores.save(Score("r07", **labels, label="refusal"))
    # fatal-flaw screenings: r04 flagged, r08 screened clean (no case), r01 flagged then clean
    flags = FlagStore(ws)
    flags.save("r04", [Flag("wrong_entity", "names MSFT; the question asks about AAPL", "MSFT")],
               checks=[DETERMINISTIC])  # fmt: skip
    flags.save("r08", [], checks=[DETERMINISTIC])
    flags.save("r01", [Flag("truncated", "ends mid-sentence")], checks=[DETERMINISTIC])
    flags.save("r01", [], checks=[DETERMINISTIC])  # the newest screening counts


EXPECTED = {
    "rag_worse": [["r01", "r02"]],
    "disagree": [["r02"], ["r07"]],
    "contradicted": [["r02"]],
    "judge_audit": [],  # r02's judge gave 2, r04's audit supports it: no disagreement here
    "errors": [["r05"], ["r06"]],
    "unrated": [["r03"], ["r04"]],
    "incorrect": [["r01"]],
    "refusal": [["r07"]],
    "oracle_flip": [["r01", "r08"]],  # F1 alpha: Oracle labelled correct, No-RAG incorrect
    "may_know": [],  # alpha and beta (script/...) have no known cutoff: tests/unit/test_cutoffs.py
    "fatal_flaw": [["r04"]],
}


@pytest.fixture
def ws(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = open_workspace(tmp_path / "workspace.duckdb")
    populate(con)
    yield con
    con.close()


@pytest.mark.parametrize("name", FILTERS)
def test_each_filter_selects_exactly_its_cases(ws, name: str) -> None:
    rows = failure_cases(ws, {name})
    assert [r["filter"] for r in rows] == [name] * len(rows)
    assert [r["run_ids"] for r in rows] == EXPECTED[name]


def test_all_filters_in_a_fixed_order_with_reasons_and_numbers(ws) -> None:
    rows = failure_cases(ws)
    assert [r["run_ids"] for r in rows] == [ids for f in FILTERS for ids in EXPECTED[f]]
    assert rows == failure_cases(ws, set(FILTERS))  # deterministic
    assert len({r["key"] for r in rows}) == len(rows)
    rag = rows[0]
    assert rag["question_id"] == "F1" and rag["model"] == "alpha"
    assert rag["question"].startswith("As of November 1, 2024")
    assert rag["conditions"] == ["no_rag", "rag"] and rag["condition"] == "No-RAG vs RAG"
    assert rag["numbers"]["no_rag"] == 4 and rag["numbers"]["rag"] == 2  # r01's latest version
    assert rag["numbers"]["delta_pct"] == pytest.approx(-50.0)
    dis = {r["run_ids"][0]: r for r in rows if r["filter"] == "disagree"}
    assert dis["r02"]["numbers"]["gap"]["accuracy"] == -3
    assert "accuracy: human 5 vs judge 2" in dis["r02"]["reason"]
    assert dis["r07"]["reason"] == "clarity: human 1 vs judge 3"
    con = next(r for r in rows if r["filter"] == "contradicted")
    assert con["numbers"]["contradicted"] == 1 and con["numbers"]["supported"] == 1
    assert "1 contradicted" in con["reason"] and con["numbers"]["claims"][0]["indicator"] == "roe"
    err = [r for r in rows if r["filter"] == "errors"]
    assert err[0]["reason"].startswith("error: RateLimitError")
    assert err[1]["reason"] == "timeout: timed out" and err[1]["category"] == "FT"
    unrated = [r for r in rows if r["filter"] == "unrated"]
    assert unrated[0]["numbers"] == {"judge_accuracy": 3}


def test_disagreement_threshold_and_bad_filters(ws) -> None:
    assert [r["run_ids"] for r in failure_cases(ws, {"disagree"}, disagreement=3)] == [["r02"]]
    assert failure_cases(ws, set()) == []
    with pytest.raises(ValueError, match="unknown failure filters"):
        failure_cases(ws, {"nope"})


def test_a_fresh_workspace_has_no_cases(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "empty.duckdb"))
    assert failure_cases(con) == []
    con.close()


def test_case_study_export(ws, tmp_path: Path) -> None:
    cfg = Config(store=tmp_path / "data" / "fintrade.duckdb", workspace=tmp_path / "ws.duckdb")
    path = write_case_study(cfg, ws, ["r01", "r02"])
    assert path == tmp_path / "data" / "exports" / "case-F1-r01-2runs.md"
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Case study: F1\n")
    # the question with its golden indicators, oracle values and provenance
    assert QUESTIONS[0].text in text and "**Category:** F" in text
    assert "**As of:** 2024-11-01" in text and "**Tickers:** AAPL" in text
    assert "roe, debt_to_equity" in text and "0000320193-24-000123" in text
    assert "| AAPL | roe | 1.6059 | filing | 2024 Q4 | 2024-11-01 |" in text
    assert QUESTIONS[0].reference_answer in text
    # both runs, their answers and evidence
    assert "### Run r01 — No-RAG · alpha · L5" in text and "### Run r02 — RAG · alpha · L5" in text
    assert "> Apple's ROE is high, about 160%." in text
    assert "> Apple's ROE is 0.90 and its D/E is 1.87." in text
    assert "`chunk:aapl-10k-item7-3` — AAPL 10-K filed 2024-11-01, Item 7" in text
    # the latest scores (r01's judge accuracy 4, not the superseded 1) and justifications
    assert "| llm | judge | 2 | ok | 4 | 3 | 4 | 4 |" in text
    assert "| human | ana | 1 | ok | 5 | 3 | 4 | 4 |" in text
    assert "accuracy reasoning for r02" in text and "**human · ana note:** x" in text
    assert "precision 1, recall 1, F1 1" in text
    # the audit verdicts with the store values
    assert "| CONTRADICTED | AAPL | roe | 0.9 | 1.6059 |" in text
    assert "| SUPPORTED | AAPL | debt_to_equity | 1.87 | 1.8723 |" in text
    assert "_(no audit recorded" in text  # r01 was judged without an audit
    assert "api_key" not in text.lower() and "temperature" not in text


def test_case_study_of_a_failed_run_and_a_chosen_path(ws, tmp_path: Path) -> None:
    cfg = Config(store=tmp_path / "store.duckdb")
    out = write_case_study(cfg, ws, ["r06"], tmp_path / "x" / "case.md")
    text = out.read_text(encoding="utf-8")
    assert out == tmp_path / "x" / "case.md"
    assert "**Status:** timeout (timed out)" in text and "_(not scored yet)_" in text
    assert "NVDA:roe: no filing" in text  # coverage gaps
    with pytest.raises(UserError, match="not found"):
        write_case_study(cfg, ws, ["zzz"])
    with pytest.raises(UserError, match="names no runs"):
        write_case_study(cfg, ws, [])
