"""FinQA program traces read from answers and held against the reference: a DSL program or prose
arithmetic in an answer (a wrong written result noted), the first step departing from the
reference, equivalence against FinQA's own equal_program on the same pairs (and where they
differ on purpose), and execution and program accuracy per condition."""

from __future__ import annotations

from types import ModuleType

import pytest

from fintrade_tui.scoring.finqa import program as fp
from tests.unit.finqa_cases import (
    PASSAGES,
    TABLE,
    finqa_equal_module,  # noqa: F401  (the fixture finqa_equal)
)


def test_trace_from_answer_reads_a_dsl_program() -> None:
    answer = (
        "The change is 94 on 5735. Program: subtract(5829, 5735), divide(#0, 5735)\n"
        "So the answer is 1.6%."
    )
    trace = fp.trace_from_answer(answer, TABLE, PASSAGES)
    assert trace is not None and trace.source == "answer_dsl"
    assert trace.program_text == "subtract(5829, 5735), divide(#0, 5735)"
    assert trace.value == 0.01639
    # the last readable program counts; "add (" in prose and a broken call are no programs
    twice = "First add (both) years: add(1, 2). Correction: add(1, 3), multiply(#0, 2)."
    again = fp.trace_from_answer(twice)
    assert again is not None and again.program_text == "add(1, 3), multiply(#0, 2)"
    assert fp.trace_from_answer("divide(1, 0)") is not None  # runs, with its error
    assert fp.trace_from_answer("Revenue rose to $5,829 million.") is None
    assert fp.trace_from_answer("") is None


@pytest.mark.parametrize(
    ("answer", "program", "stated", "value"),
    [
        ("Net revenue rose 2.4 - 1.9 = 0.5 points.", "subtract(2.4, 1.9)", ["0.5"], 0.5),
        (
            "Growth: (3.2 / 2.9 - 1) * 100 = 10.3%",
            "divide(3.2, 2.9), subtract(#0, const_1), multiply(#1, const_100)",
            [None, None, "10.3%"],
            10.34483,
        ),
        (
            "Change = $5,829 - $5,735 = $94 million.\nGrowth = 94 / 5735 = 0.0164 = 1.64%",
            "subtract(5,829, 5,735), divide(#0, 5735)",
            ["94", "0.0164"],
            0.01639,
        ),
        (
            "3.2 / 2.9 = 1.103; 1.103 - 1 = 0.103, so 0.103 × 100 = 10.3%",
            "divide(3.2, 2.9), subtract(#0, const_1), multiply(#1, const_100)",
            ["1.103", "0.103", "10.3%"],
            10.34483,
        ),
        ("Average = (5829 + 5735 + 5600) / 3 = 5721.33", None, None, 5721.33333),
        ("Loss widened: -(45 - 12) = -33", "subtract(45, 12), multiply(#0, const_m1)", None, -33),
        ("1.05 ^ 2 = 1.1025", "exp(1.05, 2)", ["1.1025"], 1.1025),  # 2 is in the table
    ],
)
def test_trace_from_answer_reads_arithmetic_prose(
    answer: str, program: str | None, stated: list[str | None] | None, value: float
) -> None:
    trace = fp.trace_from_answer(answer, TABLE, PASSAGES)
    assert trace is not None and trace.source == "answer_arithmetic"
    if program is not None:
        assert trace.program_text == program
    if stated is not None:
        assert [s.stated for s in trace.steps] == stated
    assert trace.value == pytest.approx(value, abs=1e-5)
    assert all(s.note is None for s in trace.steps)  # every written result is right


def test_a_wrong_written_result_is_noted_and_not_carried_as_the_step() -> None:
    trace = fp.trace_from_answer("2.4 - 1.9 = 0.6, and 0.6 / 1.9 = 0.316")
    assert trace is not None
    assert trace.program_text == "subtract(2.4, 1.9), divide(0.6, 1.9)"  # 0.6 is no #0
    assert trace.steps[0].note == "written 0.6, computes to 0.5"
    assert trace.rows()[0]["note"] == "written 0.6, computes to 0.5"
    alone = fp.trace_from_answer("1.05 ^ 2 = 1.1025")  # 2 in no table: FinQA's constant
    assert alone is not None and alone.program_text == "exp(1.05, const_2)"
    assert fp.trace_from_answer("In 2016-2017 revenue rose; see 10-K page 23.") is None
    assert fp.trace_from_answer("Revenue was -5 = a loss") is None  # a figure, no calculation


