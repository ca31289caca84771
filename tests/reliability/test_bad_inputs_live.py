"""Bad-input corpus, part 2 (issue 20 part 2): what reaches a running program. TUI inputs (the
Universe and Questions filters typed or pasted with regex and control characters, data holding
Textual markup) keep the app alive and show the text as text; model replies (empty, only
whitespace, 1 MB, invalid UTF-8 in a stream, a tool call with an unknown name or malformed
arguments) end in a recorded run with a clear status, never a crash; judge replies (scores as
strings, NaN, nested 10,000 deep, empty) are recorded as judge failures with the raw replies.
A scripted litellm provider (`badin/<name>`) gives the replies; nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest

from fintrade_tui.config import Config, ModelConfig, load_config
from fintrade_tui.judging.judge import JudgeInput, judge_run, panel_run
from fintrade_tui.models import llm, providers
from fintrade_tui.runs.runner import Runner, RunSpec, drain
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import RESOLVED, Question, save_questions
from fintrade_tui.workspace.run_records import RunStore
from tests.reliability.test_bad_inputs import DEEP, HAS_STORE, STORE

needs_store = pytest.mark.skipif(not HAS_STORE, reason="no current store at data/fintrade.duckdb")
MB = 1 << 20
HOSTILE = "[b]bold[/b] [/x] [@click=app.quit]quit[/] \x1b[2J\x07"


@dataclass(frozen=True)
class Reply:
    id: str
    entry: str
    input: str
    chunks: tuple[str, ...] = ()  # the streamed answer
    tool: tuple[str, str] | None = None  # (name, arguments) of one native tool call
    status: str = "completed"
    needle: str = ""  # in the run's error (or its tool call's result)
    gets: str = ""


REPLIES = [
    Reply("reply-empty", "model reply", "an empty reply", (), status="error",
          needle="replied with nothing", gets="run `error`: the model replied with nothing"),
    Reply("reply-blank", "model reply", "only whitespace", (" \n\t ", "\n"), status="error",
          needle="only whitespace", gets="run `error`: the model replied with only whitespace"),
    Reply("reply-1mb", "model reply", "a 1 MB reply", ("x" * (64 * 1024),) * 16,
          gets="run `completed`, the whole 1 MB answer stored"),
    Reply("reply-utf8", "model reply", "invalid UTF-8 in the stream", ("caf\udce9 ", "ok"),
          gets="run `completed`, the bad byte stored as U+FFFD"),
    Reply("reply-tool-name", "model reply", "a tool call with an unknown name", ("done",),
          tool=("launch_missiles", "{}"), needle="unknown tool 'launch_missiles'",
          gets="run `completed`; the call recorded with `unknown tool ... (tools: ...)`"),
    Reply("reply-tool-args", "model reply", "a tool call with malformed arguments", ("done",),
          tool=("get_signal", '{"ticker": "AAPL", '), needle="not valid JSON",
          gets="run `completed`; the call recorded raw with `arguments ... are not valid JSON`"),
]  # fmt: skip

DIM = {"score": 4, "justification": "ok"}
GOOD = {d: DIM for d in ("accuracy", "completeness", "relevance", "clarity")} | {
    "metrics_used": ["ROE"],
    "fundamental_integration": 3,
    "trading_signal_integration": 1,
    "reasoning_depth": 3,
}
JUDGE = [
    ("judge-strings", "scores as strings", json.dumps(GOOD | {"accuracy": {**DIM, "score": "5"}})),
    ("judge-nan", "a NaN score", json.dumps(GOOD).replace('depth": 3', 'depth": NaN')),
    ("judge-nested", "JSON nested 10,000 deep", '{"accuracy": ' + "[" * DEEP + "]" * DEEP + "}"),
    ("judge-empty", "an empty reply", ""),
    ("judge-float", "a score of 4.5", json.dumps(GOOD | {"clarity": {**DIM, "score": 4.5}})),
]  # fmt: skip


class Script:
    """The scripted provider: streams `chunks[name]`; a whole completion (tool rounds, judges)
    answers `whole[name]` in turn, the last one repeated."""

    chunks: dict[str, tuple[str, ...]] = {}
    whole: dict[str, list[Any]] = {}
    calls: dict[str, int] = {}

    @classmethod
    def install(cls) -> None:
        from litellm import CustomLLM, ModelResponse

        class Provider(CustomLLM):
            async def astreaming(self, model: str, messages: list, **_: Any):
                for text in cls.chunks[model.split("/")[-1]]:
                    yield providers.stream_chunk(text)
                yield providers.stream_chunk("", finished=True)

            async def acompletion(self, model: str, messages: list, **_: Any):
                name = model.split("/")[-1]
                n = cls.calls[name] = cls.calls.get(name, 0) + 1
                seq = cls.whole[name]
                msg = seq[min(n, len(seq)) - 1]
                msg = msg if isinstance(msg, dict) else {"role": "assistant", "content": msg}
                return ModelResponse(model=model, choices=[{"index": 0, "message": msg}])

        llm.litellm()
        providers.register_provider("badin", Provider())


def _question(qid: str = "B1", text: str = "Is Apple profitable?") -> Question:
    return Question(
        id=qid, source="jsonl", category="F", text=text, tickers=["AAPL"],
        as_of=date(2024, 11, 1), golden=["roe"], status=RESOLVED,
        reference_answer="Yes: ROE about 1.6.",
    )  # fmt: skip


@pytest.fixture
def cfg(tmp_path: Path) -> Config:
    Script.install()
    Script.calls.clear()
    c = load_config(_config_file(tmp_path))
    c.runs = c.runs.model_copy(update={"retries": 0, "backoff": 0.0})
    c.judging = c.judging.model_copy(update={"retries": 1})
    return c


def _config_file(tmp: Path) -> Path:
    p = tmp / "config.yaml"
    p.write_text(f"store: {STORE}\nworkspace: {tmp / 'ws.duckdb'}\n")
    return p


# ---- model replies ----------------------------------------------------------------------------
@needs_store
@pytest.mark.parametrize("case", REPLIES, ids=[r.id for r in REPLIES])
def test_a_bad_model_reply_ends_in_a_recorded_run(case: Reply, cfg: Config) -> None:
    Script.chunks[case.id] = case.chunks
    condition = "no_rag"
    if case.tool:
        name, args = case.tool
        call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": args}}
        Script.whole[case.id] = [{"role": "assistant", "content": None, "tool_calls": [call]}, ""]
        condition = "tool_use"
    cfg.models = {case.id: ModelConfig(model=f"badin/{case.id}", tools="native")}
    spec = RunSpec(_question(), condition, case.id)
    with open_workspace(cfg.workspace) as ws:
        end = asyncio.run(drain(Runner(cfg, RunStore(ws)).stream(spec), lambda ev: None))
        row = ws.execute("SELECT status, error, answer, tool_calls FROM runs").fetchall()
    assert len(row) == 1, row  # exactly one run, recorded
    status, error, answer, tool_calls = row[0]
    assert status == end["status"] == case.status, (status, error)
    assert answer == "".join(case.chunks).replace("\udce9", "\ufffd")
    if case.status == "error":
        assert case.needle in error and "\n" not in error
    if case.tool:
        (recorded,) = json.loads(tool_calls)
        assert recorded["name"] == case.tool[0] and case.needle in recorded["result"]["error"]


# ---- judge replies ----------------------------------------------------------------------------
@pytest.mark.parametrize("case", JUDGE, ids=[c[0] for c in JUDGE])
def test_a_bad_judge_reply_is_a_recorded_failure(case: tuple[str, str, str], cfg: Config) -> None:
    cid, _, reply = case
    Script.whole[cid] = [reply]
    cfg.models = {cid: ModelConfig(model=f"badin/{cid}")}
    j = JudgeInput({"id": "r1", "answer": "Apple's ROE is high."}, _question())
    s = asyncio.run(judge_run(cfg, j, cid))
    assert s.status == "failure" and s.accuracy is None
    assert Script.calls[cid] == 2  # asked again once (judging.retries), then given up
    assert s.detail["raw_outputs"] == [reply, reply]
    assert s.detail["error"].startswith("invalid judge output") and "\n" not in s.detail["error"]


def test_a_panel_vote_nested_deep_is_a_recorded_failure(cfg: Config) -> None:
    Script.whole["panel"] = ['{"vote": ' + "[" * DEEP + "]" * DEEP + "}"]
    cfg.models = {"panel": ModelConfig(model="badin/panel")}
    cfg.judging = cfg.judging.model_copy(update={"panel_size": 1})
    j = JudgeInput({"id": "r1", "answer": "Apple's ROE is high."}, _question())
    s = asyncio.run(panel_run(cfg, j, "panel"))
    assert s.status == "failure" and "nested too deep" in json.dumps(s.detail)


# ---- the TUI ----------------------------------------------------------------------------------
def _screen_text(app: Any) -> str:
    from textual.widget import Widget

    out = []
    for w in app.screen.walk_children(Widget):
        if w.region.area:
            lines = w.render_lines(w.region.reset_offset)
            out += ["".join(s.text for s in strip) for strip in lines]
    return "\n".join(out)


TYPED = [  # (case id, what is typed / pasted into the filter)
    ("tui-universe-regex", "universe", "(*["),
    ("tui-universe-markup", "universe", "[/x]"),
    ("tui-universe-paste", "universe", "\x1b[2J\x07NV"),
    ("tui-questions-regex", "questions", "A(*["),
    ("tui-questions-paste", "questions", "\x1b[2J\x07[/x]"),
]


@needs_store
@pytest.mark.parametrize("case", TYPED, ids=[c[0] for c in TYPED])
async def test_filters_take_any_text_and_the_app_stays_alive(
    case: tuple[str, str, str], cfg: Config
) -> None:
    from textual import events
    from textual.widgets import Input, Static

    from fintrade_tui.ui.app import FinTradeApp
    from tests.ui.conftest import notices, settle, until

    _, screen, text = case
    with open_workspace(cfg.workspace) as ws:
        save_questions(ws, [_question("B1", f"Apple {HOSTILE}")])
    app = FinTradeApp(cfg, start=screen)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        sent = notices(app)
        box = app.screen.query_one("#universe-filter" if screen == "universe" else "#q-ticker")
        assert isinstance(box, Input)
        box.focus()
        if "\x1b" in text:  # a paste: control characters and all
            box.post_message(events.Paste(text))
        else:
            await pilot.press(*text)
        typed = "".join(ch for ch in text if ch.isprintable())  # controls dropped, said so
        # the Input shows what was pasted until the filter's handler has cleaned it
        await until(pilot, lambda: box.value == typed, what="the filter without control chars")
        await settle(pilot)
        assert app.is_running and app.return_code is None
        shown = _screen_text(app)
        assert "\x1b" not in shown and "\x07" not in shown
        assert box.value == typed
        assert ("control characters removed from the filter" in sent) == (typed != text)
        if screen == "universe":
            count = str(app.screen.query_one("#universe-count", Static).render())
            assert f"matching {typed.strip()!r}" in count  # the literal, never markup
        else:  # nothing matches: the nearest-filters line names the filter as typed
            line = str(app.screen.query_one("#q-nearest", Static).render())
            assert f"for {typed.strip().upper()}" in line, line
        await pilot.press("escape", "escape")
        await settle(pilot)
        assert app.is_running


@needs_store
async def test_markup_in_data_shows_as_text(cfg: Config, monkeypatch: pytest.MonkeyPatch) -> None:
    """A question text, a ticker and a company name holding `[b]`, `[/x]` or a click action."""
    import fintrade_tui.screens.universe as universe_screen

    from fintrade_tui.ui.app import FinTradeApp
    from tests.ui.conftest import settle

    real = universe_screen.universe

    def hostile(cur: duckdb.DuckDBPyConnection, counts: Any) -> list[dict]:
        rows = real(cur, counts)
        return [rows[0] | {"ticker": "[/X]", "name": f"Evil {HOSTILE}"}, *rows[1:]]

    monkeypatch.setattr(universe_screen, "universe", hostile)
    with open_workspace(cfg.workspace) as ws:
        q = _question("Q[/x]", f"Is {HOSTILE} up?")
        save_questions(ws, [Question(**{**q.__dict__, "tickers": ["[/X]", "AAPL"]})])
    app = FinTradeApp(cfg)
    async with app.run_test(size=(200, 48)) as pilot:
        await settle(pilot)
        shown = _screen_text(app)
        assert "[/X]" in shown and "Evil [b]bold[/b] [/x]" in shown and "\x1b" not in shown
        app.action_goto("questions")
        await settle(pilot)
        shown = _screen_text(app)
        assert "Q[/x]" in shown and "[/X], AAPL" in shown and "[b]bold[/b]" in shown
        assert app.is_running


def test_ask_live_panel_shows_a_reply_as_text() -> None:
    """`ask`'s side-by-side panels: a reply with markup and escapes is drawn as text."""
    from rich.console import Console

    from fintrade_tui.cli import ask as cli_ask

    cols = cli_ask._LiveColumns(["No-RAG", "RAG"], enabled=True)
    cols.text = [f"Answer {HOSTILE}", "[/x]"]
    out = Console(width=160, record=True, force_terminal=False)
    out.print(cols._render())  # a str Panel would raise MarkupError on `[/x]`
    text = out.export_text()
    assert "[b]bold[/b]" in text and "[@click=app.quit]quit[/]" in text and "\x1b" not in text
    assert "␛[2J" in text
