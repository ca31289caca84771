"""The analyst's own question answered under all three conditions, RAG included: Company NVDA →
`o` → a typed question saved → the Arena → `r`. The RAG pane indexes what it uses first (NVDA's
newest filing by the as-of, at small chunk settings), then answers (mock model) from filing
passages all filed by the as-of; No-RAG and Oracle answer beside it. Long: it embeds a filing."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from fintrade_tui.config import Config
from fintrade_tui.ui.app import FinTradeApp
from tests.conftest import needs_bundle
from tests.ui.conftest import settle, shown
from tests.ui.test_own_question import ANSWER, TEXT, form_on_company, own_question_cfg

pytestmark = needs_bundle


@pytest.fixture
def cfg(built_store: Config, tmp_path: Path) -> Config:
    c = own_question_cfg(built_store, tmp_path)
    # large chunks embedded from their first 64 word pieces: this checks what RAG may use (the
    # company, the dates), not how well it ranks (tests/unit/test_conditions.py INDEX_SETTINGS)
    c.retrieval = c.retrieval.model_copy(
        update={"index": tmp_path / "lancedb", "child_tokens": 1000, "embed_tokens": 64}
    )
    return c


async def test_own_question_runs_no_rag_rag_and_oracle_in_the_arena(cfg: Config) -> None:
    app = FinTradeApp(cfg, start="universe")
    async with app.run_test(size=(160, 50)) as pilot:
        form, filed = await form_on_company(pilot, "NVDA")
        form.query_one("#own-text", Input).value = TEXT
        await pilot.press("ctrl+s")
        arena = await shown(pilot, "ArenaScreen", "the Arena")
        await settle(pilot)
        assert arena.state.question.id == "OWN-1" and arena.state.question.as_of == filed
        await pilot.press("r")
        await settle(pilot)
        panes = {p.condition: p for p in arena.panes()}
        assert list(panes) == ["no_rag", "rag", "oracle"]
        for p in panes.values():
            assert p.status == "completed", (p.condition, p.error)
            assert p.markdown.source.strip() == ANSWER
        rag = panes["rag"].evidence
        filings = [i for i in rag.items if i.track == "filing"]
        assert filings, [i.title for i in rag.items]
        assert {i.ticker for i in filings} == {"NVDA"}
        assert all(i.available_from is not None and i.available_from <= filed for i in filings)
        oracle = panes["oracle"].evidence
        assert any(i.track == "oracle" and i.ticker == "NVDA" for i in oracle.items)
