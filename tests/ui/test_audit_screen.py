"""Audit screen: opened from the Questions screen with `A` on the highlighted question, the five
criteria set, saved in a worker (the store has the version), a re-audit starting from the last
one, and a first audit lacking criteria refused in place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Markdown, Select, Static

from fintrade_tui.config import Config
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.audits import CRITERIA, ItemAuditStore
from fintrade_tui.workspace.questions import Question
from tests.ui.conftest import settle

AUDIT = {
    "clarity": "minor",
    "reference": "correct",
    "evidence": "partial",
    "indicators": "na",
    "alignment": "fail",
}


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import save_questions

    c = Config(bundle=tmp_path, store=tmp_path / "st.duckdb", workspace=tmp_path / "ws.duckdb")
    with open_workspace(c.workspace) as ws:
        save_questions(
            ws,
            [
                Question("Q1", "jsonl", "F", "Apple's ROE in FY2024?", "ROE [about] 1.6", ["AAPL"]),
                Question("Q2", "jsonl", "T", "Is MSFT above its SMA?", "Yes", ["MSFT"]),
            ],
        )
    return c


def _set(screen: Any, values: dict[str, str]) -> None:
    for c, v in values.items():
        screen.query_one(f"#audit-{c}", Select).value = v


async def test_audit_from_questions_screen_saves_to_the_store(cfg: Config) -> None:
    app = FinTradeApp(cfg, start="questions")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("down")  # highlight Q2
        await pilot.press("A")
        await settle(pilot)
        screen = app.screen
        assert type(screen).__name__ == "AuditScreen" and screen.question_id == "Q2"
        assert "MSFT above its SMA" in screen.query_one("#audit-md", Markdown).source
        _set(screen, AUDIT)
        screen.query_one("#audit-note", Input).value = "window unclear"
        await pilot.press("ctrl+s")
        await settle(pilot)
        status = str(screen.query_one("#audit-status", Static).render())
        assert "saved v1" in status and "fails alignment=fail" in status
        store = ItemAuditStore(app.workspace_connection())
        (row,) = store.history("Q2")
        assert {c: row[c] for c in CRITERIA} == AUDIT
        assert (row["annotator"], row["version"], row["note"]) == ("analyst", 1, "window unclear")
        assert screen.query_one("#audit-history", DataTable).row_count == 1

        # a re-audit starts from the last one: change one criterion, save, version 2
        await pilot.press("escape")
        await pilot.press("A")
        await settle(pilot)
        screen = app.screen
        assert screen.query_one("#audit-alignment", Select).value == "fail"
        _set(screen, {"alignment": "pass"})
        await pilot.click("#audit-save")
        await settle(pilot)
        latest = store.latest()["Q2"]
        assert (latest["version"], latest["alignment"], latest["clarity"]) == (2, "pass", "minor")
        assert screen.query_one("#audit-history", DataTable).row_count == 2
        assert "Core" in str(screen.query_one("#audit-status", Static).render())


async def test_first_audit_missing_criteria_is_refused_in_place(cfg: Config) -> None:
    app = FinTradeApp(cfg, start="questions")
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "A")  # typing a ticker: `A` is text there, not the key
        assert type(app.screen).__name__ == "QuestionsScreen"
        assert app.screen.query_one("#q-ticker", Input).value == "A"
        await pilot.press("backspace", "escape", "A")
        await settle(pilot)
        screen = app.screen
        assert screen.question_id == "Q1"
        _set(screen, {"clarity": "pass"})
        await pilot.press("ctrl+s")
        await settle(pilot)
        status = screen.query_one("#audit-status", Static)
        assert "first audit" in str(status.render()) and status.has_class("error")
        assert ItemAuditStore(app.workspace_connection()).history() == []
