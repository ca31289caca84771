"""FinQA-program room, arithmetic in prose: "2.4 - 1.9 = 0.5" read as FinQA program steps.

A calculation counts when it is written as an expression followed by "=" (or "≈") and, usually,
its result: "(3.2 / 2.9 - 1) * 100 = 10.3%", "Change = $5,829 - $5,735 = $94 million". The
expression may use + - * / × ÷ ^ (or **), brackets, a leading minus, "$", "%", commas in
thousands and a scale word after a figure (dropped: FinQA's figures are in the table's units).
Words end an expression, so "Change =" is a label, not a term. Each operator becomes one step
(innermost first, left to right); a figure equal to an earlier step's result as written
("0.5 / 1.9" after "2.4 - 1.9 = 0.5") becomes that step ("#0"); 1, -1, 100, 1000, 1e6 and 1e9
become FinQA's constants ("const_100"), and 2..10 do when they stand in neither the table nor
a passage.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fintrade_tui.scoring.figures import figures
from fintrade_tui.scoring.finqa.dsl import Step, str_to_num
from fintrade_tui.scoring.finqa.trace import constant_name, holds

_TOKEN = re.compile(
    r"""(?P<num>\\?\$?\s?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:\s?%)?
          (?:\s?(?:thousand|million|billion|trillion|bn|mn|m|k)\b)?)
      |(?P<op>\*\*|\\times|\\cdot|\\div|[-+*/^×÷−–·]|(?<=\s)x(?=\s))
      |(?P<lp>[(\[])|(?P<rp>[)\]])|(?P<eq>~=|=|≈|≃)|(?P<space>\s+)|(?P<other>.)""",
    re.X | re.I,
)
_OPS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "^": "exp"}
_SAME_OP = {"**": "^", "\\times": "*", "\\cdot": "*", "\\div": "/", "×": "*", "÷": "/"}
_SAME_OP |= {"−": "-", "–": "-", "·": "*", "x": "*"}
_SCALES = frozenset([1.0, -1.0, 100.0, 1000.0, 1e6, 1e9])


@dataclass(frozen=True)
class Literal:
    """A figure in a written expression as FinQA writes a literal: text, value, decimals."""

    text: str  # as FinQA reads it: "5,829", "10.3%", "-2"
    value: float
    decimals: int
    percent: bool


@dataclass(frozen=True)
class Node:
    """An expression tree: a figure (leaf) or an operation on two nodes; `neg` for unary minus."""

    op: str = ""  # add | subtract | multiply | divide | exp | neg | "" (a figure)
    left: Node | None = None
    right: Node | None = None
    figure: Literal | None = None


@dataclass(frozen=True)
class Written:
    """One calculation in the answer: its expression and the result it states (if any)."""

    expr: Node
    stated: Literal | None


def read_calculations(text: str) -> list[Written]:
    """Every "expression = result" in `text`, in order."""
    found: list[Written] = []
    for line in text.splitlines():
        for run in _runs(line):
            parts = _split(run, "eq")
            for i, part in enumerate(parts[:-1]):  # an expression needs an "=" after it
                if not any(k == "op" for k, _ in part[1:]):
                    continue
                expr = _Parser(part).parse()
                if expr is None or _is_figure(expr):
                    continue
                after = parts[i + 1]
                stated = _figure(after[0][1]) if len(after) == 1 and after[0][0] == "num" else None
                found.append(Written(expr, stated))
    return found


def _is_figure(node: Node) -> bool:
    """A figure, or a minus before one: a number, no calculation."""
    if node.figure is not None:
        return True
    return node.op == "neg" and node.left is not None and _is_figure(node.left)


def _runs(line: str) -> list[list[tuple[str, str]]]:
    """The line's tokens, cut at words and other characters into runs of arithmetic."""
    runs: list[list[tuple[str, str]]] = [[]]
    for m in _TOKEN.finditer(line):
        kind = m.lastgroup or "other"
        if kind == "space":
            continue
        if kind == "other":
            runs.append([])
            continue
        tok = m.group(0).strip()
        if kind == "op":
            tok = _SAME_OP.get(tok.lower(), tok)
        runs[-1].append((kind, tok))
    return [r for r in runs if r]


def _split(run: list[tuple[str, str]], kind: str) -> list[list[tuple[str, str]]]:
    parts: list[list[tuple[str, str]]] = [[]]
    for tok in run:
        if tok[0] == kind:
            parts.append([])
        else:
            parts[-1].append(tok)
    return parts


def _figure(token: str) -> Literal | None:
    """The token's figure (read by the one figures reader) as a FinQA literal: its digits,
    sign and "%", the scale word dropped (FinQA's figures are in the table's units)."""
    found = figures(token.replace("\\$", "$"))
    if not found:
        return None
    fig = found[0]
    digits = re.search(r"\d[\d,]*(?:\.\d+)?|\.\d+", fig.text)
    if digits is None:
        return None
    percent = fig.unit == "%"
    text = ("-" if fig.number < 0 else "") + digits.group(0) + ("%" if percent else "")
    value = str_to_num(text)
    return None if value is None else Literal(text, value, fig.decimals, percent)