REFERENCE = "subtract(5829, 5735), divide(#0, 5735)"  # 94, then 0.01639


@pytest.mark.parametrize(
    ("answer", "departs", "summary"),
    [
        ("(5829 - 5735) / 5735 = 0.0164", None, "2 steps, agrees with the reference: 0.01639"),
        ("5829 - 5735 = 94; 94 / 5735 * 100 = 1.64%", None, None),  # x100 is the same result
        ("5829 / 5735 - 1 = 0.0164", None, None),  # a step off the path, the result on it
        (
            "5829 - 5735 = 94; 94 / 5829 = 0.0161",
            1,
            "2 steps, departs at step 2: 0.01613 vs reference 0.01639",
        ),
        ("5829 + 5735 = 11564; 11564 / 5735 = 2.016", 0, None),
        ("5829 / 5735 = 1.0164; 5829 - 5735 = 94; 94 / 100 = 0.94", 2, None),
        ("5829 - 5735 = 94", 0, "1 step, departs at step 1: 94 vs reference 94"),  # stops short
    ],
)
def test_first_departure(answer: str, departs: int | None, summary: str | None) -> None:
    reference = fp.execute(REFERENCE, TABLE, PASSAGES)
    trace = fp.trace_from_answer(answer, TABLE, PASSAGES)
    assert fp.first_departure(trace, reference) == departs
    assert trace is not None and trace.departs_at == departs
    assert [r["departs"] for r in trace.rows()] == [i == departs for i in range(len(trace.steps))]
    if summary:
        assert trace.summary == summary


def test_first_departure_without_something_to_compare() -> None:
    reference = fp.execute(REFERENCE)
    assert fp.first_departure(None, reference) is None
    assert fp.first_departure(fp.execute("add(1, 2)"), None) is None
    broken = fp.execute("divide(1, 0)")
    assert fp.first_departure(fp.execute("add(1, 2)"), broken) is None
    assert fp.values_agree(0.1034, 10.34) and fp.values_agree("yes", "yes")
    assert not fp.values_agree(0.1034, 0.11) and not fp.values_agree("yes", 1.0)


# pairs; FinQA's equal_program gives the same verdict on all but those in EQUIVALENT_NOT_FINQA
PAIRS = [
    ("subtract(5829, 5735), divide(#0, 5735)", "subtract(5829, 5735), divide(#0, 5735)"),
    ("add(5829, 5735)", "add(5735, 5829)"),
    ("multiply(8.1, 56.0)", "multiply(56.0, 8.1)"),
    ("subtract(5829, 5735)", "subtract(5735, 5829)"),
    ("divide(8.1, 56.0)", "divide(56.0, 8.1)"),
    ("add(1, 2), add(#0, 3)", "add(2, 3), add(#0, 1)"),
    ("add(1, 2), add(#0, 3)", "add(3, 2), add(1, #0)"),
    ("multiply(2, 3), multiply(#0, 4)", "multiply(3, 4), multiply(#0, 2)"),
    ("subtract(5829, 5735), divide(#0, 5735)", "subtract(5829, 5735), divide(#0, 5829)"),
    ("subtract(5829, 5735), divide(#0, 5735)", "divide(5829, 5735)"),
    ("table_average(revenue, none)", "table_average(revenue, none)"),
    ("table_average(revenue, none)", "table_max(revenue, none)"),
    (
        "table_sum(revenue, none), divide(#0, const_2)",
        "table_sum(revenue, none), divide(#0, const_2)",
    ),
    ("greater(5829, 5735)", "greater(5829, 5735)"),
    ("greater(5829, 5735)", "greater(5735, 5829)"),
    ("subtract(58, 57), multiply(#0, const_100)", "subtract(58, 57), multiply(const_100, #0)"),
    ("add(58, 57), divide(#0, const_2)", "divide(58, const_2), divide(57, const_2), add(#0, #1)"),
    (
        "add(10, 20), add(#0, 30), divide(#1, const_3)",
        "add(30, 20), add(10, #0), divide(#1, const_3)",
    ),
    ("exp(1.05, const_2)", "exp(1.05, const_2)"),
    ("divide(8.1, 56.0)", "add(8.1, 56.0"),  # malformed: never equal
    # FinQA reads tokens, not values or algebra:
    ("subtract(5829, 5735), divide(#0, 5735)", "divide(5829, 5735), subtract(#0, const_1)"),
    ("divide(94, 5735), multiply(#0, const_100)", "divide(94, 5735), multiply(#0, 100)"),
    ("subtract(5,829, 5735)", "subtract(5829, 5735)"),
    ("exp(1.05, const_2)", "multiply(1.05, 1.05)"),
]
EQUIVALENT_NOT_FINQA = {  # equal in value and algebra; FinQA's token symbols differ
    20: "a/b - 1 is (a - b)/b only when const_1 is the number 1",
    21: "const_100 and 100 are one value",
    22: "'5,829' and '5829' are one value",
    23: "x^2 is x*x when const_2 is the number 2",
}


