"""Arena and scoring: Pilot flows with mocked litellm streams (three conditions complete and are
stored; a slow stream cancelled mid-way; blind A/B/C revealed after scoring; a human score
through the modal; the LLM judge inline), a replay, the core helpers, and one SVG snapshot."""

from __future__ import annotations

import asyncio
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.models import llm, providers
from fintrade_tui.questions.samples import aapl_fy2024
from fintrade_tui.ui import arena_model as core
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.ui.screenshots import tables_measured
from fintrade_tui.workspace.evidence import CONDITIONS as CONDITIONS_ORDER
from fintrade_tui.workspace.questions import Question
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import ScoreStore
from tests.conftest import needs_bundle
from tests.ui.conftest import settle, until

pytestmark = needs_bundle
ANSWER = "**Apple**: ROE 25.9% and ROA 4.0% as of the 10-K.\n\nSee the evidence."
CONDITIONS = ["no_rag", "indicator_rag", "oracle"]
JUDGE = {
    "accuracy": {"score": 5, "justification": "matches the store"},
    "completeness": {"score": 4, "justification": "both ratios"},
    "relevance": {"score": 5, "justification": "on topic"},
    "clarity": {"score": 4, "justification": "short"},
    "metrics_used": ["ROE", "ROA"],
    "fundamental_integration": 4,
    "trading_signal_integration": 1,
    "reasoning_depth": 2,
}


# the slow model's stream: its first words, then the rest once the test opens the gate
GATE: dict[str, asyncio.Event] = {}
HELD_AFTER = 3  # words streamed before the gate


def _gated_provider() -> Any:
    """A litellm custom provider that streams HELD_AFTER words of the answer, then holds the
    rest until GATE["open"] is set: arena-slow/<anything> is mid-answer for as long as a test
    needs it to be."""
    from litellm import CustomLLM

    class Provider(CustomLLM):
        async def astreaming(self, model: str, messages: list, **_: Any):
            words = ANSWER.split(" ")
            for i, word in enumerate(words):
                if i == HELD_AFTER:
                    await GATE["open"].wait()
                yield providers.stream_chunk(word + " ")
            yield providers.stream_chunk("", finished=True)

    return Provider()


@pytest.fixture(scope="module")
def slow_provider() -> None:
    llm.litellm()
    providers.register_provider("arena-slow", _gated_provider())


@pytest.fixture
def gate(slow_provider: None) -> asyncio.Event:
    """The slow model's gate, shut: set it to let the held words through."""
    GATE["open"] = asyncio.Event()
    return GATE["open"]


@cache
def _question(store: Path) -> Question:
    """The question every Arena test opens, resolved once per store (the resolver reads the
    store's company index each time): each test saves it into a workspace of its own."""
    return aapl_fy2024(store, "T-ARENA")


@pytest.fixture
def cfg(built_store: Config, tmp_path: Path) -> Config:
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import save_questions

    models = {
        "mock": ModelConfig(
            model="openai/gpt-4o-mini", tools="router", extra={"mock_response": ANSWER}
        ),
        "slow": ModelConfig(model="arena-slow/x"),
        "judge": ModelConfig(
            model="openai/gpt-4o-mini", extra={"mock_response": json.dumps(JUDGE)}
        ),
    }
    c = built_store.model_copy(update={"workspace": tmp_path / "ws.duckdb", "models": models})
    c.runs = c.runs.model_copy(
        update={"default_model": "mock", "conditions": CONDITIONS, "backoff": 0.01}
    )
    c.judging = c.judging.model_copy(update={"model": "judge"})
    with open_workspace(c.workspace) as ws:
        save_questions(ws, [_question(built_store.store)])
    return c


class ArenaApp(FinTradeApp):
    """The app opened straight on an Arena built with these arguments."""

    def __init__(self, cfg: Config, model: str | None = None, **arena: Any) -> None:
        super().__init__(cfg, model, start="arena")
        self.arena = arena

    def on_mount(self, event: Any) -> None:
        from fintrade_tui.screens.arena import ArenaScreen

        event.prevent_default()
        self.push_screen(ArenaScreen(**self.arena))


def _labels(screen: Any) -> list[str]:
    return [p.label for p in screen.panes()]


