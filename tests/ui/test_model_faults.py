"""Model faults in the Arena (issue 20 part 3): a timeout, a 429, a 500 and a stream cut
mid-answer, raised by a scripted litellm provider, and a local model whose GGUF is absent each
show in their own pane (the reason, a cut answer kept and marked, the retry key) while the
other model's pane in the same question keeps streaming to its end; `R` then reruns only the
faulted pane and it completes; the app stays up throughout. No network: every model is a
registered CustomLLM or a file that is not there."""

from __future__ import annotations

import asyncio
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.models import llm, providers
from fintrade_tui.questions.samples import aapl_fy2024
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.ui.faults import fault, tidy
from fintrade_tui.workspace.questions import Question
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle
from tests.ui.conftest import settle, until

ANSWER = "Apple's ROE was 25.9% and its ROA 4.0% as of the FY2024 10-K."
PARTIAL = ["Apple's ROE ", "was 25.9% "]
# what the `bad` model does on its next call (None: answers); `good` streams a first part,
# then waits for GATE so the test sees it still streaming when `bad` has failed
SCRIPT: dict[str, str | None] = {"bad": None}
GATE: dict[str, asyncio.Event] = {}


def _provider() -> Any:
    import litellm
    from litellm import CustomLLM

    class Scripted(CustomLLM):
        async def astreaming(self, model: str, messages: list, **_: Any):
            mode = SCRIPT.get(model)
            if mode == "timeout":
                raise litellm.Timeout("no reply within 1 s", model, "faulty")
            if mode == "429":
                raise litellm.RateLimitError("quota exceeded, retry later", "faulty", model)
            if mode == "500":
                raise litellm.InternalServerError("upstream exploded", "faulty", model)
            if mode == "cut":
                for part in PARTIAL:
                    yield providers.stream_chunk(part)
                raise litellm.APIConnectionError("connection reset by peer", "faulty", model)
            words = [w + " " for w in ANSWER.split(" ")]
            yield providers.stream_chunk(words[0])
            if model == "good":
                await GATE["good"].wait()
            for w in words[1:]:
                yield providers.stream_chunk(w)
            yield providers.stream_chunk("", finished=True)

    return Scripted()


@pytest.fixture(scope="module", autouse=True)
def faulty_provider() -> None:
    llm.litellm()
    providers.register_provider("faulty", _provider())


@cache
def _question(store: Path) -> Question:
    """The question each test opens, resolved once per store (the resolver reads the store's
    company index each time): each test saves it into a workspace of its own."""
    return aapl_fy2024(store, "T-FAULT")


@pytest.fixture
def cfg(built_store: Config, tmp_path: Path) -> Config:
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import save_questions

    models = {
        "bad": ModelConfig(model="faulty/bad"),
        "good": ModelConfig(model="faulty/good"),
        # packaged weights that were never assembled into this empty folder
        "qwen": ModelConfig(model="local/qwen2.5-coder-1.5b"),
    }
    c = built_store.model_copy(
        update={
            "workspace": tmp_path / "ws.duckdb",
            "models": models,
            "model_dir": tmp_path / "no-models",
        }
    )
    # one retry: a 429 or 500 is retried once (quickly) before the pane shows it
    c.runs = c.runs.model_copy(
        update={"default_model": "bad", "conditions": ["no_rag"], "retries": 1, "backoff": 0.01}
    )
    with open_workspace(c.workspace) as ws:
        save_questions(ws, [_question(built_store.store)])
    return c


class ArenaApp(FinTradeApp):
    def __init__(self, cfg: Config, model: str) -> None:
        super().__init__(cfg, model, start="arena")

    def on_mount(self, event: Any) -> None:
        from fintrade_tui.screens.arena import ArenaScreen

        event.prevent_default()
        self.push_screen(ArenaScreen(question_id="T-FAULT"))


