"""Suspects room: benchmark references that look wrong, found without being told — each with
the rule that fired and one line why. Deterministic, no model.

From the question alone (`question_suspects`):
- `program_result`: a FinQA / ConvFinQA reference program that does not execute to its own
  published answer (`exe_ans`);
- `average_count`: an average whose divisor is not the count of what it averages — the figures
  its program adds up, or the years "from Y1 to Y2" the question names (FinQA's published
  erratum ANSS/2008/page_89.pdf-1 divides five years' payments by 4);
- `table_sign`: a TAT-QA difference whose table states the same change with the other sign in
  the operands' row (TAT-QA's erratum c91ad938-...: ROFE 15.2 − 17.1 published as +1.9 beside
  the table's "(190) bps").
From the workspace's runs and scores: reports/suspects.py.
"""

from __future__ import annotations

import re
from typing import Any

from fintrade_tui.scoring.figure import Figure
from fintrade_tui.scoring.figures import figures

REL = 0.01  # two figures "agree" within 1%
_YEARS = re.compile(
    r"\b(?:from|between)\s+((?:19|20)\d\d)\s+(?:to|and|through|-)\s+((?:19|20)\d\d)\b"
)
_DIFF = re.compile(r"^\s*(\(?-?[\d.,]+\)?)\s*-\s*(\(?-?[\d.,]+\)?)\s*$")


def close(a: float, b: float, rel: float = REL) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def question_suspects(q: Any) -> list[dict[str, str]]:
    """The rules a question's own data fires: [{"rule", "why"}]."""
    extra = getattr(q, "extra", None) or {}
    out = []
    if extra.get("program"):
        out += _program_rules(q, extra)
    if extra.get("answer_type") == "arithmetic" and extra.get("derivation"):
        out += _table_sign(q, extra)
    return out


def _program_rules(q: Any, extra: dict[str, Any]) -> list[dict[str, str]]:
    from fintrade_tui.scoring.finqa.dsl import CONSTANTS, str_to_num
    from fintrade_tui.scoring.finqa.trace import execute

    out: list[dict[str, str]] = []
    try:
        trace = execute(extra["program"], extra.get("table_norm"), extra.get("passages"))
    except Exception:  # an unreadable program: nothing to say about its result
        return out
    published = extra.get("exe_ans")
    value = trace.value
    if (
        isinstance(published, int | float)
        and isinstance(value, int | float)
        and not close(float(value), float(published))
    ):
        why = f"the reference program computes {value:g}, the published answer is"
        out.append({"rule": "program_result", "why": f"{why} {published:g}"})
    last = trace.steps[-1] if trace.steps else None
    if last is None or last.op != "divide" or "average" not in (q.text or "").lower():
        return out
    divisor = CONSTANTS.get(last.args[1], None) or str_to_num(last.args[1])
    if not divisor:
        return out
    summed = _added(trace.steps, last.args[0])
    if summed and summed != divisor:
        why = f"the average adds {summed} figures and divides by {divisor:g}"
        out.append({"rule": "average_count", "why": why})
    elif years := _YEARS.search(q.text or ""):
        span = int(years.group(2)) - int(years.group(1)) + 1
        if span > 1 and span != divisor:
            why = f"an average from {years.group(1)} to {years.group(2)} ({span} years)"
            out.append({"rule": "average_count", "why": f"{why} divided by {divisor:g}"})
    return out


def _added(steps: list[Any], arg: str) -> int:
    """How many figures a chain of `add` steps ending at `arg` ("#n") sums (0: not a sum)."""
    if not arg.startswith("#"):
        return 0
    step = steps[int(arg[1:])]
    if step.op != "add":
        return 0
    return sum(_added(steps, a) or 1 for a in step.args)


def _table_sign(q: Any, extra: dict[str, Any]) -> list[dict[str, str]]:
    """The same magnitude exactly (a near one is another figure: 6,298 beside -6,290)."""
    m = _DIFF.match(str(extra["derivation"]))
    answer = extra.get("answer")
    if not m or not isinstance(answer, int | float) or not answer:
        return []
    unit = "%" if extra.get("scale") == "percent" else ""
    found: list[Figure | None] = [*figures(f"{answer}{unit}")]
    (mine,) = found or [None]
    operands = {m.group(1).strip(), m.group(2).strip()}
    for row in extra.get("table_rows") or []:
        cells = [str(c).strip() for c in row]
        if not operands <= set(cells) or mine is None:
            continue
        for cell in cells:
            for f in figures(cell):
                if (
                    f.kind == mine.kind
                    and f.value * mine.value < 0
                    and close(f.value, -mine.value, 1e-6)
                ):
                    label = next((c for c in cells if c), "")
                    why = f"the table's row '{label}' states {cell}, the reference {answer:g}{unit}"
                    return [{"rule": "table_sign", "why": f"{why}: the other sign"}]
    return []
