"""FinQA-program room: program traces. A FinQA-style program — the reference's, one a model
wrote in FinQA's DSL, or arithmetic steps written in prose — runs step by step with its operands
linked to table cells and passages; the first step that leaves the reference's path is marked;
programs are compared symbolically (sympy); execution and program accuracy per condition.

The language is in finqa_program_dsl.py, the run and its `Trace` in finqa_program_trace.py,
prose arithmetic in finqa_program_prose.py; this module is what callers import.

Rules decided here (docs/judging.md, "Program traces"):
- Two step values agree when equal at FinQA's 5 places, or within `REL_TOL` (0.5%: an answer's
  written intermediates are rounded), or one is the other x100 (a percentage and its fraction).
- `first_departure`: an answer that ends on the reference's result departs nowhere (None).
  Otherwise it is on the reference's path through its last step whose value agrees with any of
  the reference's step values, and departs at the step after that one (its own last step when
  every step agrees but it stopped short of the result).
- `equivalent`: each program's result as a sympy expression; literals become one symbol per
  value (so "5,829" = "5829"), FinQA's constants (1..10, 100, 1000, ..., -1, and 0) stay
  numbers, a table operation is a symbol per operation and row; equal when their difference
  simplifies to 0. Looser than FinQA's `equal_program`, which compares token strings ("5,829" is
  not "5829", const_100 is not 100) and needs the same algebraic shape after `simplify`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fintrade_tui.scoring.finqa.dsl import (
    CONSTANTS,
    OPS,
    TABLE_OPS,
    ProgramError,
    Step,
    check,
    parse_program,
    program_text,
    scan_program,
    step_ref,
    str_to_num,
)
from fintrade_tui.scoring.finqa.prose import agrees, build_steps, read_calculations
from fintrade_tui.scoring.finqa.trace import Operand, StepTrace, Trace, Value, execute

__all__ = [
    "OPS",
    "Operand",
    "ProgramError",
    "Step",
    "StepTrace",
    "Trace",
    "equivalent",
    "errata_reason",
    "execute",
    "exe_ans_value",
    "finqa_equal",
    "first_departure",
    "parse_program",
    "program_accuracy",
    "program_text",
    "trace_from_answer",
    "values_agree",
]

REL_TOL = 5e-3
_DSL_AT = re.compile(r"\b(?:" + "|".join(OPS) + r")\s*\(", re.I)
_NUMBERS = frozenset([*CONSTANTS.values(), 0.0])


def trace_from_answer(
    answer_text: str,
    table_norm: Sequence[Sequence[str]] | None = None,
    passages: Sequence[str] | None = None,
) -> Trace | None:
    """The calculation an answer wrote: a program in FinQA's DSL (the last readable one), else
    its arithmetic steps ("2.4 - 1.9 = 0.5"); None when it wrote neither."""
    text = answer_text or ""
    program: list[Step] | None = None
    for m in _DSL_AT.finditer(text):
        try:
            steps, _ = scan_program(text, m.start())
            check(steps)
        except ProgramError:
            continue
        if steps:
            program = steps
    if program:
        return execute(program, table_norm, passages, source="answer_dsl")
    calcs = read_calculations(text)
    if not calcs:
        return None
    steps, stated = build_steps(calcs, table_norm or (), passages or ())
    if not steps:
        return None
    trace = execute(steps, table_norm, passages, source="answer_arithmetic")
    for k, fig in stated.items():
        step = trace.steps[k]
        step.stated = fig.text
        if isinstance(step.value, float) and not agrees(step.value, fig):
            step.note = f"written {fig.text}, computes to {_show(step.value)}"
    return trace


def values_agree(a: Value, b: Value, rel_tol: float = REL_TOL) -> bool:
    """Step values agree: equal at 5 places, within `rel_tol`, or one is the other x100."""
    if a is None or b is None:
        return False
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    for x in (a, a * 100.0, a / 100.0):
        if round(x, 5) == round(b, 5) or abs(x - b) <= rel_tol * max(abs(x), abs(b)):
            return True
    return False


def first_departure(
    trace: Trace | None, reference_trace: Trace | None, rel_tol: float = REL_TOL
) -> int | None:
    """0-based index of the first step of `trace` leaving the reference's path (rule: module
    docstring), or None. Also marks `trace` (its rows' `departs` and its `summary`)."""
    if trace is None or reference_trace is None or not trace.steps:
        return None
    ref_values = [s.value for s in reference_trace.steps]
    known = [v for v in ref_values if v is not None]
    if not known or ref_values[-1] is None:
        return None  # the reference itself did not run: nothing to depart from
    trace.reference_values = ref_values
    own = [s.value for s in trace.steps]
    if values_agree(own[-1], ref_values[-1], rel_tol):
        trace.departs_at = None
        return None
    on_path = [any(values_agree(v, r, rel_tol) for r in known) for v in own]
    last = max((i for i, ok in enumerate(on_path) if ok), default=-1)
    trace.departs_at = min(last + 1, len(own) - 1)
    return trace.departs_at


def equivalent(
    program_a: str | Sequence[str] | Sequence[Step] | Trace,
    program_b: str | Sequence[str] | Sequence[Step] | Trace,
    *,
    allow_percent: bool = False,
) -> bool:
    """Do two programs compute the same expression? (rule: module docstring). `allow_percent`:
    one may be the other x100 (an answer that turned the fraction into a percentage)."""
    try:
        a, b = _steps(program_a), _steps(program_b)
    except ProgramError:
        return False
    symbols: dict[Any, Any] = {}
    ea, eb = _expression(a, symbols), _expression(b, symbols)
    targets = [eb, 100 * eb, eb / 100] if allow_percent else [eb]
    return any(_same_expression(ea, t, list(symbols.values())) for t in targets)


def _steps(program: str | Sequence[str] | Sequence[Step] | Trace) -> list[Step]:
    return program.program if isinstance(program, Trace) else parse_program(program)


def _expression(steps: list[Step], symbols: dict[Any, Any]) -> Any:
    import sympy  # heavy: only when programs are compared

    def atom(arg: str) -> Any:
        value = str_to_num(arg)
        assert value is not None  # parse_program checked every literal
        if value in _NUMBERS:
            return sympy.Integer(int(value))
        key = ("n", value)
        if key not in symbols:
            symbols[key] = sympy.Symbol(f"x{len(symbols)}")
        return symbols[key]

    done: list[Any] = []
    for s in steps:
        if s.op in TABLE_OPS:
            key = (s.op, " ".join(s.args[0].casefold().split()))
            if key not in symbols:
                symbols[key] = sympy.Symbol(f"x{len(symbols)}")
            done.append(symbols[key])
            continue
        x, y = (done[r] if (r := step_ref(arg)) is not None else atom(arg) for arg in s.args)
        if s.op == "greater":
            done.append(sympy.Function("greater")(x, y))
        else:
            ops = {"add": x + y, "subtract": x - y, "multiply": x * y}
            done.append(ops.get(s.op) if s.op in ops else (x / y if s.op == "divide" else x**y))
    return done[-1]


def _same_expression(a: Any, b: Any, syms: list[Any]) -> bool:
    import sympy

    rng = random.Random(31)  # a quick numeric test first: most unequal pairs stop here
    for _ in range(2):
        point = {s: sympy.Rational(rng.randint(2, 97), rng.randint(2, 97)) for s in syms}
        try:
            da, db = complex(a.subs(point).evalf()), complex(b.subs(point).evalf())
        except (TypeError, ValueError, ZeroDivisionError):
            break  # greater(...) or a zero denominator: leave it to simplify
        if abs(da - db) > 1e-9 * max(1.0, abs(da), abs(db)):
            return False
    return bool(sympy.simplify(a - b) == 0)


def exe_ans_value(exe_ans: Any) -> Value:
    """FinQA's published `exe_ans` as a value: a number, "yes"/"no", or None."""
    if isinstance(exe_ans, bool):
        return None
    if isinstance(exe_ans, int | float):
        return float(exe_ans)
    if isinstance(exe_ans, str):
        text = exe_ans.strip().lower()
        return text if text in ("yes", "no") else str_to_num(text)
    return None


def finqa_equal(value: Value, exe_ans: Any) -> bool:
    """FinQA's execution-accuracy test: the result rounded to 5 places equals `exe_ans`."""
    gold = exe_ans_value(exe_ans)
    if value is None or gold is None:
        return False
    if isinstance(value, str) or isinstance(gold, str):
        return value == gold
    return round(value, 5) == gold


def program_accuracy(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per condition: n, execution accuracy and program accuracy, as FinQA reports them.

    Each row: condition, answer, program (the reference's; or reference_program), exe_ans,
    table_norm, passages. Execution: the calculation the answer wrote (DSL or arithmetic) runs
    to `exe_ans` by FinQA's
    test (its result may be the percentage: x100); an answer without one is scored by its
    figure under the `finqa` mode. Program: the
    answer's calculation (DSL or arithmetic steps) is `equivalent` to the reference program,
    a percentage x100 allowed; an answer with no calculation counts as wrong for both.
    """
    from fintrade_tui.scoring.answer_match import match
    from fintrade_tui.scoring.verdict import EQUAL

    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        cond = str(row.get("condition") or "")
        table, passages = row.get("table_norm"), row.get("passages")
        answer = str(row.get("answer") or "")
        reference = row.get("program") or row.get("reference_program")
        try:
            trace = trace_from_answer(answer, table, passages)
        except ProgramError:
            trace = None
        if trace is not None and not trace.error:
            value = trace.value
            exe_ok = finqa_equal(value, row.get("exe_ans")) or (
                isinstance(value, float) and finqa_equal(value / 100.0, row.get("exe_ans"))
            )
        else:
            gold = exe_ans_value(row.get("exe_ans"))
            exe_ok = gold is not None and match(answer, gold, "finqa").verdict == EQUAL
        prog_ok = bool(
            trace is not None
            and reference
            and not trace.error
            and equivalent(trace, reference, allow_percent=True)
        )
        agg = out.setdefault(cond, {"n": 0, "exe": 0, "prog": 0})
        agg["n"] += 1
        agg["exe"] += exe_ok
        agg["prog"] += prog_ok
    return {
        cond: {
            "n": a["n"],
            "execution_accuracy": a["exe"] / a["n"],
            "program_accuracy": a["prog"] / a["n"],
        }
        for cond, a in out.items()
    }


def _show(value: Value) -> str:
    from fintrade_tui.scoring.finqa.trace import show

    return show(value)


def errata_reason(trace: Trace, exe_ans: Any) -> str:
    """Why a reference program does not give its published `exe_ans` (for the errata list)."""
    if trace.error:
        return f"does not run: {trace.error}"
    got, gold = trace.value, exe_ans_value(exe_ans)
    if gold is None:
        return f"exe_ans {exe_ans!r} is no number"
    if isinstance(got, str) or isinstance(gold, str):
        return f"gives {got}, exe_ans {gold}"
    assert isinstance(got, float)
    if gold and abs(got * 100 - gold) <= 1e-4 * abs(gold):
        return f"gives {_show(got)}, exe_ans {_show(gold)} is it x100"
    if got and abs(gold * 100 - got) <= 1e-4 * abs(got):
        return f"gives {_show(got)}, exe_ans {_show(gold)} is it /100"
    if abs(got + gold) <= 1e-5 * max(1.0, abs(gold)):
        return f"gives {_show(got)}, exe_ans {_show(gold)}: opposite sign"
    for places in range(4, -1, -1):
        if round(got, places) == round(gold, places):
            return f"gives {_show(got)}, exe_ans {_show(gold)}: equal at {places} places"
    return f"gives {_show(got)}, exe_ans {_show(gold)}"