def ready(arena: Any) -> bool:
    """The question is open and a pane has the focus (keys go to the screen, not the picker)."""
    return arena.state.runner is not None and arena.app.focused in arena.panes()


def _text(pane: Any, part: str) -> str:
    return str(pane.query_one(part).content)


async def _fault_beside_a_streaming_pane(pilot: Any, mode: str | None) -> tuple[Any, Any]:
    """Compare the app's model with `good`, run both, and return their panes once the first
    has failed while `good`'s is still streaming (asserted)."""
    SCRIPT["bad"] = mode
    GATE["good"] = asyncio.Event()
    arena = pilot.app.screen
    await until(pilot, lambda: ready(arena), what="the question open, a pane focused")
    while arena.state.compare != "good":  # M cycles the second model through the registry
        await pilot.press("M")
    await until(pilot, lambda: len(arena.panes()) == 2, what="two panes")
    faulty, good = arena.panes()
    assert (faulty.model, good.model) == (arena.state.model, "good")
    await pilot.press("r")
    await until(pilot, lambda: faulty.finished, what="the faulty pane to end")
    # the fault is in its pane; the other pane is mid-answer and still streaming
    await until(
        pilot,
        lambda: good.markdown.source.strip() == ANSWER.split(" ")[0],
        what="the other pane's first word",
    )
    assert good.running and good.status == "streaming"
    return faulty, good


async def _other_pane_completes(pilot: Any, good: Any) -> None:
    GATE["good"].set()
    await until(pilot, lambda: good.finished, what="the other pane to end")
    assert good.status == "completed" and good.markdown.source.strip() == ANSWER
    assert good.fault is None and not good.query_one(".pane-fault").display


@needs_bundle
@pytest.mark.parametrize(
    ("mode", "kind", "reason"),
    [
        ("timeout", "timed out", "Timeout: no reply within 1 s"),
        ("429", "rate limited (429)", "RateLimitError: quota exceeded, retry later"),
        ("500", "server error (5xx)", "InternalServerError: upstream exploded"),
        ("cut", "connection failed", "APIConnectionError: connection reset by peer"),
    ],
)
async def test_a_fault_shows_in_its_pane_and_retry_reruns_only_it(
    cfg: Config, mode: str, kind: str, reason: str
) -> None:
    app = ArenaApp(cfg, "bad")
    async with app.run_test(size=(160, 40)) as pilot:
        try:
            faulty, good = await _fault_beside_a_streaming_pane(pilot, mode)
            block = _text(faulty, ".pane-fault")
            assert faulty.status == "error" and faulty.query_one(".pane-fault").display
            assert block.splitlines()[0] == f"✗ {kind}: {reason}"
            assert block.splitlines()[-1] == "R retries this pane (its condition only)"
            status = _text(faulty, ".pane-status")
            assert status.startswith("error · ") and status.endswith(f"— {kind}")
            runs = RunStore(app.workspace_connection())
            first = runs.get(faulty.run_id)
            assert first["status"] == "error" and first["condition"] == "no_rag"
            if mode == "cut":  # the partial answer stays in the pane and the record, marked
                partial = "".join(PARTIAL)
                assert faulty.markdown.source == partial and first["answer"] == partial
                assert f"✂ cut off mid-answer after {len(partial.strip())} chars" in block
            else:
                assert faulty.markdown.source == "" and "cut off" not in block
            if mode in ("429", "500"):
                assert first["retries"] == 1  # retried once before it showed
            await _other_pane_completes(pilot, good)
            good_run = good.run_id

            SCRIPT["bad"] = None  # the provider recovers; R reruns the faulted pane only
            good.focus()  # the focused pane did not fail: R retries the failed one
            await pilot.press("R")
            await until(
                pilot,
                lambda: faulty.finished and faulty.run_id != first["id"],
                what="the retried pane to end",
            )
            assert faulty.status == "completed" and faulty.markdown.source.strip() == ANSWER
            assert faulty.fault is None and not faulty.query_one(".pane-fault").display
            assert good.run_id == good_run and good.status == "completed"
            stored = runs.list(question="T-FAULT", limit=10)
            assert sorted((r["model"], r["status"]) for r in stored) == [
                ("bad", "completed"),
                ("bad", "error"),
                ("good", "completed"),
            ]
            assert app.is_running and app.return_code is None
        finally:
            GATE["good"].set()


