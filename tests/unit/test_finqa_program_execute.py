"""FinQA program traces executed: every operation, constants and table operations run to the
value worked out by hand and to what FinQA's own eval_program gives (vendored verbatim,
tests/data/external/finqa_eval/); FinQA's token lists; operands linked to their table cells
and passages; a bad program as one clear line; steps that cannot run kept in the trace with
their reason; rows and summary as plain data."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.scoring.finqa import program as fp
from fintrade_tui.scoring.finqa.program import ProgramError
from tests.unit.finqa_cases import (
    PASSAGES,
    TABLE,
    finqa_equal_module,  # noqa: F401  (the fixture finqa_equal)
    finqa_eval_module,  # noqa: F401  (the fixture finqa_eval)
)

# program, its value worked out by hand
PROGRAMS = [
    ("add(5829, 5735)", 11564.0),
    ("subtract(5829, 5735)", 94.0),
    ("multiply(1.5, 4)", 6.0),
    ("divide(8.1, 56.0)", 0.14464),
    ("exp(1.1, const_2)", 1.21),
    ("greater(5829, 5735)", "yes"),
    ("greater(5735, 5829)", "no"),
    ("subtract(5829, 5735), divide(#0, 5735)", 0.01639),
    ("divide(subtract(5829, 5735), 5735)", 0.01639),  # program_re's nested form
    ("add(5,829, 1,000)", 6829.0),  # FinQA drops commas
    ("multiply(20%, 300)", 60.0),  # "20%" = 0.2
    ("multiply(5, const_100)", 500.0),
    ("multiply(5, const_1000)", 5000.0),
    ("multiply(5, const_m1)", -5.0),
    ("add(7, const_1000000)", 1000007.0),
    ("table_max(net revenue, none)", 5829.0),
    ("table_min(net revenue, none)", 5600.0),
    ("table_sum(net revenue, none)", 17164.0),
    ("table_average(net revenue, none)", round(17164 / 3, 5)),
    ("table_average(operating margin, none)", round((0.125 + 0.1 + 0.08) / 3, 5)),
    ("table_sum(shares, none)", 6.0),  # the last row named "shares"
    ("table_sum(net revenue, none), divide(#0, const_3), subtract(#1, 5600)", 121.33333),
]


@pytest.mark.parametrize(("program", "value"), PROGRAMS)
def test_every_operation_runs_to_its_value_and_to_finqas_own(
    program: str, value: float | str, finqa_eval: ModuleType, finqa_equal: ModuleType
) -> None:
    trace = fp.execute(program, TABLE, PASSAGES)
    assert trace.error is None
    assert trace.value == value
    if "(" not in program.split("(", 1)[1].split(")")[0]:  # FinQA's script reads flat programs
        tokens = finqa_equal.program_tokenization(program)
        assert finqa_eval.eval_program(tokens, TABLE) == (0, value)


def test_finqas_token_lists_read_like_the_text() -> None:
    tokens = ["subtract(", "5829", "5735", ")", "divide(", "#0", "5735", ")", "EOF"]
    assert fp.program_text(fp.parse_program(tokens)) == "subtract(5829, 5735), divide(#0, 5735)"
    assert fp.execute(tokens).value == 0.01639


def test_literals_link_to_figures_as_the_figures_reader_reads_them() -> None:
    table = [["", "2019"], ["net loss", "(1,234)"], ["margin", "12.5%"], ["debt", "$ 1.2 billion"]]
    loss, margin = fp.execute("add(-1234, 12.5%)", table).steps[0].operands
    assert (loss.where["cell"], margin.where["cell"]) == ("(1,234)", "12.5%")
    assert fp.execute("add(1234, 12.5)", table).steps[0].operands[1].where["cell"] == "12.5%"
    big, small = fp.execute("add(1200000000, 1.2)", table).steps[0].operands
    assert big.where["cell"] == small.where["cell"] == "$ 1.2 billion"
    dated = [["", "12/31/04"], ["cash", "7"]]  # a date's digits are no figure
    assert fp.execute("add(4, 7)", dated).steps[0].operands[0].kind == "number"


def test_row_names_with_brackets_and_commas_parse_and_look_up() -> None:
    table = [["", "a", "b"], ["revenue ( net ) , total", "4", "6"], ["Other Items", "1", "2"]]
    assert fp.execute("table_average(revenue ( net ) , total, none)", table).value == 5.0
    assert fp.execute("table_sum(other items, none)", table).value == 3.0  # case and spacing
    assert fp.execute("table_max(other items)", table).value == 2.0  # no "none"


def test_operands_say_where_they_come_from() -> None:
    trace = fp.execute(
        "subtract(5829, 5735), divide(#0, 32), multiply(#1, const_100), add(3.5%, 1250)",
        TABLE,
        PASSAGES,
    )
    first, second, third, fourth = trace.rows()
    a, b = first["operands"]
    assert (a["kind"], a["where"]["row"], a["where"]["col"]) == ("table", 1, 1)
    assert (a["where"]["row_label"], a["where"]["column"], a["where"]["cell"]) == (
        "net revenue",
        "2016",
        "$ 5829",
    )
    assert (b["where"]["column"], b["value"]) == ("2015", 5735.0)
    ref, passage = second["operands"]
    assert (ref["kind"], ref["where"]["step"], ref["value"]) == ("step", 0, 94.0)
    assert (passage["kind"], passage["where"]["passage"]) == ("passage", 1)
    assert passage["where"]["sentence"] == PASSAGES[1]
    assert third["operands"][1]["kind"] == "const" and third["operands"][1]["value"] == 100.0
    pct, big = fourth["operands"]
    assert (pct["kind"], pct["where"]["passage"], pct["value"]) == ("passage", 2, 0.035)
    assert (big["kind"], big["where"]["passage"]) == ("passage", 2)  # "1,250" read as 1250
    assert fp.execute("add(45, 777)", TABLE).steps[0].operands[0].where["cell"] == "( 45 )"
    assert fp.execute("add(-45, 777)", TABLE).steps[0].operands[1].kind == "number"  # nowhere
    cells = fp.execute("table_min(net revenue, none)", TABLE).steps[0].operands
    assert [(o.kind, o.where["column"], o.value) for o in cells] == [
        ("table", "2016", 5829.0),
        ("table", "2015", 5735.0),
        ("table", "2014", 5600.0),
    ]


@pytest.mark.parametrize(
    ("program", "says"),
    [
        ("", "no operation"),
        ("sum(1, 2)", "unknown operation 'sum'"),
        ("add(1, 2), foo(3, 4)", "unknown operation 'foo'"),
        ("add(1, 2) and then", "unexpected text after step 1"),
        ("add(1)", "needs two arguments"),
        ("add(1, 2", "no closing ')'"),
        ("add(#1, 2)", "uses #1, which is not an earlier step"),
        ("add(1, 2), add(#1, 2)", "step 2 (add(#1, 2)) uses #1"),
        ("add($5, 2)", "'$5' is not a number"),
        ("add(five, 2)", "'five' is not a number"),
        ("add(const_x, 2)", "'const_x' is not a number"),
        ("table_max(#0, none)", "takes a table row name"),
        (["subtract(", "1", ")", "EOF"], "not FinQA's shape"),
        ([], "no steps"),
    ],
)
def test_bad_programs_are_one_clear_line(program: Any, says: str) -> None:
    with pytest.raises(ProgramError) as err:
        fp.parse_program(program)
    assert isinstance(err.value, UserError)
    assert says in str(err.value)
    assert "\n" not in str(err.value) and str(err.value).startswith("FinQA program: ")


def test_steps_that_cannot_run_stay_in_the_trace_with_their_reason() -> None:
    zero = fp.execute("subtract(5, 5), divide(3, #0), add(#1, 1)")
    assert zero.value is None and zero.error == "step 2: division by zero"
    assert zero.steps[2].error == "#1 has no value"
    assert zero.summary == "3 steps, fails at step 2: division by zero"
    missing = fp.execute("table_sum(gross margin, none)", TABLE)
    assert missing.error is not None and "no table row 'gross margin'" in missing.error
    assert "'net revenue'" in missing.error  # names the rows there are
    cell = fp.execute("table_sum(net income ( loss ), none)", TABLE)
    assert (
        cell.error
        == "step 1: row 'net income ( loss )', column '2015': cell '( 45 )' is not a number"
    )
    assert fp.execute("table_max(net revenue, none)").error.endswith("(no table)")  # type: ignore[union-attr]
    yes = fp.execute("greater(2, 1), add(#0, 1)")
    assert yes.steps[1].error == "#0 is 'yes', not a number"


def test_rows_and_summary_are_plain_data() -> None:
    trace = fp.execute("subtract(5829, 5735), divide(#0, 5735)", TABLE, PASSAGES)
    rows = trace.rows()
    assert json.loads(json.dumps(rows)) == rows
    assert [(r["step"], r["ref"], r["op"], r["departs"], r["error"]) for r in rows] == [
        (1, "#0", "subtract", False, None),
        (2, "#1", "divide", False, None),
    ]
    assert rows[1]["value"] == pytest.approx(94 / 5735)
    assert trace.summary == "2 steps, result 0.01639"
