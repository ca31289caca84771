"""Arena answers streaming (Pilot, mocked litellm streams): three conditions complete and are
stored, with the evidence of the focused pane; a slow stream cancelled mid-way, one pane or all,
then re-run; a local model reading the question ahead while the analyst does; and the Arena's
SVG snapshot."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fintrade_tui.config import Config
from fintrade_tui.ui.screenshots import tables_measured
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle
from tests.ui.arena_app import (
    ANSWER,
    HELD_AFTER,
    ArenaApp,
    arena_cfg,  # noqa: F401  (the fixture cfg)
    arena_gate,  # noqa: F401  (the fixture gate)
    arena_slow_provider,  # noqa: F401  (gate's fixture)
    arena_status,
    pane_labels,
)
from tests.ui.conftest import settle, until

pytestmark = needs_bundle


async def test_three_conditions_stream_complete_and_are_stored(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        assert pane_labels(arena) == ["No-RAG", "Indicator-RAG", "Oracle"]
        assert app.focused is arena.panes()[0]
        await pilot.press("r")
        await settle(pilot)
        runs = RunStore(app.workspace_connection())
        for pane in arena.panes():
            assert pane.status == "completed", pane.error
            assert pane.markdown.source == ANSWER
            row = runs.get(pane.run_id)
            assert (row["status"], row["answer"], row["condition"]) == (
                "completed",
                ANSWER,
                pane.condition,
            )
            status = str(pane.query_one(".pane-status").content)
            assert status.startswith("completed · ttft") and "tok/s" in status
        # the screen's line follows the panes (it said "getting ready" before `r`)
        assert arena_status(arena) == "done: 3 of 3 completed · j judges"
        # the evidence panel follows the focused pane; Enter opens the passage in a modal
        await pilot.press("right", "right")
        assert arena.state.current.condition == "oracle"
        panel = arena.query_one("EvidencePanel")
        assert [r.kind for r in panel.rows] == ["item", "item"]
        assert "AAPL" in panel.rows[0].line and "[oracle]" in panel.rows[0].line
        panel.query_one("OptionList").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert type(app.screen).__name__ == "PassageScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is arena


async def test_cancel_mid_stream_records_cancelled(cfg: Config, gate: asyncio.Event) -> None:
    app = ArenaApp(cfg, "slow", question_id="T-ARENA")
    held = " ".join(ANSWER.split(" ")[:HELD_AFTER])  # what each pane has when the gate holds
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        first, *others = arena.panes()
        await pilot.press("r")
        await until(
            pilot,
            lambda: all(p.markdown.source.strip() == held for p in arena.panes()),
            what="every pane holding the answer's first words",
        )
        running = "running: 0 of 3 done · No-RAG, Indicator-RAG, Oracle answering"
        await until(pilot, lambda: arena_status(arena) == running, what="the line: three running")
        await pilot.press("x")  # the focused pane only
        await until(pilot, lambda: not first.running, what="the focused pane to stop")
        assert first.status == "cancelled"
        await until(
            pilot,
            lambda: arena_status(arena).startswith("running: 1 of 3 done · Indicator-RAG, Oracle"),
            what="the line counting the cancelled pane done",
        )
        assert all(p.running for p in others)
        row = RunStore(app.workspace_connection()).get(first.run_id)
        assert row["status"] == "cancelled"
        assert row["answer"].strip() == held and first.markdown.source.strip() == held
        await pilot.press("X")  # cancel all
        await settle(pilot)
        assert [p.status for p in others] == ["cancelled", "cancelled"]
        assert arena_status(arena) == "done: 0 of 3 completed, 3 cancelled"
        # re-run the focused pane, the gate open: it completes while the others stay cancelled
        gate.set()
        await pilot.press("e")
        await settle(pilot)
        assert first.status == "completed" and first.markdown.source.strip() == ANSWER
        assert [p.status for p in others] == ["cancelled", "cancelled"]
        assert arena_status(arena) == "done: 1 of 3 completed, 2 cancelled · j judges"
        assert app.is_running


# -- snapshot --------------------------------------------------------------------------------
def test_arena_snapshot(cfg: Config, snap_compare) -> None:
    """Three completed mocked panes, the Oracle pane focused with its evidence; no timings."""
    app = ArenaApp(cfg, question_id="T-ARENA", hide_timings=True)

    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("right", "right")
        await pilot.pause()
        await tables_measured(pilot)  # every table has drawn its rows before the picture

    assert snap_compare(app, terminal_size=(150, 40), run_before=run_before)


@pytest.mark.long  # runs SmolLM2 through llama.cpp (tests/conftest.py LONG_FILES)
async def test_a_local_model_reads_the_question_while_the_analyst_does(
    cfg: Config, built_store: Config
) -> None:
    """Opening a question starts the local model (SmolLM2 here) and has it read the opening
    its prompts share; `r` then reads only the rest, and the answer still streams."""
    from fintrade_tui.models import llama_engine, local
    from fintrade_tui.runs.prompts import build_prompt
    from fintrade_tui.workspace.evidence import Evidence

    # the reading ahead is the subject, not the prompt's or the answer's length: level L3's
    # opening (~300 tokens, L5's ~400) is read just the same, and 24 tokens still stream
    tiny = built_store.models["local-tiny"]
    cfg.models["tiny"] = tiny.model_copy(update={"max_tokens": 24})
    cfg.runs = cfg.runs.model_copy(
        update={"default_model": "tiny", "conditions": ["no_rag"], "level": "L3"}
    )
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)  # the preparing worker included
        arena = app.screen
        assert "ready: the model has read the question" in str(
            arena.query_one("#arena-status").content
        )
        eng = local.shared_engine(cfg.models["tiny"].model)
        toks = eng.prompt_tokens(
            build_prompt(arena.state.question, Evidence("no_rag"), arena.state.level).messages
        )
        cached = max(llama_engine._common(s, toks) for s in eng._slots)
        assert cached > 100 and len(toks) - cached < len(toks) / 2
        await pilot.press("r")
        await settle(pilot)
        assert arena.panes()[0].status == "completed"