@pytest.mark.parametrize("i", range(len(PAIRS)))
def test_equivalence_against_finqas_equal_program(i: int, finqa_equal: ModuleType) -> None:
    a, b = PAIRS[i]
    tokenize = finqa_equal.program_tokenization
    theirs = finqa_equal.equal_program(tokenize(a), tokenize(b))
    ours = fp.equivalent(a, b)
    if i in EQUIVALENT_NOT_FINQA:
        assert (ours, theirs) == (True, False)
    else:
        assert ours == theirs
    assert fp.equivalent(b, a) == ours or i == 19  # symmetric (b of pair 19 does not parse)


def test_equivalence_of_traces_and_percent() -> None:
    reference = fp.execute(REFERENCE)
    prose = fp.trace_from_answer("(5829 - 5735) / 5735 * 100 = 1.64%")
    assert prose is not None
    assert not fp.equivalent(prose, reference)
    assert fp.equivalent(prose, reference, allow_percent=True)
    assert fp.equivalent(fp.trace_from_answer("5829 / 5735 - 1 = 0.0164"), REFERENCE)  # type: ignore[arg-type]
    assert not fp.equivalent("add(1, 2)", "add(1, 2), multiply(#0, 3)")


def test_program_accuracy_per_condition() -> None:
    base = {"program": REFERENCE, "exe_ans": 0.01639, "table_norm": TABLE, "passages": PASSAGES}
    rows = [
        {**base, "condition": "rag", "answer": "(5829 - 5735) / 5735 = 1.64%"},  # both right
        {**base, "condition": "rag", "answer": "The answer is 1.6%."},  # no steps; 0.016 != exe
        {**base, "condition": "rag", "answer": "5829 / 5735 - 1 = 0.01639"},  # both right
        {
            **base,
            "condition": "no_rag",
            "answer": "Program: subtract(5829, 5735), divide(#0, 5735)",
        },
        {**base, "condition": "no_rag", "answer": "subtract(5829, 5735), divide(#0, 5829)"},
        {**base, "condition": "no_rag", "answer": "It grew 1.639%, from 5735: 94 / 5735 = 0.0164"},
    ]
    got = fp.program_accuracy(rows)
    assert got == {
        "rag": {"n": 3, "execution_accuracy": 2 / 3, "program_accuracy": 2 / 3},
        # the last: 1.639% = 0.01639 (exe right); "94" not as written in the table, but
        # divide(94, 5735) is not the reference's expression (94 is a literal, not 5829 - 5735)
        "no_rag": {"n": 3, "execution_accuracy": 2 / 3, "program_accuracy": 1 / 3},
    }
