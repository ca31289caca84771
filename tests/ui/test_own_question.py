"""The analyst's own question in the explorer: Company NVDA → `o` → the form (ticker and the
quarter's filing day prefilled, indicators suggested from the typed text) → bad input refused
in place → saved, resolved, the Arena opens on it (No-RAG / RAG / Oracle, mock model; Oracle's
evidence the store's values at the as-of) → in Questions under its own source after a restart.
And F4 asked of another ticker and quarter with `v` from Questions: a variant, no reference."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.questions import get_question
from tests.conftest import needs_bundle
from tests.ui.conftest import goto, settle, shown, until

pytestmark = needs_bundle
ANSWER = "NVIDIA's ROE was about 27% and its RSI near 37 as of the filing."
TEXT = "Is NVIDIA's ROE strong enough to justify its RSI?"


@pytest.fixture
def cfg(built_store: Config, tmp_path: Path) -> Config:
    return own_question_cfg(built_store, tmp_path)


def own_question_cfg(built_store: Config, tmp_path: Path) -> Config:
    """The shared store, a workspace of the test's own, the mock model answering `ANSWER`
    under No-RAG, RAG and Oracle."""
    mock = ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": ANSWER})
    c = built_store.model_copy(
        update={"workspace": tmp_path / "ws.duckdb", "models": {"mock": mock}}
    )
    c.runs = c.runs.model_copy(
        update={"default_model": "mock", "conditions": ["no_rag", "rag", "oracle"]}
    )
    return c


def _value(screen, name: str) -> str:
    return screen.query_one(f"#own-{name}", Input).value


def _status(screen) -> str:
    return str(screen.query_one("#own-status", Static).render())


async def form_on_company(pilot: Any, ticker: str) -> tuple[Any, date]:
    """The Company screen of `ticker` (its quarter's filing day), then `o`: the form."""
    await settle(pilot)
    company = await goto(pilot, "company", ticker=ticker)
    await pilot.press("o")
    form = await shown(pilot, "OwnQuestionScreen", "the own-question form")
    return form, company.view["quarter"]["as_of"]


async def test_own_question_from_company_to_arena_and_back_after_a_restart(cfg: Config) -> None:
    app = FinTradeApp(cfg, start="universe")
    async with app.run_test(size=(160, 50)) as pilot:
        form, filed = await form_on_company(pilot, "NVDA")
        assert _value(form, "tickers") == "NVDA" and _value(form, "as-of") == filed.isoformat()
        await pilot.press(*"Is NVIDIA's ROE")  # typed: the indicators follow the text
        assert _value(form, "indicators") == "ROE"
        form.query_one("#own-text", Input).value = TEXT
        await until(pilot, lambda: _value(form, "indicators") == "ROE, RSI", what="suggestions")
        # bad input: one line under the form, which stays open on the field to fix
        form.query_one("#own-tickers", Input).value = "NVDA, ZZZQ"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form and "ticker 'ZZZQ': is not in the store" in _status(form)
        assert app.focused is form.query_one("#own-tickers", Input)
        form.query_one("#own-tickers", Input).value = "NVDA"
        form.query_one("#own-as-of", Input).value = "2999-01-01"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "is after today" in _status(form) and app.screen is form
        form.query_one("#own-as-of", Input).value = filed.isoformat()
        await pilot.press("ctrl+s")
        arena = await shown(pilot, "ArenaScreen", "the Arena")
        await settle(pilot)
        assert arena.state.question.id == "OWN-1" and arena.state.question.source == "own"
        assert [p.label for p in arena.panes()] == ["No-RAG", "RAG", "Oracle"]
        for i in (0, 2):  # No-RAG and Oracle answer (RAG would index NVDA's filings first)
            arena.panes()[i].focus()
            await pilot.press("e")
            await settle(pilot)
            assert arena.panes()[i].status == "completed", arena.panes()[i].error
        oracle = arena.panes()[2]
        assert arena.state.current is oracle
        lines = [r.line for r in arena.query_one("EvidencePanel").rows]
        assert any("NVDA" in x and "[oracle]" in x for x in lines), lines
        q = get_question(app.workspace(), "OWN-1")
        roe = q.oracle["NVDA"]["roe"]
        assert roe["available_from"] <= filed.isoformat() and filed == q.as_of
        assert q.golden == ["roe", "rsi_14"]
        assert q.extra["as_of_basis"]["kind"] == "analyst" and q.reference_answer is None
    app = FinTradeApp(cfg, start="questions")  # a restart: read back from the workspace
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        questions = app.screen
        mine = [x for x in questions.questions if x.source == "own"]
        assert [(x.id, x.text) for x in mine] == [("OWN-1", TEXT)]
        # `o` on it edits it: its fields filled in, saving appends version 2 under its id
        ids = [x.id for x in questions.shown]
        questions.query_one("#questions").move_cursor(row=ids.index("OWN-1"))
        await pilot.press("o")
        form = await shown(pilot, "OwnQuestionScreen", "the form on OWN-1")
        assert form.question_id == "OWN-1" and _value(form, "text") == TEXT
        assert _value(form, "indicators") == "ROE, RSI"
        form.query_one("#own-indicators", Input).value = "ROE, MACD"
        await pilot.press("ctrl+s")
        arena = await shown(pilot, "ArenaScreen", "the Arena on the new version")
        await settle(pilot)
        from fintrade_tui.workspace.question_versions import versions

        kept = versions(app.workspace(), "OWN-1")
        assert [v["record"]["golden"] for v in kept] == [["roe", "rsi_14"], ["roe", "macd"]]
        assert arena.state.question.golden == ["roe", "macd"]


async def test_f4_asked_of_another_ticker_and_quarter_from_questions(cfg: Config) -> None:
    from fintrade_tui.application.readiness import ensure_questions
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(cfg.workspace) as ws:
        ensure_questions(cfg, ws, lambda _: None)
    app = FinTradeApp(cfg, start="questions")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        questions = app.screen
        table = questions.query_one("#questions")
        table.move_cursor(row=[q.id for q in questions.shown].index("F4"))
        await pilot.press("v")
        form = await shown(pilot, "OwnQuestionScreen", "the variant form")
        assert form.seed_id == "F4" and _value(form, "tickers") == "NVDA"
        form.query_one("#own-tickers", Input).value = "AMD"
        form.query_one("#own-as-of", Input).value = "2024-06-30"
        await pilot.press("ctrl+s")
        arena = await shown(pilot, "ArenaScreen", "the Arena on the variant")
        await settle(pilot)
        v = arena.state.question
        f4 = get_question(app.workspace(), "F4")
        assert (v.id, v.source, v.parent_id, v.extra["variant_of"]) == ("OWN-1", "own", "F4", "F4")
        assert v.tickers == ["AMD"] and str(v.as_of) == "2024-06-30"
        assert "AMD" in v.text and "June 2024" in v.text and "Nvidia" not in v.text
        assert v.golden == f4.golden and v.golden_raw == f4.golden_raw
        assert v.reference_answer is None and f4.reference_answer
        assert json.dumps(v.oracle, default=str).count("AMD") >= 1
        await pilot.press("V")  # from the Arena: the variant asked of yet another company
        again = await shown(pilot, "OwnQuestionScreen", "the variant form from the Arena")
        assert again.seed_id == "OWN-1" and _value(again, "tickers") == "AMD"
        await pilot.press("escape")  # the form, then the Arena: Questions lists the variant
        await until(pilot, lambda: app.screen is arena, what="back on the Arena")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is questions, what="back on Questions")
        await settle(pilot)
        assert "OWN-1" in [x.id for x in questions.questions if x.source == "own"]
