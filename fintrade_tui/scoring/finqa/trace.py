"""FinQA-program room, the run: a program executed step by step into a `Trace` a UI can draw.

Every step keeps its value (unrounded; FinQA rounds only the final result, to 5 places) and its
operands with where each comes from: a table cell (row, column, row label, column header, the
cell text), a passage (FinQA's text_N: the index in pre_text + post_text, and the sentence), a
constant, or an earlier step. A literal is linked by value: the cell or sentence holding a
figure equal to it as the figures reader (scoring/figures.py) reads a source ("5,829", "$ 5829",
"( 5829 )" for 5829 and -5829, "20%" for 0.2 and for 20, "$1.2 billion" for 1.2 and 1.2e9);
body cells first, then passages, then the table's header and label cells.
Table operations look the row up as FinQA does (the last row of that name; failing an exact
match, one equal ignoring case and spacing) and read every cell of it with FinQA's
`process_row`. A step that cannot run (a missing row, a cell that is no number, a division by
zero) is recorded in the trace with its reason; the steps after it that use it fail too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fintrade_tui.scoring.figure import fmt
from fintrade_tui.scoring.figures import figures
from fintrade_tui.scoring.finqa.dsl import (
    CONSTANTS,
    TABLE_OPS,
    Step,
    cell_number,
    is_const,
    parse_program,
    program_text,
    step_ref,
    str_to_num,
)

Value = float | str | None  # a number, FinQA's "yes"/"no" (greater), or None when it failed
SENTENCE_SHOWN = 160


@dataclass
class Operand:
    """One argument of a step: as written, its value, what kind it is and where it comes from."""

    text: str
    value: Value
    kind: str  # table | passage | const | step | number (a literal found nowhere) | row
    where: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "value": self.value, "kind": self.kind, "where": self.where}


@dataclass
class StepTrace:
    """One executed step."""

    index: int  # 0-based: the n of "#n"
    op: str
    args: tuple[str, str]
    operands: list[Operand]
    value: Value
    error: str | None = None
    stated: str | None = None  # the result the answer wrote for it ("= 0.5"), if any
    note: str | None = None  # e.g. "written 0.6, computes to 0.5"


@dataclass
class Trace:
    """A program's execution. `first_departure` marks `departs_at` against a reference."""

    steps: list[StepTrace]
    program: list[Step]
    source: str = "program"  # program | answer_dsl | answer_arithmetic
    departs_at: int | None = None  # 0-based index of the first departing step
    reference_values: list[Value] | None = field(default=None, repr=False)

    @property
    def program_text(self) -> str:
        return program_text(self.program)

    @property
    def error(self) -> str | None:
        """The first step's failure, "step k: reason", or None."""
        bad = next((s for s in self.steps if s.error), None)
        return f"step {bad.index + 1}: {bad.error}" if bad else None

    @property
    def value(self) -> Value:
        """FinQA's execution result: the last step's value rounded to 5 places (None: failed)."""
        if self.error or not self.steps:
            return None
        last = self.steps[-1].value
        return round(last, 5) if isinstance(last, float) else last

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per step, for tables and exports (values unrounded; step is 1-based)."""
        return [
            {
                "step": s.index + 1,
                "ref": f"#{s.index}",
                "op": s.op,
                "operands": [o.to_dict() for o in s.operands],
                "value": s.value,
                "departs": self.departs_at == s.index,
                "error": s.error,
                "stated": s.stated,
                "note": s.note,
            }
            for s in self.steps
        ]

    @property
    def summary(self) -> str:
        """One line: "3 steps, departs at step 2: 1.02 vs reference 0.98"."""
        n = len(self.steps)
        head = f"{n} step{'s' if n != 1 else ''}"
        if self.error:
            return f"{head}, fails at {self.error}"
        if self.departs_at is not None:
            s = self.steps[self.departs_at]
            ref = self.reference_values or []
            theirs = ref[min(s.index, len(ref) - 1)] if ref else None
            vs = f" vs reference {show(theirs)}" if theirs is not None else ""
            return f"{head}, departs at step {s.index + 1}: {show(s.value)}{vs}"
        if self.reference_values is not None:
            return f"{head}, agrees with the reference: {show(self.value)}"
        return f"{head}, result {show(self.value)}"


def show(value: Value) -> str:
    """A step value as people read it (5 significant places after the point at most)."""
    if isinstance(value, float):
        return fmt(round(value, 5)) if abs(value) >= 1e-4 or value == 0 else f"{value:.3g}"
    return "n/a" if value is None else str(value)


def execute(
    program: str | Sequence[str] | Sequence[Step],
    table_norm: Sequence[Sequence[str]] | None = None,
    passages: Sequence[str] | None = None,
    source: str = "program",
) -> Trace:
    """Run a FinQA program over the question's normalised table and passages.

    Unreadable program text raises `ProgramError` (one line); a step that cannot run is kept in
    the trace with its error (the trace's `value` is then None).
    """
    steps = parse_program(program)
    table = [[str(c) for c in row] for row in (table_norm or [])]
    texts = [str(p) for p in (passages or [])]
    done: list[StepTrace] = []
    for n, step in enumerate(steps):
        if step.op in TABLE_OPS:
            done.append(_table_step(n, step, table))
        else:
            operands = [_operand(a, done, table, texts) for a in step.args]
            value, error = _apply(step.op, operands)
            done.append(StepTrace(n, step.op, step.args, operands, value, error))
    return Trace(done, steps, source)


def _operand(arg: str, done: list[StepTrace], table: list[list[str]], texts: list[str]) -> Operand:
    ref = step_ref(arg)
    if ref is not None:
        return Operand(arg, done[ref].value, "step", {"step": ref, "label": f"step {ref + 1}"})
    value = str_to_num(arg)
    if is_const(arg):
        return Operand(arg, value, "const", {"label": f"constant {show(value)}"})
    where = link(value, table, texts) if value is not None else None
    kind = where["kind"] if where else "number"
    return Operand(arg, value, kind, where)


def _apply(op: str, operands: list[Operand]) -> tuple[Value, str | None]:
    a, b = (o.value for o in operands)
    for o in operands:
        if o.value is None:
            return None, f"{o.text} has no value"
        if isinstance(o.value, str):
            return None, f"{o.text} is '{o.value}', not a number"
    assert isinstance(a, float) and isinstance(b, float)
    try:
        if op == "add":
            return a + b, None
        if op == "subtract":
            return a - b, None
        if op == "multiply":
            return a * b, None
        if op == "divide":
            return a / b, None
        if op == "exp":
            res = a**b
            return (res, None) if isinstance(res, float) else (None, "a complex power")
        return ("yes" if a > b else "no"), None  # greater, as FinQA answers it
    except ZeroDivisionError:
        return None, "division by zero"
    except OverflowError:
        return None, "the result is too large"


def _table_step(n: int, step: Step, table: list[list[str]]) -> StepTrace:
    label = step.args[0]
    row_at = find_row(table, label)
    if row_at is None:
        names = ", ".join(f"'{r[0]}'" for r in table[:12] if r)
        why = f"no table row '{label}'" + (f" (rows: {names})" if names else " (no table)")
        return StepTrace(n, step.op, step.args, [Operand(label, None, "row")], None, why)
    operands: list[Operand] = []
    nums: list[float] = []
    for col, cell in enumerate(table[row_at][1:], start=1):
        value = cell_number(cell)
        where = cell_where(table, row_at, col)
        operands.append(Operand(cell, value, "table", where))
        if value is None:
            why = f"row '{label}', column '{where['column']}': cell '{cell}' is not a number"
            return StepTrace(n, step.op, step.args, operands, None, why)
        nums.append(float(value))
    if not nums:
        return StepTrace(n, step.op, step.args, operands, None, f"row '{label}' has no cells")
    agg: dict[str, Callable[[list[float]], float]] = {
        "table_max": max,
        "table_min": min,
        "table_sum": sum,
    }
    value = agg[step.op](nums) if step.op in agg else sum(nums) / len(nums)
    return StepTrace(n, step.op, step.args, operands, value)


def find_row(table: list[list[str]], label: str) -> int | None:
    """FinQA's row lookup (a dict of first cells: the last row of a name wins), then loosely."""
    exact = [i for i, row in enumerate(table) if row and row[0] == label]
    if exact:
        return exact[-1]
    key = _loose(label)
    loose = [i for i, row in enumerate(table) if row and _loose(row[0]) == key]
    return loose[-1] if loose else None


def _loose(text: str) -> str:
    return " ".join(text.casefold().split())


def cell_where(table: list[list[str]], row: int, col: int) -> dict[str, Any]:
    header = table[0] if table else []
    column = header[col] if col < len(header) and row > 0 else ""
    label = table[row][0] if table[row] else ""
    said = f"table row '{label}'" + (f", column '{column}'" if column else f", column {col + 1}")
    return {
        "kind": "table",
        "row": row,
        "col": col,
        "row_label": label,
        "column": column,
        "cell": table[row][col],
        "label": f"{said}: {table[row][col]}",
    }


def link(value: float, table: list[list[str]], texts: list[str]) -> dict[str, Any] | None:
    """Where a literal's value is written: a body cell, else a passage, else a header/label cell."""
    edge: list[tuple[int, int]] = []
    for r, row in enumerate(table):
        for c, cell in enumerate(row):
            if holds(cell, value):
                if r > 0 and c > 0:
                    return cell_where(table, r, c)
                edge.append((r, c))
    for i, sentence in enumerate(texts):
        if holds(sentence, value):
            shown = " ".join(sentence.split())
            if len(shown) > SENTENCE_SHOWN:
                shown = shown[: SENTENCE_SHOWN - 1] + "…"
            return {"kind": "passage", "passage": i, "sentence": sentence,
                    "label": f"text_{i}: {shown}"}  # fmt: skip
    return cell_where(table, *edge[0]) if edge else None


def holds(text: str, value: float) -> bool:
    """Does `text` write a figure equal to `value`? Each figure the figures reader finds in it,
    read as a source (a filing's sentence or table cell), holds its numeral as written, signed
    or not, and its value in base units: "( 5829 )" holds -5829 and 5829, "20%" 20 and 0.2."""
    return any(_same(c, value) for c in _written(text))


@lru_cache(maxsize=4096)
def _written(text: str) -> tuple[float, ...]:
    """The values `holds` takes each figure of `text` for (a range's two ends apart)."""
    out: list[float] = []
    for fig in figures(text, ranges=False, source=True):
        out += [fig.number, fig.value, abs(fig.number), abs(fig.value)]
    return tuple(out)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def constant_name(value: float) -> str | None:
    """FinQA's constant for a value (100.0 -> "const_100"), if there is one."""
    return next((k for k, v in CONSTANTS.items() if v == value), None)
