"""Which panes the Arena shows (Pilot, mocked litellm streams): a read-only replay of stored runs;
the question picker (a typed id, an error in place) and the Tool-Use calls; a second model
answering side by side, or why there is none; the condition keys adding and removing panes,
and the run using the conditions shown."""

from __future__ import annotations

from fintrade_tui.config import Config
from fintrade_tui.workspace.evidence import CONDITIONS as CONDITIONS_ORDER
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle
from tests.ui.arena_app import (
    ANSWER,
    CONDITIONS,
    ArenaApp,
    arena_cfg,  # noqa: F401  (the fixture cfg)
    pane_labels,
)
from tests.ui.conftest import settle

pytestmark = needs_bundle


async def test_replay_is_read_only(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        ids = [p.run_id for p in app.screen.panes()]
    replay = ArenaApp(cfg, run_ids=ids[::-1], read_only=True)
    async with replay.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = replay.screen
        assert [p.run_id for p in arena.panes()] == ids[::-1]
        assert all(p.markdown.source == ANSWER and p.status == "completed" for p in arena.panes())
        await pilot.press("r", "e", "x")  # blocked: nothing runs
        await settle(pilot)
        assert not any(p.running for p in arena.panes())
        assert len(RunStore(replay.workspace_connection()).list()) == 3
        oracle = next(p for p in arena.panes() if p.condition == "oracle")
        oracle.focus()
        await pilot.pause()
        # a stored run's prompt (Enter shows it), then the oracle's two evidence items
        rows = arena.query_one("EvidencePanel").rows
        assert [r.kind for r in rows] == ["prompt", "item", "item"]
        assert rows[0].body == RunStore(replay.workspace_connection()).get(oracle.run_id)["prompt"]


async def test_picker_opens_a_typed_id_and_errors_stay_in_place(cfg: Config) -> None:
    app = ArenaApp(cfg)
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        assert arena.query_one("QuestionPicker").display
        await pilot.press(*"NOPE", "enter")
        await settle(pilot)
        assert "not found" in str(arena.query_one("#arena-status").content)
        await pilot.press(*["backspace"] * 4, *"T-AR", "enter")
        await settle(pilot)
        assert arena.state.question.id == "T-ARENA" and len(arena.panes()) == 3
        await pilot.press("t", "i")  # Tool-Use on, Indicator-RAG off
        await pilot.pause()
        assert [p.condition for p in arena.panes()] == ["no_rag", "tool_use", "oracle"]
        # Tool-Use: the calls are listed with their arguments and results; Enter shows one
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("right")
        assert (
            arena.state.current.condition == "tool_use"
            and arena.state.current.status == "completed"
        )
        panel = arena.query_one("EvidencePanel")
        calls = [r for r in panel.rows if r.kind == "tool"]
        assert calls and all("get_" in r.line and "->" in r.line for r in calls)
        assert '"ticker": "AAPL"' in calls[0].line
        await pilot.press("l", "m")
        assert (arena.state.level, arena.state.model) == ("L6", "slow")


async def test_two_models_answer_side_by_side(cfg: Config) -> None:
    """M adds a second model: every condition for each model, stored under its model; turning
    the comparison off keeps the first model's answers."""
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("M", "M")  # none -> slow -> judge
        await settle(pilot)
        assert arena.state.compare == "judge"
        names = {"no_rag": "No-RAG", "indicator_rag": "Indicator-RAG", "oracle": "Oracle"}
        assert pane_labels(arena) == [
            f"{names[c]} · {m}" for m in ("mock", "judge") for c in CONDITIONS
        ]
        await pilot.press("r")
        await settle(pilot)
        runs = RunStore(app.workspace_connection())
        stored = [runs.get(p.run_id) for p in arena.panes()]
        assert {(r["model"], r["condition"], r["status"]) for r in stored} == {
            (m, c, "completed") for m in ("mock", "judge") for c in CONDITIONS
        }
        first = arena.panes()[0]
        assert first.markdown.source == ANSWER
        assert "matches the store" in arena.panes()[3].markdown.source  # the judge's reply
        await pilot.press("M")  # judge -> none
        await settle(pilot)
        assert pane_labels(arena) == ["No-RAG", "Indicator-RAG", "Oracle"]
        assert arena.panes()[0] is first and first.markdown.source == ANSWER


async def test_compare_with_one_model_says_how(cfg: Config) -> None:
    one = cfg.model_copy(update={"models": {"mock": cfg.models["mock"]}})
    app = ArenaApp(one, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await pilot.press("M")
        assert app.screen.state.compare is None and len(app.screen.panes()) == 3
        assert "add another under models:" in str(app.screen.query_one("#arena-status").content)


async def test_condition_keys_add_and_remove_their_panes_and_the_run_uses_them(
    cfg: Config,
) -> None:
    """i / t / c / f toggle Indicator-RAG, Tool-Use, Long-context and Forecast-summary panes,
    kept in the canonical order; `r` then stores one run per shown condition."""
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("i", "t", "c", "f")  # indicator_rag was shown: it goes
        await settle(pilot)
        want = ["no_rag", "tool_use", "long_context", "forecast_summary", "oracle"]
        assert [p.condition for p in arena.panes()] == [c for c in CONDITIONS_ORDER if c in want]
        assert "Long-context" in pane_labels(arena) and "Forecast-summary" in pane_labels(arena)
        await pilot.press("r")
        await settle(pilot)
        runs = RunStore(app.workspace_connection())
        stored = {runs.get(p.run_id)["condition"]: p.status for p in arena.panes()}
        assert stored == dict.fromkeys(want, "completed")
        forecast = runs.get(arena.panes()[[p.condition for p in arena.panes()].index(
            "forecast_summary")].run_id)  # fmt: skip
        assert forecast["evidence"]["items"][0]["track"] == "forecast"
        await pilot.press("c", "f")
        await settle(pilot)
        assert {p.condition for p in arena.panes()} == {"no_rag", "tool_use", "oracle"}
