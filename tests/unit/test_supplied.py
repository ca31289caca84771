"""Supplied evidence is stored once per question: SECQUE's markdown and HTML renderings of one
excerpt are one item (the markdown), under both keys, dated by the 10-K's filing date and
naming its document; different excerpts stay apart; the Oracle prompt carries it once."""

from __future__ import annotations

from datetime import date

import pytest

from fintrade_tui.config import Config
from fintrade_tui.questions.supplied import supplied_evidence
from fintrade_tui.runs.conditions import ConditionContext
from fintrade_tui.workspace.questions import Question

MD = "## Item 7\n\n| Net sales | 391,035 |\n| Cost of sales | 210,352 |"
HTML = "<table><tr><td>Net sales</td><td>391,035</td></tr></table>"
OTHER = "## Item 1A\n\nRisk factors: supply chain concentration in Asia."


def _q(context: dict[str, str], **extra) -> Question:
    return Question("SECQUE-1", "secque", "Information Extraction", "Apple's net sales?",
                    extra={"context": context, **extra})  # fmt: skip


def test_renderings_of_one_excerpt_are_kept_once_as_markdown() -> None:
    q = _q(
        {"context_html": HTML, "context_markdown_with_headers": MD, "context_risk": OTHER},
        ticker="AAPL",
        form="10-K",
        filing_date="2024-11-01",
        period_end="2024-09-28",
    )
    got = supplied_evidence(q)
    assert sorted(got) == ["context_markdown_with_headers", "context_risk"]
    md = got["context_markdown_with_headers"]
    assert md["value"] == MD and md["keys"] == ["context_html", "context_markdown_with_headers"]
    assert md["available_from"] == "2024-11-01"  # the filing, not the period end (2024-09-28)
    assert md["document"] == {"ticker": "AAPL", "form": "10-K", "filing_date": "2024-11-01"}
    assert got["context_risk"]["keys"] == ["context_risk"]


def test_without_a_document_date_the_evidence_is_undated_and_one_rendering_stays() -> None:
    got = supplied_evidence(_q({"context": MD}))
    assert list(got) == ["context"] and got["context"]["available_from"] is None


@pytest.fixture
def ctx(built_store: Config, con) -> ConditionContext:
    """The shared store alone: the Oracle reads the store, never a retrieval index (so none is
    built here)."""
    return ConditionContext(built_store, con)


def test_the_oracle_condition_shows_the_excerpt_once_on_its_filing_day(ctx) -> None:
    from fintrade_tui.questions.resolve import Resolver
    from fintrade_tui.runs.conditions import build_evidence

    q = _q({"context_html": HTML, "context_markdown_with_headers": MD}, ticker="AAPL",
           filing_date="2024-11-01")  # fmt: skip
    q = Resolver(ctx.con, date(2025, 9, 30)).evidence(q)
    ev = build_evidence("oracle", q, ctx)
    items = [i for i in ev.items if i.track == "context"]
    assert [i.text for i in items] == [MD]
    assert items[0].available_from == date(2024, 11, 1) and items[0].ticker == "AAPL"
