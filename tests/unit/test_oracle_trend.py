"""The Oracle on a question about a direction over time ("improving", "sustainable"): beside
each golden ratio, the two periods before it, as known on the as-of day, of the same span, each
one statement; a question that asks for no trend gets the golden value alone."""

from __future__ import annotations

from datetime import date

import duckdb

from fintrade_tui.config import Config
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.runs.conditions import ConditionContext, build_evidence
from fintrade_tui.store.queries import fundamentals_as_of
from fintrade_tui.workspace.questions import RESOLVED, Question
from tests.conftest import needs_bundle

pytestmark = needs_bundle


def _question(con: duckdb.DuckDBPyConnection, cfg: Config, text: str, as_of: date) -> Question:
    q = Question(
        id="TREND",
        source="test",
        category="F",
        text=text,
        tickers=["AAPL"],
        scope="company",
        as_of=as_of,
        golden=["roe"],
        status=RESOLVED,
    )
    return Resolver(con, cfg.questions.reference_date).evidence(q)


def test_a_trend_question_gets_the_two_periods_before_as_known_then(
    built_store: Config, con: duckdb.DuckDBPyConnection
) -> None:
    ctx = ConditionContext(built_store, con)
    as_of = date(2024, 11, 1)  # the day Apple's FY2024 10-K was filed
    q = _question(con, built_store, "Is Apple's return on equity improving?", as_of)
    items = build_evidence("oracle", q, ctx).items
    assert [i.id for i in items] == [
        "oracle:AAPL:roe",
        "oracle:AAPL:roe:2024-06-29",
        "oracle:AAPL:roe:2024-03-30",
    ]
    golden, *priors = items
    assert golden.meta["period_end"] == date(2024, 9, 28) and "prior" not in golden.meta
    for item in priors:
        # each is what a snapshot on the day it became known showed: the ratio then
        then = fundamentals_as_of(con, "AAPL", item.available_from)["roe"]
        assert item.meta["value"] == then["value"] and item.meta["prior"] is True
        assert item.available_from <= as_of and item.meta["fiscal_period"] != "FY"
        day = item.meta["period_end"].isoformat()
        assert f"for the quarter ended {day}, from the 10-Q filed" in item.text
        assert item.text.count(f"{then['value']:.6g}") == 1
    # a day before the 10-K: its quarter is not known yet, so neither is it a prior
    earlier = _question(con, built_store, "Is Apple's ROE sustainable?", date(2024, 10, 31))
    ids = [i.id for i in build_evidence("oracle", earlier, ctx).items]
    assert ids == ["oracle:AAPL:roe", "oracle:AAPL:roe:2024-03-30", "oracle:AAPL:roe:2023-12-30"]


def test_a_question_that_asks_for_no_trend_gets_the_golden_value_alone(
    built_store: Config, con: duckdb.DuckDBPyConnection
) -> None:
    ctx = ConditionContext(built_store, con)
    q = _question(con, built_store, "What was Apple's ROE?", date(2024, 11, 1))
    assert [i.id for i in build_evidence("oracle", q, ctx).items] == ["oracle:AAPL:roe"]
