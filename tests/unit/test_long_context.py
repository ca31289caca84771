"""Long-context on the real store: whole sections of AAPL's filings filed on or before as_of,
newest filing first and in each filing's order, within the budget, with a note on the rest."""

from __future__ import annotations

from datetime import date

import duckdb
import pytest

from fintrade_tui.config import Config
from fintrade_tui.runs.conditions import ConditionContext, build_evidence
from fintrade_tui.runs.long_context import section_item
from fintrade_tui.runs.prompts import build_prompt
from fintrade_tui.workspace.evidence import item_tokens
from fintrade_tui.workspace.questions import RESOLVED, Question
from tests.conftest import needs_bundle

pytestmark = needs_bundle
TEN_K = "0000320193-24-000123"  # AAPL's 10-K filed 2024-11-01
BUDGET = 12000


def _q(as_of: date, tickers: list[str] | None = None) -> Question:
    return Question(
        id="LC",
        source="test",
        category="F",
        text="What risks does Apple describe in its latest filings?",
        tickers=tickers or ["AAPL"],
        scope="company",
        as_of=as_of,
        window_start=as_of,
        window_end=as_of,
        status=RESOLVED,
    )


@pytest.fixture(scope="module")
def ctx(built_store: Config) -> ConditionContext:
    con = duckdb.connect(str(built_store.store), read_only=True)
    yield ConditionContext(built_store, con, budget_tokens=BUDGET)
    con.close()


def _sections(con, as_of: date) -> list[tuple]:
    """The test's own list: (accession, filed, form, key, title, text) of AAPL's filings to
    as_of, newest first, each filing's sections in order."""
    return con.execute(
        "SELECT f.accession, f.filed, f.form, s.section_key, s.title, s.text FROM filings f"
        " JOIN filing_sections s USING (accession) WHERE f.ticker = 'AAPL' AND f.filed <= ?"
        " AND trim(s.text) <> '' ORDER BY f.filed DESC, f.accession, s.ord",
        [as_of],
    ).fetchall()


def test_whole_sections_newest_first_within_budget(ctx) -> None:
    as_of = date(2024, 11, 1)
    ev = build_evidence("long_context", _q(as_of), ctx)
    every = _sections(ctx.con, as_of)
    assert ev.items and every[0][0] == TEN_K  # the 10-K filed that day is the newest
    by_id = {f"section:{r[0]}:{r[3]}": r for r in every}
    order = [list(by_id).index(i) for i in ev.ids]
    assert order == sorted(order)  # newest filing first, each filing's sections in order
    for item in ev.items:
        acc, filed, _, _, _, text = by_id[item.id]
        assert item.text == text  # whole, untouched
        assert item.available_from == filed <= as_of and item.meta["accession"] == acc
        assert item.title.startswith(f"AAPL {item.meta['form']} filed {filed} · ")
    assert ev.items[0].meta["accession"] == TEN_K
    used = sum(item_tokens(i) for i in ev.items)
    assert used <= BUDGET
    # every section left out was too big for what was left when its turn came
    left = [i for i in by_id if i not in set(ev.ids)]
    assert left
    for i in left:
        a, f, form, key, title, text = by_id[i]
        row = {"ticker": "AAPL", "form": form, "filed": f, "accession": a, "period_end": None}
        assert item_tokens(section_item(row, key, title, text)) > BUDGET - used
    (note,) = [n for n in ev.notes if n.startswith("long context:")]
    assert f"{len(ev.items)} of {len(every)} whole sections fit the {BUDGET}-token" in note
    a, f, form, key, *_ = by_id[left[0]]
    assert f"AAPL {form} {f} {key}" in note
    # the prompt keeps every item at the same budget: the builder counts as the prompt does
    prompt = build_prompt(_q(as_of), ev, "L5", BUDGET)
    assert prompt.evidence_ids == ev.ids
    assert "more evidence" not in prompt.text


def test_filed_after_as_of_is_never_shown(ctx) -> None:
    before = build_evidence("long_context", _q(date(2024, 10, 31)), ctx)
    assert before.items and all(i.meta["accession"] != TEN_K for i in before.items)
    assert all(i.available_from <= date(2024, 10, 31) for i in before.items)
    want = {a for a, *_ in _sections(ctx.con, date(2024, 10, 31))}
    assert {i.meta["accession"] for i in before.items} <= want


def test_default_budget_and_tickers_without_filings(ctx) -> None:
    plain = ConditionContext(ctx.cfg, ctx.con)
    assert plain.budget == ctx.cfg.runs.context_tokens
    ev = build_evidence("long_context", _q(date(2025, 9, 30), ["AAPL", "MSFT"]), plain)
    assert sum(item_tokens(i) for i in ev.items) <= ctx.cfg.runs.context_tokens
    assert {i.ticker for i in ev.items} == {"AAPL"}
    has_msft = ctx.con.execute("SELECT count(*) FROM filings WHERE ticker = 'MSFT'").fetchone()[0]
    if not has_msft:
        assert any("no filing filed on or before" in n and "MSFT" in n for n in ev.notes)