class _Parser:
    """Recursive descent: expr := term (+|- term)*; term := power (*|/ power)*;
    power := unary (^ power)?; unary := - unary | figure | ( expr )."""

    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.toks, self.i = tokens, 0

    def parse(self) -> Node | None:
        node = self._expr()
        return node if node is not None and self.i == len(self.toks) else None

    def _peek(self, kind: str, *values: str) -> bool:
        if self.i >= len(self.toks):
            return False
        k, v = self.toks[self.i]
        return k == kind and (not values or v in values)

    def _binary(self, ops: tuple[str, ...], lower: Callable[[], Node | None]) -> Node | None:
        left = lower()
        while left is not None and self._peek("op", *ops):
            op = _OPS[self.toks[self.i][1]]
            self.i += 1
            right = lower()
            if right is None:
                return None
            left = Node(op, left, right)
        return left

    def _expr(self) -> Node | None:
        return self._binary(("+", "-"), self._term)

    def _term(self) -> Node | None:
        return self._binary(("*", "/"), self._power)

    def _power(self) -> Node | None:
        base = self._unary()
        if base is not None and self._peek("op", "^"):
            self.i += 1
            exponent = self._power()
            return Node("exp", base, exponent) if exponent is not None else None
        return base

    def _unary(self) -> Node | None:
        if self._peek("op", "-"):
            self.i += 1
            inner = self._unary()
            return Node("neg", inner) if inner is not None else None
        if self._peek("num"):
            fig = _figure(self.toks[self.i][1])
            self.i += 1
            return Node(figure=fig) if fig else None
        if self._peek("lp"):
            self.i += 1
            inner = self._expr()
            if inner is None or not self._peek("rp"):
                return None
            self.i += 1
            return inner
        return None


def build_steps(
    calcs: list[Written],
    table: Sequence[Sequence[str]] = (),
    passages: Sequence[str] = (),
) -> tuple[list[Step], dict[int, Literal]]:
    """The calculations as one FinQA program, and the stated result of each calculation's step."""
    steps: list[Step] = []
    values: list[float | None] = []
    stated: dict[int, Literal] = {}
    rows = [[str(c) for c in r] for r in table]
    texts = [str(p) for p in passages]

    def emit(node: Node) -> tuple[str, float | None]:
        if node.figure is not None:
            return _leaf(node.figure, steps, values, stated, rows, texts)
        assert node.left is not None
        a, va = emit(node.left)
        if node.op == "neg":
            if a.startswith("#") or a.startswith("const_"):
                return _push(steps, values, Step("multiply", (a, "const_m1")), va, -1.0)
            return (a[1:] if a.startswith("-") else "-" + a), (None if va is None else -va)
        assert node.right is not None
        b, vb = emit(node.right)
        return _push(steps, values, Step(node.op, (a, b)), va, vb)

    for calc in calcs:
        before = len(steps)
        emit(calc.expr)
        if calc.stated is not None and len(steps) > before:
            stated[len(steps) - 1] = calc.stated
    return steps, stated


def _push(
    steps: list[Step], values: list[float | None], step: Step, a: float | None, b: float | None
) -> tuple[str, float | None]:
    value = None
    if a is not None and b is not None:
        try:
            value = {"add": a + b, "subtract": a - b, "multiply": a * b}.get(step.op)
            if step.op == "divide":
                value = a / b
            elif step.op == "exp":
                value = float(a**b)
        except (ZeroDivisionError, OverflowError, TypeError):
            value = None
    steps.append(step)
    values.append(value)
    return f"#{len(steps) - 1}", value


def _leaf(
    fig: Literal,
    steps: list[Step],
    values: list[float | None],
    stated: dict[int, Literal],
    rows: list[list[str]],
    texts: list[str],
) -> tuple[str, float]:
    """A figure: an earlier step's result as written, a FinQA constant, or the literal."""
    for k in range(len(steps) - 1, -1, -1):
        said, value = stated.get(k), values[k]
        if value is None:
            continue  # agrees with nothing
        if said is not None and said.value == fig.value and agrees(value, said):
            return f"#{k}", value
        if said is None and (fig.decimals or abs(fig.value) >= 10) and agrees(value, fig):
            return f"#{k}", value
    in_sources = any(holds(c, fig.value) for r in rows for c in r) or any(
        holds(t, fig.value) for t in texts
    )
    scale = fig.value in _SCALES  # x100, -1 and the like: a constant wherever else it stands
    const = None if fig.percent or (in_sources and not scale) else constant_name(fig.value)
    return (const or fig.text), fig.value


def agrees(value: float | None, fig: Literal) -> bool:
    """Is `value` the figure as written, rounded or cut to its last digit? A percentage is
    compared as written ("10.3%": 0.1034 and 10.34 both agree)."""
    if value is None:
        return False
    written = fig.value * 100 if fig.percent else fig.value
    candidates = (value * 100, value) if fig.percent else (value,)
    scale = 10.0**fig.decimals
    for v in candidates:
        if abs(v - written) <= 0.5 / scale + 1e-9 * max(1.0, abs(v)):
            return True
        if abs(math.trunc(v * scale) / scale - written) <= 1e-9 * max(1.0, abs(v)):
            return True
    return False
