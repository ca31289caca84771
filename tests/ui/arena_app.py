"""The Arena tests' app and workspace (tests/ui/test_arena_*.py and the other screens' tests
that open the Arena): the fixture `cfg` (imported as `arena_cfg`), a config whose models are
mocked litellm streams (`mock` answers ANSWER, `judge` replies JUDGE, `slow` streams HELD_AFTER
words then waits on the fixture `gate`, imported as `arena_gate` with `arena_slow_provider`)
over a workspace holding the question T-ARENA; `ArenaApp`, the app opened straight on an Arena;
`pane_labels` and `arena_status`, what the screen shows. A test module imports the fixtures by
these names and requests them as `cfg` and `gate`."""

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
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.questions import Question

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


@pytest.fixture(scope="module", name="slow_provider")
def arena_slow_provider() -> None:
    llm.litellm()
    providers.register_provider("arena-slow", _gated_provider())


@pytest.fixture(name="gate")
def arena_gate(slow_provider: None) -> asyncio.Event:
    """The slow model's gate, shut: set it to let the held words through."""
    GATE["open"] = asyncio.Event()
    return GATE["open"]


@cache
def _question(store: Path) -> Question:
    """The question every Arena test opens, resolved once per store (the resolver reads the
    store's company index each time): each test saves it into a workspace of its own."""
    return aapl_fy2024(store, "T-ARENA")


@pytest.fixture(name="cfg")
def arena_cfg(built_store: Config, tmp_path: Path) -> Config:
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


def pane_labels(screen: Any) -> list[str]:
    return [p.label for p in screen.panes()]


def arena_status(arena) -> str:
    return str(arena.query_one("#arena-status").content)
