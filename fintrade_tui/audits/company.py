"""Company check room: is an answer about the company the question asks about? An answer that
names only other companies (a model that mixed up tickers, or an answer pasted from another
question) gets every figure "supported" by the figure audit when its numbers are right, so this
check says so separately, and the judge is told.
"""

from __future__ import annotations

from typing import Any

import duckdb

from fintrade_tui.questions.companies import CompanyIndex, table_mentions

_SAME = {"GOOGL": "GOOG"}  # one company, two share classes: the store spells it GOOG


def named_companies(
    text: str, con: duckdb.DuckDBPyConnection | None = None, index: CompanyIndex | None = None
) -> list[str]:
    """Tickers `text` names, in order of first mention: the store's companies and SEC filers
    with a store (`index`: its CompanyIndex, if the caller keeps one), the hand-kept alias
    table without one."""
    if index is None and con is not None:
        index = CompanyIndex(con)
    found = [m.ticker for m in index.mentions(text)] if index else table_mentions(text)
    return list(dict.fromkeys(_SAME.get(t, t) for t in found))


def company_check(
    answer: str,
    asked: list[str],
    con: duckdb.DuckDBPyConnection | None = None,
    index: CompanyIndex | None = None,
) -> dict[str, Any] | None:
    """{"asked", "named", "other", "off_company"}: off_company when the answer names other
    companies and none of the asked ones. None when the question names no company."""
    asked = list(dict.fromkeys(_SAME.get(t, t) for t in asked))
    if not asked:
        return None
    named = named_companies(answer, con, index)
    other = [t for t in named if t not in asked]
    return {
        "asked": asked,
        "named": named,
        "other": other,
        "off_company": bool(other) and not set(named) & set(asked),
    }


def company_line(check: dict[str, Any] | None) -> str:
    """The audit summary's clause, or "" when the answer is about the asked company."""
    if not check or not check["off_company"]:
        return ""
    return f"about {', '.join(check['other'])}, not the question's {', '.join(check['asked'])}"
