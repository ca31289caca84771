"""Answer checks (scoring/answer_checks.py) on the published FinQA and TAT-QA samples: each
benchmark's mode and reference; FinQA's published `exe_ans` written as an answer is equal under
FinQA's rule for every item, a figure 10 % off is not; the table's stated scale applies to a
difference of its figures, not to a ratio; the JSON of a traced answer."""

from __future__ import annotations

import json
from pathlib import Path

from fintrade_tui.questions.importers import read_questions
from fintrade_tui.scoring.answer_checks import check_answer, mode_for, reference_for, scale_hint
from fintrade_tui.workspace.questions import Question

EXTERNAL = Path(__file__).parents[1] / "data" / "external"
FINQA = EXTERNAL / "finqa" / "train_sample.json"
TATQA = EXTERNAL / "tatqa" / "dev_sample.json"
TABLE = [["( in millions )", "2009", "2008"], ["net revenue", "$ 5829", "$ 5735"]]


def _finqa(program: str, exe_ans: float) -> Question:
    extra = {"exe_ans": exe_ans, "program": program, "table_rows": TABLE, "table_norm": TABLE}
    return Question("FINQA-x", "finqa", "table", "what was the change?", str(exe_ans), extra=extra)


def test_every_published_finqa_answer_is_equal_and_a_figure_ten_percent_off_is_not() -> None:
    published = {i["id"]: i["qa"]["exe_ans"] for i in json.loads(FINQA.read_text())}
    questions = read_questions(FINQA, "finqa")
    assert len(questions) == len(published) == 25
    for q in questions:
        exe = published[q.extra["published_id"]]
        assert mode_for(q) == "finqa" and reference_for(q, "finqa") == exe
        if isinstance(exe, str):  # yes / no
            assert check_answer(q, f"Answer: {exe}").match.verdict == "equal", q.id
            continue
        assert check_answer(q, f"Answer: {exe}").match.verdict == "equal", q.id
        off = check_answer(q, f"Answer: {exe * 1.1 if exe else 1}").match
        assert off.verdict == "not_equal", (q.id, off.reason)


def test_tatqa_scores_against_its_annotation() -> None:
    q = read_questions(TATQA, "tatqa")[0]
    assert mode_for(q) == "tatqa"
    ref = reference_for(q, "tatqa")
    assert ref == {"answer": q.extra["answer"], "answer_type": q.extra["answer_type"],
                   "scale": q.extra["scale"]}  # fmt: skip
    other = Question("Q", "byo", "x", "t", "Revenue was $5.7 billion.")
    assert (
        mode_for(other) == "tolerance"
        and reference_for(other, "tolerance") == other.reference_answer
    )


def test_the_tables_scale_holds_for_a_difference_not_a_ratio() -> None:
    diff = _finqa("subtract(5829, 5735)", 94.0)
    assert scale_hint(diff) == "in millions"
    assert check_answer(diff, "Net revenue rose by $94 million.").match.verdict == "equal"
    ratio = _finqa("subtract(5829, 5735), divide(#0, 5735)", 0.01639)
    assert scale_hint(ratio) is None
    assert "(in millions)" not in check_answer(ratio, "up 1.64%").match.reason


def test_a_traced_answer_marks_the_step_that_leaves_the_reference() -> None:
    q = _finqa("subtract(5829, 5735), divide(#0, 5735)", 0.01639)
    checks = check_answer(q, "5829 - 5735 = 94, and 94 / 5829 = 0.0161, so 1.61%").to_dict()
    assert checks["verdict"] == "not_equal"
    assert [s["value"] for s in checks["reference_trace"]] == [94.0, 94 / 5735]
    assert [s["op"] for s in checks["trace"]] == ["subtract", "divide"]
    assert checks["departs_at_step"] == 2 and checks["trace"][1]["departs"]
    where = checks["trace"][0]["operands"][0]["where"]
    assert (where["row_label"], where["column"]) == ("net revenue", "2009")
