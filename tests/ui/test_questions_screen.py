"""Pilot tests of the Questions screen on the Results tests' hand-populated workspace (see
tests/unit/test_failures_export.py): filtering by category and status, a question's detail
(its evidence and coverage gaps), `a` / Enter opening the Arena, the screen opened on a ticker
or a quarter, and filter_questions itself."""

from __future__ import annotations

from datetime import date

from fintrade_tui.screens.questions import QuestionsScreen, filter_questions
from textual.widgets import DataTable, Markdown, Select

from fintrade_tui.config import Config
from fintrade_tui.ui.app import FinTradeApp
from tests.ui.conftest import settle
from tests.ui.results_app import (
    SIZE,
    Recorder,
    results_ui_cfg,  # noqa: F401  (the fixture ui_cfg)
)
from tests.unit.test_failures_export import QUESTIONS


async def test_questions_filter_by_category_and_show_detail(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="questions")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, QuestionsScreen)
        table = screen.query_one("#questions", DataTable)
        ids = lambda: [str(table.get_row_at(i)[0]) for i in range(table.row_count)]  # noqa: E731
        assert ids() == ["F1", "FT3", "T2", "X9"]
        await pilot.press("c")  # category: All -> F
        await pilot.pause()
        assert screen.query_one("#q-category", Select).value == "F"
        assert ids() == ["F1", "X9"]
        screen.query_one("#q-category", Select).value = "T"
        await pilot.pause()
        assert ids() == ["T2"]
        detail = screen.query_one("#q-detail", Markdown).source
        assert QUESTIONS[1].text in detail and "**Tickers:** MSFT" in detail
        assert "**MSFT rsi_14** = 51.2" in detail and "No: the RSI was near 50." in detail
        screen.query_one("#q-category", Select).value = "FT"
        await pilot.pause()
        detail = screen.query_one("#q-detail", Markdown).source
        assert "NVDA:roe: no filing" in detail  # coverage gaps
        await pilot.press("s")  # status: All -> resolved
        await pilot.pause()
        assert ids() == ["FT3"]
        goto = Recorder()
        app.action_goto = goto
        await pilot.press("a")
        await pilot.press("enter")
        assert goto.calls == [("arena", {"question_id": "FT3"})] * 2


async def test_questions_opened_on_a_ticker_or_a_quarter(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.push_screen(QuestionsScreen(ticker="aapl"))
        await settle(pilot)
        table = app.screen.query_one("#questions", DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["F1"]
        app.pop_screen()
        await app.push_screen(QuestionsScreen(quarter_end=date(2024, 9, 30)))
        await settle(pilot)
        table = app.screen.query_one("#questions", DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["T2"]
        assert app.screen.query_one("#q-quarter", Select).value == date(2024, 9, 30)


def test_filter_questions_by_quarter_and_status() -> None:
    assert [q.id for q in filter_questions(QUESTIONS, quarter=date(2024, 12, 31))] == ["F1"]
    assert [q.id for q in filter_questions(QUESTIONS, quarter=date(2025, 5, 1))] == ["FT3"]
    assert [q.id for q in filter_questions(QUESTIONS, status="partial")] == ["FT3"]
    assert [q.id for q in filter_questions(QUESTIONS, status="unresolved")] == ["X9"]
    assert [q.id for q in filter_questions(QUESTIONS, "F", "aapl")] == ["F1"]
