"""Fatal flaws in the Arena: a pane shows its run's flags under the answer ("⚑ wrong_period:
2025-09-30 after as-of 2025-06-30"), screening a never-screened completed run with the
deterministic checks; it re-reads the latest screening after `j`; a clean run shows no line.
Then a live Arena run with a mock model whose answer names a date after the as-of."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from fintrade_tui.config import Config, ModelConfig, load_config
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.ui.panes import AnswerPane
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import RESOLVED, Question, save_questions
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.screenings import Flag, FlagStore
from tests.conftest import BUNDLE, needs_bundle, write_config
from tests.ui.arena_app import JUDGE, ArenaApp
from tests.ui.conftest import settle, until

AS_OF = date(2025, 6, 30)
LATE = "Apple closed at $210 on 2025-09-30."
Q = Question(
    "F1", "fintradebench", "F", "As of June 30, 2025, is Apple's ROE high?",
    tickers=["AAPL"], as_of=AS_OF, status=RESOLVED,
)  # fmt: skip


class _PaneApp(FinTradeApp):
    """The app with one answer pane and the real workspace connection."""

    def on_mount(self, event: Any) -> None:
        event.prevent_default()
        self.mount(AnswerPane("no_rag", "r1", id="pane"))


def _flag_text(pane: AnswerPane) -> str:
    view = pane.query_one(".pane-flags")
    return str(view.content) if view.display else ""


@pytest.fixture
def pane_cfg(tmp_path: Path) -> Config:
    ws_path = tmp_path / "ws.duckdb"
    cfg = load_config(write_config(tmp_path / "cfg", BUNDLE, extra=f"workspace: {ws_path}\n"))
    with open_workspace(ws_path) as ws:
        save_questions(ws, [Q])
        runs = RunStore(ws)
        for i, (rid, answer) in enumerate({"r1": LATE, "r2": "Apple's ROE is high."}.items()):
            row = {"id": rid, "question_id": "F1", "condition": "no_rag", "model": "m"}
            runs.start(row | {"as_of": AS_OF, "started_at": datetime(2025, 7, 1, 0, 0, i)})
            runs.finish(rid, status=COMPLETED, answer=answer)
    return cfg


async def test_a_replayed_run_shows_its_flags_and_rereads_them_after_judging(pane_cfg) -> None:
    app = _PaneApp(pane_cfg)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        pane = app.query_one(AnswerPane)
        ws = app.workspace_connection()
        await pane.replay(RunStore(ws).get("r1"))
        await settle(pilot)
        assert _flag_text(pane) == "⚑ wrong_period: 2025-09-30 after as-of 2025-06-30"
        first = FlagStore(ws).latest(["r1"])["r1"]  # the pane screened it, and saved that
        assert first["checks"] == ["deterministic"] and first["flags"][0]["span"] == "2025-09-30"
        # `screen` adds an LLM screening; the judge's result arriving re-reads it
        llm = Flag("unsupported_claims", "the $210 close is in no evidence", "$210", 16, "screen")
        FlagStore(ws).save("r1", [llm], ["deterministic", "screen"], "screen")
        pane.judge = {"status": "ok", "annotator": "judge", "detail": {}}
        pane.show_scores()
        await settle(pilot)
        assert _flag_text(pane) == "⚑ unsupported_claims: the $210 close is in no evidence"
        await pane.reset()  # a new run: no flags until it ends
        assert _flag_text(pane) == "" and pane.flags is None
        await pane.replay(RunStore(ws).get("r2"))
        await settle(pilot)
        assert _flag_text(pane) == "" and pane.flags == []
        assert FlagStore(ws).latest(["r2"])["r2"]["flags"] == []  # clean is recorded too


@pytest.fixture
def late_cfg(built_store: Config, tmp_path: Path) -> Config:
    from fintrade_tui.questions.samples import aapl_fy2024

    answer = "Apple's ROE was 160% on 2025-09-30."
    models = {
        "mock": ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": answer}),
        "judge": ModelConfig(
            model="openai/gpt-4o-mini", extra={"mock_response": json.dumps(JUDGE)}
        ),
    }
    c = built_store.model_copy(update={"workspace": tmp_path / "ws.duckdb", "models": models})
    c.runs = c.runs.model_copy(
        update={"default_model": "mock", "conditions": ["no_rag", "oracle"], "backoff": 0.01}
    )
    c.judging = c.judging.model_copy(update={"model": "judge"})
    with open_workspace(c.workspace) as ws:
        save_questions(ws, [aapl_fy2024(built_store.store, "T-FLAGS")])
    return c


@needs_bundle
async def test_a_live_run_is_screened_when_it_ends_and_after_j(late_cfg: Config) -> None:
    app = ArenaApp(late_cfg, question_id="T-FLAGS")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("r")
        await settle(pilot)
        want = "⚑ wrong_period: 2025-09-30 after as-of 2024-11-01"
        for pane in arena.panes():
            assert pane.status == "completed", pane.error
            assert _flag_text(pane) == want
        ws = app.workspace_connection()
        first = arena.panes()[0]
        FlagStore(ws).save(first.run_id, [], ["deterministic", "judge"], "judge")
        await pilot.press("j")
        await until(pilot, lambda: (first.judge or {}).get("status") == "ok", what="the judge")
        await settle(pilot)
        assert _flag_text(first) == ""  # the newer, clean screening counts
        assert _flag_text(arena.panes()[1]) == want
