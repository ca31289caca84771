"""The judge's numeric audit checks figures against what a question supplies: a SECQUE-style
question's filing excerpt and reference answer, and the evidence an imported run brought —
beside the store, in one result that names what each figure was compared with."""

from __future__ import annotations

from fintrade_tui.audits.numeric import summary_line
from fintrade_tui.config import Config
from fintrade_tui.judging.session import audit_run, supplied_texts
from fintrade_tui.ui.arena_model import audit_rows
from fintrade_tui.workspace.questions import Question

EXCERPT = "Capital expenditures (in millions): 2023 | 1,577; 2022 | 1,402."
Q = Question(
    "SECQUE-9",
    "secque",
    "ratio",
    "What were the capital expenditures in 2023?",
    reference_answer="Capital expenditures were $1.58 billion; the margin was 25%.",
    extra={"context": {"context1": EXCERPT}},
    oracle={"supplied": {"context1": {"value": EXCERPT, "kind": "context"}}},
)


def test_supplied_texts_are_the_excerpt_once_and_an_imported_runs_evidence() -> None:
    items = [
        {"track": "context", "text": "Net sales 391,035"},
        {"track": "filing", "text": "retrieved, not supplied"},
    ]
    run = {"evidence": {"items": items}}
    assert supplied_texts(Q, run) == [EXCERPT, "Net sales 391,035"]


def test_audit_run_uses_the_excerpt_and_the_reference_without_a_store(built_store: Config):
    run = {"answer": "Capex was $1.58 billion, and the margin reached 30.8%.", "condition": "rag"}
    result = audit_run(built_store, run, Q)  # no as_of: the store is not consulted
    by_text = {c["text"]: c for c in result["claims"]}
    assert by_text["$1.58 billion"]["verdict"] == "SUPPORTED"
    assert by_text["$1.58 billion"]["compared_with"].startswith("evidence 1")
    assert by_text["30.8%"]["verdict"] == "CONTRADICTED"
    assert result["summary"]["SUPPORTED"] == 1 and result["summary"]["CONTRADICTED"] == 1
    assert result["against"] == ["evidence", "reference"]
    # the reference states $1.58 billion and 25%; the answer states the first of the two
    assert summary_line(result).endswith(
        "(30.8% vs 25% in the reference); states 1 of the reference's 2 figures"
    )
    verdicts = [v for v, _ in audit_rows(result)]
    assert verdicts == ["SUPPORTED", "CONTRADICTED"]
    # the benchmark's own reference answer is not audited against itself
    own = audit_run(built_store, {"answer": Q.reference_answer, "condition": "reference"}, Q)
    assert own["summary"]["CONTRADICTED"] == 0