@needs_bundle
async def test_a_missing_local_model_file_names_the_file_and_the_fix(cfg: Config) -> None:
    app = ArenaApp(cfg, "qwen")
    async with app.run_test(size=(160, 40)) as pilot:
        try:
            faulty, good = await _fault_beside_a_streaming_pane(pilot, None)
            block = _text(faulty, ".pane-fault")
            first = block.splitlines()[0]
            gguf = cfg.model_dir / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
            assert first.startswith(f"✗ local model file missing: {gguf}: not assembled yet")
            assert "`make model`" in first
            assert "`fintrade-tui model install qwen2.5-coder-1.5b`" in first
            assert block.splitlines()[-1] == "R retries this pane (its condition only)"
            await _other_pane_completes(pilot, good)
            faulty.focus()
            await pilot.press("R")  # the file is still missing: the same fault, the app up
            await until(
                pilot,
                lambda: not faulty.running and faulty.fault is not None,
                what="the retried pane's fault",
            )
            await pilot.pause()
            assert _text(faulty, ".pane-fault").splitlines()[0] == first
            line = str(app.screen.query_one("#arena-status").content)
            assert line == "done: 1 of 2 completed, 1 failed (R retries) · j judges"
            assert app.is_running and good.status == "completed"
        finally:
            GATE["good"].set()


@needs_bundle
async def test_retry_with_nothing_failed_says_so(cfg: Config) -> None:
    SCRIPT["bad"] = None
    app = ArenaApp(cfg, "bad")
    async with app.run_test(size=(160, 40)) as pilot:
        arena = app.screen
        await until(pilot, lambda: ready(arena), what="the question open, a pane focused")
        await pilot.press("R")
        await until(
            pilot,
            lambda: "no failed pane to retry" in str(arena.query_one("#arena-status").content),
            what="the status line's answer",
        )
        await settle(pilot)
        assert not any(p.running for p in arena.panes())
        assert RunStore(app.workspace_connection()).list(question="T-FAULT", limit=10) == []


def test_fault_text_from_error_lines() -> None:
    """The classification reads only the stored line, so a replay shows the same block."""
    wrapped = (
        "MidStreamFallbackError: litellm.MidStreamFallbackError: litellm.RateLimitError: "
        "slow down Original exception: RateLimitError: litellm.RateLimitError: slow down"
    )
    assert tidy(wrapped) == "RateLimitError: slow down"
    f = fault("error", wrapped, "some text ")
    assert (f.kind, f.reason, f.cut, f.chars) == (
        "rate_limit",
        "RateLimitError: slow down",
        True,
        9,
    )
    assert fault("completed", None, ANSWER) is None and fault("cancelled", "cancelled") is None
    t = fault("timeout", "no complete answer within 60 s", "")
    assert (t.kind, t.reason, t.cut) == ("timeout", "no complete answer within 60 s", False)
    assert fault("error", "BadRequestError: litellm.BadRequestError: nope").kind == "error"
    assert fault("error", "APIError: status 503 from upstream").kind == "server"
    # a number inside a path is not a status code: pytest's temp folder pytest-511 made a
    # missing GGUF read as a server error
    gguf = "UserError: /tmp/pytest-of-root/pytest-511/m/q.gguf: not assembled yet (fix: make model)"
    assert fault("error", gguf).kind == "model_file"
    assert fault("error", "APIError: cannot read /data/run-429/log-503.json").kind == "error"
    assert tidy("APIConnectionError: APIConnectionError: reset") == "APIConnectionError: reset"
