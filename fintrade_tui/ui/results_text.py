"""Results screen text (no widgets): the score kinds the matrix cycles through, the agreement
table's columns, a number as the tables show it, a failure case's figures on a few lines, and
the accuracy matrix's headers for a question set's categories."""

from __future__ import annotations

from typing import Any

SCORE_KINDS = ("llm", "human", "labels")
KIND_NAMES = {"llm": "LLM-judge", "human": "human", "labels": "label"}
AGREEMENT_COLUMNS = ("n", "mae", "bias", "spearman_rho", "exact", "within_1", "qwk")
AGREEMENT_HEADERS = ("Dimension", "n", "MAE", "Bias", "ρ", "Exact", "±1", "κ (quad)")


def fmt_number(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, int):
        return str(v)
    return f"{v:.2f}"


def case_numbers(numbers: dict[str, Any]) -> str:
    """A case's figures on a few short lines."""
    parts = []
    for k, v in numbers.items():
        if isinstance(v, dict):
            v = ", ".join(
                f"{a} {fmt_number(b) if not isinstance(b, str) else b}" for a, b in v.items()
            )
        elif isinstance(v, list):
            v = "; ".join(
                " ".join(fmt_number(x) if isinstance(x, float) else str(x) for x in c.values() if x)
                if isinstance(c, dict)
                else str(c)
                for c in v
            )
        elif isinstance(v, float):
            v = fmt_number(v)
        parts.append(f"{k}: {v}")
    return "\n".join(parts)


def matrix_headers(columns: list[str]) -> list[str]:
    """The accuracy matrix's headers for the table's category columns."""
    return ["Model", "Condition", *("Overall" if c == "overall" else c for c in columns), "n"]
