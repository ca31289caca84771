"""The Arena's `J`: the completed panes judged under the common-evidence protocol, shown inline
labelled "common", stored beside (never over) the per-condition scores of `j`."""

from __future__ import annotations

from fintrade_tui.config import Config
from fintrade_tui.workspace.scores import ScoreStore
from tests.conftest import needs_bundle
from tests.ui.arena_app import ArenaApp, arena_cfg  # noqa: F401  (the fixture cfg)
from tests.ui.conftest import settle, until

pytestmark = needs_bundle


async def test_judge_common_inline_and_stored_apart(cfg: Config) -> None:  # noqa: F811
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("r")
        await settle(pilot)
        first = arena.panes()[0]

        def judged(label: str) -> str:
            # the judging is an async action, not a worker: `settle` may return before it ends
            scores = str(first.query_one(".pane-scores").content)
            done = not any(p.judging for p in arena.panes())
            return scores if done and f"Judge ({label}): " in scores else ""

        await pilot.press("j")
        # T-ARENA has no reference: per condition it is judged on the reference-free rubric
        free = "judge · reference-free"
        plain = await until(pilot, lambda: judged(free), what="the per-condition scores")
        assert "common" not in plain
        await pilot.press("J")
        plain = await until(pilot, lambda: judged("judge · common"), what="the common scores")
        assert "accuracy 5" in plain
        store = ScoreStore(app.workspace_connection())
        ids = {p.run_id for p in arena.panes()}
        per = store.latest(kind="llm")
        com = store.latest(kind="llm", protocol="common")
        assert {r["run_id"] for r in per} == ids == {r["run_id"] for r in com}
        assert {r["protocol"] for r in per} == {"per_condition"}
        assert {r["protocol"] for r in com} == {"common"}
        assert all(r["annotator"] == "judge" for r in com)  # the label is display only
        # the same canonical evidence for every condition's answer
        assert len({r["detail"]["common_evidence"]["hash"] for r in com}) == 1
