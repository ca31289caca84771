"""Markdown-parts room: how the exports write a value, a table cell, a table and a quoted text
in Markdown — shared by the case study, the question view and the HTML report's values."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

DASH = "—"


def fmt_value(v: Any, digits: int = 4) -> str:
    """A value as the case study and the HTML report write it: None as a dash, booleans as
    yes/no, big numbers with separators, floats to `digits` significant digits, ISO dates."""
    if v is None:
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1e6 else f"{v:.{digits}g}"
    if isinstance(v, datetime):
        return v.isoformat(sep=" ", timespec="seconds")
    if isinstance(v, date):
        return v.isoformat()
    return str(v)


def markdown_cell(v: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    text = v if isinstance(v, str) else fmt_value(v)
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip() or DASH


def markdown_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table's lines (header, rule, one line per row), then a blank line."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(markdown_cell(v) for v in r) + " |" for r in rows]
    return [*lines, ""]


def quote_lines(text: str | None) -> list[str]:
    """A text as a Markdown block quote's lines (`_(empty)_` for none), then a blank line."""
    if not text or not text.strip():
        return ["_(empty)_", ""]
    return [f"> {line}".rstrip() for line in text.strip().splitlines()] + [""]