# -- flows -----------------------------------------------------------------------------------


def _status(arena) -> str:
    return str(arena.query_one("#arena-status").content)


async def test_three_conditions_stream_complete_and_are_stored(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        assert _labels(arena) == ["No-RAG", "Indicator-RAG", "Oracle"]
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
        assert _status(arena) == "done: 3 of 3 completed · j judges"
        # the evidence panel follows the focused pane; Enter opens the passage in a modal
        await pilot.press("right", "right")
        assert arena.current.condition == "oracle"
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
        await until(pilot, lambda: _status(arena) == running, what="the line: three running")
        await pilot.press("x")  # the focused pane only
        await until(pilot, lambda: not first.running, what="the focused pane to stop")
        assert first.status == "cancelled"
        await until(
            pilot,
            lambda: _status(arena).startswith("running: 1 of 3 done · Indicator-RAG, Oracle"),
            what="the line counting the cancelled pane done",
        )
        assert all(p.running for p in others)
        row = RunStore(app.workspace_connection()).get(first.run_id)
        assert row["status"] == "cancelled"
        assert row["answer"].strip() == held and first.markdown.source.strip() == held
        await pilot.press("X")  # cancel all
        await settle(pilot)
        assert [p.status for p in others] == ["cancelled", "cancelled"]
        assert _status(arena) == "done: 0 of 3 completed, 3 cancelled"
        # re-run the focused pane, the gate open: it completes while the others stay cancelled
        gate.set()
        await pilot.press("e")
        await settle(pilot)
        assert first.status == "completed" and first.markdown.source.strip() == ANSWER
        assert [p.status for p in others] == ["cancelled", "cancelled"]
        assert _status(arena) == "done: 1 of 3 completed, 2 cancelled · j judges"
        assert app.is_running


async def test_blind_labels_then_reveal_after_scoring(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("b", "r")
        await settle(pilot)
        assert _labels(arena) == ["A", "B", "C"]
        order = core.blind_order(CONDITIONS, "arena|T-ARENA")
        assert [p.condition for p in arena.panes()] == order
        title = str(arena.query_one("EvidencePanel .ev-title").content)
        assert "Evidence — A" in title
        assert arena.query_one("EvidencePanel").rows == []  # hidden while blind
        arena.panes()[0].focus()
        await pilot.press("s")
        for n in ("3", "4", "5"):  # each save opens the next pane's modal
            await pilot.pause()
            assert type(app.screen).__name__ == "ScoreScreen"
            await pilot.press(n, "enter")
            await settle(pilot)
        assert app.screen is arena
        names = [core.LABELS[c] for c in order]
        assert _labels(arena) == [f"{x} = {n}" for x, n in zip("ABC", names, strict=True)]
        rows = ScoreStore(app.workspace_connection()).latest(kind="human")
        assert len(rows) == 3 and all(r["blind"] for r in rows)
        by_run = {r["run_id"]: r["accuracy"] for r in rows}
        assert [by_run[p.run_id] for p in arena.panes()] == [3, 4, 5]


async def test_score_modal_saves_a_human_score(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("s")  # nothing has run: an error in place, no modal
        assert app.screen is arena
        await pilot.press("r")
        await settle(pilot)
        first, second, _ = arena.panes()
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("4", "tab", "3", "tab", "5", "tab", "4", "a", "n")
        await pilot.press(*"solid", "enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "ScoreScreen"  # the next pane's
        await pilot.press("escape")
        await pilot.pause()
        (row,) = ScoreStore(app.workspace_connection()).latest(kind="human")
        assert row["run_id"] == first.run_id and row["annotator"] == "analyst"
        got = [row[d] for d in ("accuracy", "completeness", "relevance", "clarity")]
        assert got == [4, 3, 5, 4]
        assert (row["preference"], row["other_run"], row["note"]) == (
            "this",
            second.run_id,
            "solid",
        )
        assert row["blind"] is False
        assert "You: acc 4 · com 3 · rel 5 · cla 4" in str(first.query_one(".pane-scores").content)
    # the score entered in the TUI is what `fintrade-tui report --scores human` reports
    from click.testing import CliRunner

    from fintrade_tui.cli import main
    from tests.conftest import write_config

    config = write_config(
        cfg.workspace.parent / "cli", cfg.bundle, cfg.store, f"workspace: {cfg.workspace}\n"
    )
    res = CliRunner().invoke(
        main,
        ["--config", str(config), "report", "--scores", "human", "--json", "--resamples", "50"],
    )
    assert res.exit_code == 0, res.output
    cells = json.loads(res.output)["accuracy"]
    mine = [c for c in cells if c["n"] and c["category"] == "overall"]
    assert len(mine) == 1 and mine[0]["accuracy"] == pytest.approx(80.0)  # 4 / 5


async def test_judge_inline_with_audit_and_disagreement(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("s", "1", "enter")  # the analyst gives accuracy 1, the judge 5
        await settle(pilot)
        await pilot.press("escape")
        await pilot.press("j")
        # the status, waited for: under load the binding can fire after a first settle
        done = "judged: 3 of 3 answers scored"
        await until(pilot, lambda: _status(arena) == done, what="the judged status")
        await settle(pilot)
        first = arena.panes()[0]
        assert first.judge["status"] == "ok" and first.judge["accuracy"] == 5
        text = first.query_one(".pane-scores").content
        plain = str(text)
        assert "accuracy 5 (you 1)" in plain
        # the text's golden coverage first, the judge's listed metrics beside it
        assert "golden coverage 2 of 2 from the text (roe 25.9%, roa 4.0%)" in plain
        assert "; the judge listed: roa, roe" in plain
        assert "Audit: 2 figures, 2 supported, 0 contradicted" in plain
        assert "SUPPORTED   roe 25.9%: store 0.2588" in plain
        assert core.disagreements(first.judge, first.human, 2) == {"accuracy": (5, 1)}
        llm_rows = ScoreStore(app.workspace_connection()).latest(kind="llm")
        assert {r["run_id"] for r in llm_rows} == {p.run_id for p in arena.panes()}


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
        assert arena.question.id == "T-ARENA" and len(arena.panes()) == 3
        await pilot.press("t", "i")  # Tool-Use on, Indicator-RAG off
        await pilot.pause()
        assert [p.condition for p in arena.panes()] == ["no_rag", "tool_use", "oracle"]
        # Tool-Use: the calls are listed with their arguments and results; Enter shows one
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("right")
        assert arena.current.condition == "tool_use" and arena.current.status == "completed"
        panel = arena.query_one("EvidencePanel")
        calls = [r for r in panel.rows if r.kind == "tool"]
        assert calls and all("get_" in r.line and "->" in r.line for r in calls)
        assert '"ticker": "AAPL"' in calls[0].line
        await pilot.press("l", "m")
        assert (arena.level, arena.model) == ("L6", "slow")


async def test_two_models_answer_side_by_side(cfg: Config) -> None:
    """M adds a second model: every condition for each model, stored under its model; turning
    the comparison off keeps the first model's answers."""
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("M", "M")  # none -> slow -> judge
        await settle(pilot)
        assert arena.compare == "judge"
        names = {"no_rag": "No-RAG", "indicator_rag": "Indicator-RAG", "oracle": "Oracle"}
        assert _labels(arena) == [
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
        assert _labels(arena) == ["No-RAG", "Indicator-RAG", "Oracle"]
        assert arena.panes()[0] is first and first.markdown.source == ANSWER


async def test_compare_with_one_model_says_how(cfg: Config) -> None:
    one = cfg.model_copy(update={"models": {"mock": cfg.models["mock"]}})
    app = ArenaApp(one, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        await pilot.press("M")
        assert app.screen.compare is None and len(app.screen.panes()) == 3
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
        assert "Long-context" in _labels(arena) and "Forecast-summary" in _labels(arena)
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
        eng = local._engine(cfg.models["tiny"].model)
        toks = eng.prompt_tokens(
            build_prompt(arena.question, Evidence("no_rag"), arena.level).messages
        )
        cached = max(llama_engine._common(s, toks) for s in eng._slots)
        assert cached > 100 and len(toks) - cached < len(toks) / 2
        await pilot.press("r")
        await settle(pilot)
        assert arena.panes()[0].status == "completed"
