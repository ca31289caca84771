"""Dispute screen: opened from the Questions screen with `D` on the highlighted question, a
wrong reference with its correction saved in a worker (the store has the version), an
ambiguous one that also corrects refused in place, and a withdrawal ending the dispute."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Markdown, Select, Static

from fintrade_tui.config import Config
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.disputes import DisputeStore
from fintrade_tui.workspace.questions import Question
from tests.ui.conftest import settle


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import save_questions

    c = Config(bundle=tmp_path, store=tmp_path / "st.duckdb", workspace=tmp_path / "ws.duckdb")
    with open_workspace(c.workspace) as ws:
        save_questions(
            ws,
            [
                Question("Q1", "jsonl", "F", "Average lease payment 2009-2013?", "5.325", ["ANSS"]),
                Question("Q2", "jsonl", "T", "Is MSFT above its SMA?", "Yes", ["MSFT"]),
            ],
        )
    return c


def _status(screen) -> str:
    return str(screen.query_one("#dispute-status", Static).render())


async def test_dispute_from_questions_screen_saves_to_the_store(cfg: Config) -> None:
    app = FinTradeApp(cfg, start="questions")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("D")  # Q1 highlighted
        await settle(pilot)
        screen = app.screen
        assert type(screen).__name__ == "DisputeScreen" and screen.question_id == "Q1"
        assert "5.325" in screen.query_one("#dispute-md", Markdown).source
        screen.query_one("#dispute-reason", Input).value = "five years divided by 4"
        screen.query_one("#dispute-corrected", Input).value = "4.26"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "saved v1: the reference is wrong" in _status(screen)
        # ambiguous yet corrected: refused in place, nothing saved, the app stays up
        screen.query_one("#dispute-kind", Select).value = "ambiguous"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "ambiguous yet corrects it" in _status(screen) and app.is_running
        screen.query_one("#dispute-corrected", Input).value = ""
        screen.query_one("#dispute-kind", Select).value = "withdrawn"
        screen.query_one("#dispute-reason", Input).value = "the table says 5.325 after all"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "saved v2: the reference is withdrawn" in _status(screen)
        assert screen.query_one("#dispute-history", DataTable).row_count == 2
        store = DisputeStore(app.workspace_connection())
        first, second = store.history("Q1")
        assert (first["kind"], first["corrected"], first["who"]) == ("wrong", "4.26", "analyst")
        assert second["kind"] == "withdrawn" and store.latest() == {}
