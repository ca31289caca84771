"""The Arena pane shows, beside the LLM judge's score, how far that judge model agreed with
people (its measurement kept in the workspace by `calibrate-judge`), or that it was never
measured."""

from __future__ import annotations

from typing import Any

from fintrade_tui.config import Config
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.judge_agreement import Agreement, AgreementStore
from tests.conftest import needs_bundle
from tests.ui.arena_app import ArenaApp, arena_cfg  # noqa: F401  (the fixture cfg)
from tests.ui.conftest import settle, until

pytestmark = needs_bundle


async def _judged_scores(cfg: Config) -> str:  # noqa: F811
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena: Any = app.screen
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("j")
        first = arena.panes()[0]

        def judged() -> str:
            text = str(first.query_one(".pane-scores").content)
            done = not any(p.judging for p in arena.panes())
            # T-ARENA has no reference: the judge scores it on the reference-free rubric
            return text if done and "Judge (judge · reference-free): " in text else ""

        return await until(pilot, judged, what="the judge's scores in the first pane")


async def test_the_pane_shows_the_judges_measured_agreement(cfg: Config) -> None:  # noqa: F811
    with open_workspace(cfg.workspace) as ws:
        AgreementStore(ws).save(
            Agreement("openai/gpt-4o-mini", "judge", "FinanceBench", 200, 198, 0.63, 0.27, 21.0)
        )
    text = await _judged_scores(cfg)
    assert "this judge: agrees with people 63% (κ 0.27, n 200, FinanceBench)" in text


async def test_a_judge_never_measured_is_marked_unmeasured(cfg: Config) -> None:  # noqa: F811
    text = await _judged_scores(cfg)
    assert "this judge: agreement with people unmeasured" in text
