"""FinQA-program room, the language: FinQA's reasoning-program DSL read into steps.

FinQA (czyssrs/FinQA, code/evaluate/evaluate.py) writes a calculation as steps
"subtract(5829, 5735), divide(#0, 5735)": ten operations (`OPS`), two arguments each, `#n` the
value of step n (counted from 0), `const_*` a constant (`const_100`, `const_m1` = -1), a literal
read by FinQA's `str_to_num` (commas dropped, "20%" = 0.2; "$5" is no number), and, for the four
table_* operations, a row name of the question's normalised table (the second argument, "none",
is ignored as FinQA ignores it). The nested form of FinQA's `program_re`
("divide(subtract(5829, 5735), 5735)") and FinQA's token lists (["subtract(", "5829", "5735",
")", "EOF"]) read to the same steps. Bad text is a `ProgramError`: one line, no traceback.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from fintrade_tui.errors import UserError

ARITH_OPS = ("add", "subtract", "multiply", "divide", "exp", "greater")
TABLE_OPS = ("table_max", "table_min", "table_sum", "table_average")
OPS = ARITH_OPS + TABLE_OPS
# FinQA's constant list (code/generator/constant_list.txt), lower-cased as programs write them
CONSTANTS = {f"const_{n}": float(n) for n in (*range(1, 11), 100, 1000, 10**4, 10**5, 10**6)}
CONSTANTS |= {"const_10000000": 1e7, "const_1000000000": 1e9, "const_m1": -1.0}
SHOWN = 60  # characters of bad text quoted in an error


class ProgramError(UserError):
    """A program that cannot be read or run: one line naming the step and the fix."""

    def __init__(self, problem: str, fix: str = "") -> None:
        super().__init__("FinQA program", problem, fix)


@dataclass(frozen=True)
class Step:
    """One operation and its two arguments as written ("#0", "const_100", "5,829", a row name)."""

    op: str
    args: tuple[str, str]

    @property
    def text(self) -> str:
        return f"{self.op}({self.args[0]}, {self.args[1]})"


def str_to_num(text: str) -> float | None:
    """FinQA's `str_to_num`: commas dropped, "n%" / 100, const_* by name; None when unreadable.

    A named emulation of FinQA's own evaluation rule (czyssrs/FinQA code/evaluate/evaluate.py),
    not a figures reader: it reads a program's literals and says whether FinQA's script could
    read an answer's figure (answer_match.py's finqa mode). Every other reading of numbers in
    text goes through the figures reader (scoring/figures.py). Non-finite values ("nan", "inf",
    which Python's float() would take) are no numbers here.
    """
    text = text.replace(",", "").strip()
    try:
        num = float(text)
    except ValueError:
        if "%" in text:
            try:
                num = float(text.replace("%", "")) / 100.0
            except ValueError:
                return None
        elif text.lower().startswith("const_"):
            name = text.lower()
            if name == "const_m1":
                return -1.0
            try:
                num = float(name.removeprefix("const_"))
            except ValueError:
                return None
        else:
            return None
    return num if math.isfinite(num) else None


def cell_number(cell: str) -> float | None:
    """FinQA's `process_row` reading of one table cell: "$" dropped, text from "(" on dropped."""
    return str_to_num(cell.replace("$", "").strip().split("(")[0].strip())


def step_ref(arg: str) -> int | None:
    """n for "#n", else None."""
    m = re.fullmatch(r"\s*#\s*(\d+)\s*", arg)
    return int(m.group(1)) if m else None


def is_const(arg: str) -> bool:
    return arg.strip().lower().startswith("const_")


_CALL = re.compile(r"\s*([A-Za-z_]\w*)\s*\(")
_BETWEEN = re.compile(r"\s*[,;]?\s*")
_THOUSANDS = re.compile(r"\d,\d{3}(?!\d)")


def parse_program(program: str | Sequence[str] | Sequence[Step]) -> list[Step]:
    """Steps of a FinQA program: text, FinQA's token list, or steps (checked and returned)."""
    if isinstance(program, str):
        steps, end = scan_program(program, 0, strict=True)
        rest = program[end:].strip()
        if not steps:
            raise ProgramError(
                f"no operation in '{_quote(program)}'",
                f"write steps like subtract(5829, 5735), divide(#0, 5735); operations: {_ops()}",
            )
        if rest:
            raise ProgramError(
                f"unexpected text after step {len(steps)}: '{_quote(rest)}'",
                "separate steps with ', ' and close every '('",
            )
    elif all(isinstance(s, Step) for s in program):
        steps = [s for s in program if isinstance(s, Step)]  # all of them: checked above
    else:
        steps = parse_program(_untokenize([str(t) for t in program]))
    if not steps:
        raise ProgramError("the program has no steps", "write at least one operation")
    check(steps)
    return steps


def scan_program(text: str, pos: int, strict: bool = False) -> tuple[list[Step], int]:
    """The steps written from `pos` on, and where they stop (at the first non-step text).

    Nested calls are flattened: their steps come first and the argument becomes "#k". `strict`:
    a call of an unknown name is an error (else the steps stop before it, as in prose).
    """
    steps: list[Step] = []
    at = pos
    while True:
        m = _CALL.match(text, at)
        if not m or (m.group(1).lower() not in OPS and not strict):
            return steps, pos
        pos = _call(text, m, steps)
        at = _BETWEEN.match(text, pos).end()  # type: ignore[union-attr]  # all-optional: matches


def _call(text: str, m: re.Match[str], steps: list[Step]) -> int:
    """Read one call starting at match `m` into `steps`; return the index after its ')'."""
    op = m.group(1).lower()
    if op not in OPS:
        raise ProgramError(f"unknown operation '{m.group(1)}'", f"FinQA's operations: {_ops()}")
    start = m.end()
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        i += 1
    else:
        raise ProgramError(f"'{_quote(text[m.start() :])}' has no closing ')'", "close the step")
    args = _split_args(op, text[start:i])
    steps.append(Step(op, tuple(_flatten(a, steps) for a in args)))  # type: ignore[arg-type]
    return i + 1


def _split_args(op: str, body: str) -> tuple[str, str]:
    """Two arguments, split at a comma outside brackets that is no thousands separator ("5,829");
    a table row name may hold commas: its operation splits at the last one."""
    depth, cuts = 0, []
    for i, ch in enumerate(body):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0 and not _THOUSANDS.match(body, i - 1):
            cuts.append(i)
    if not cuts and op in TABLE_OPS and body.strip():
        return body.strip(), "none"  # a row name alone: FinQA's second argument is unused
    if not cuts or (len(cuts) > 1 and op not in TABLE_OPS):
        raise ProgramError(f"{op}({_quote(body)}) needs two arguments", f"write {op}(a, b)")
    first, second = body[: cuts[-1]].strip(), body[cuts[-1] + 1 :].strip()
    if not first or not second:
        raise ProgramError(f"{op}({_quote(body)}) has an empty argument", f"write {op}(a, b)")
    return first, second


def _flatten(arg: str, steps: list[Step]) -> str:
    """A nested call becomes its own step(s), the argument "#k"; anything else stays."""
    m = _CALL.match(arg)
    if m and m.group(1).lower() in OPS and arg.endswith(")"):
        end = _call(arg, m, steps)
        if end == len(arg):
            return f"#{len(steps) - 1}"
        raise ProgramError(f"unexpected text in argument '{_quote(arg)}'", "one call per argument")
    return arg


def _untokenize(tokens: list[str]) -> str:
    """FinQA's token list (op token "name(", two arguments, ")", ..., "EOF") back to text."""
    if tokens and tokens[-1] == "EOF":
        tokens = tokens[:-1]
    if len(tokens) % 4 or any(
        not tokens[i].endswith("(") or tokens[i + 3] != ")" for i in range(0, len(tokens), 4)
    ):
        raise ProgramError(
            f"token list {_quote(' '.join(tokens))} is not FinQA's shape",
            'groups of four: "op(", first argument, second argument, ")"; "EOF" last',
        )
    return ", ".join(
        f"{tokens[i]}{tokens[i + 1]}, {tokens[i + 2]})" for i in range(0, len(tokens), 4)
    )


def check(steps: list[Step]) -> None:
    """Every argument readable and every #n an earlier step; else a ProgramError naming it."""
    for n, step in enumerate(steps):
        if step.op not in OPS:
            raise ProgramError(f"step {n + 1}: unknown operation '{step.op}'", f"use {_ops()}")
        if step.op in TABLE_OPS:
            if step_ref(step.args[0]) is not None:
                raise ProgramError(
                    f"step {n + 1}: {step.op} takes a table row name, not {step.args[0]}",
                    "name the row as the table writes it",
                )
            continue
        for arg in step.args:
            ref = step_ref(arg)
            if ref is not None and ref >= n:
                raise ProgramError(
                    f"step {n + 1} ({step.text}) uses #{ref}, which is not an earlier step",
                    f"#0..#{n - 1} are the earlier steps" if n else "the first step has no #n",
                )
            if ref is None and str_to_num(arg) is None:
                raise ProgramError(
                    f"step {n + 1} ({_quote(step.text)}): '{_quote(arg)}' is not a number",
                    'write plain numbers ("5829", "5,829", "20%"), const_100 or #n',
                )


def program_text(steps: Sequence[Step]) -> str:
    """FinQA's written form: "subtract(5829, 5735), divide(#0, 5735)"."""
    return ", ".join(s.text for s in steps)


def _ops() -> str:
    return ", ".join(OPS)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
