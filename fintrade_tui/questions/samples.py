"""Sample room: one fixed, resolved question — Apple's ROE and ROA after its FY2024 10-K (filed
2024-11-01) — with its oracle evidence from the store; shared by tests and benchmarks so they
measure the same thing."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from fintrade_tui.workspace.questions import RESOLVED, Question


def aapl_fy2024(store: Path, qid: str = "SAMPLE-AAPL-FY2024") -> Question:
    from fintrade_tui.questions.resolve import Resolver
    from fintrade_tui.store.db import connect

    q = Question(
        id=qid,
        source="jsonl",
        category="F",
        text="How did Apple's ROE and ROA look at the end of its fiscal 2024?",
        tickers=["AAPL"],
        scope="company",
        as_of=date(2024, 11, 1),
        window_start=date(2024, 8, 1),
        window_end=date(2024, 11, 1),
        golden_raw=["ROE", "ROA"],
        golden=["roe", "roa"],
        status=RESOLVED,
    )
    with connect(store) as con:
        return Resolver(con, date(2025, 9, 30)).evidence(q)
