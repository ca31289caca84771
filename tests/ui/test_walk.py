"""The explorer walk (issue 20, part 5) in Pilot: bare `fintrade-tui` opens the explorer; the
Company screen opens on the latest quarter with questions and says so; Questions offers the
nearest quarter with questions instead of an empty list; Escape goes back along the path
(Universe -> Company -> Questions -> Arena and back) keeping each screen's filters and cursor;
every pushed screen's footer has a Back key. The store is the session's `built_store`."""

from __future__ import annotations

import asyncio
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.store.company import quarters
from fintrade_tui.ui.textual_private import notifications, send_as_terminal
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import Question, save_questions
from tests.conftest import BUNDLE, write_config
from tests.ui.conftest import goto, settle, until

ANSWER = "NVDA's ROE was high in the quarter."


def _q(qid: str, tickers: list[str], as_of: date, category: str = "F") -> Question:
    text = f"Question {qid} about {', '.join(tickers)}"
    return Question(
        id=qid, source="jsonl", category=category, text=text, tickers=tickers, as_of=as_of
    )


# NVDA: two questions in calendar Q3 2025, one in Q2 2025; none in Q4 2025 (its latest quarter)
QUESTIONS = [
    _q("N1", ["NVDA"], date(2025, 8, 15)),
    _q("N2", ["NVDA", "AMD"], date(2025, 9, 30), category="T"),
    _q("N3", ["NVDA"], date(2025, 5, 10)),
    _q("A1", ["AAPL"], date(2024, 11, 1)),
]


@pytest.fixture
def cfg(built_store: Config, tmp_path: Path) -> Config:
    models = {"mock": ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": ANSWER})}
    c = built_store.model_copy(update={"workspace": tmp_path / "ws.duckdb", "models": models})
    c.runs = c.runs.model_copy(update={"default_model": "mock", "conditions": ["no_rag"]})
    with open_workspace(c.workspace) as ws:
        save_questions(ws, QUESTIONS)
    return c


def _in_calendar_quarter(qs: list[dict], lo: date, hi: date) -> dict:
    (q,) = [q for q in qs if lo <= q["period_end"] <= hi]
    return q


def _escape_shows(screen: Any) -> str | None:
    """The footer's description of Escape on this screen (None: not shown)."""
    active = screen.active_bindings.get("escape")
    return active.binding.description if active and active.binding.show else None


def _ids(screen: Any) -> list[str]:
    table = screen.query_one("#questions")
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


# -- 1. bare `fintrade-tui` -----------------------------------------------------------------
def test_bare_command_opens_the_explorer_like_tui(tmp_path: Path, monkeypatch) -> None:
    from fintrade_tui.application import readiness
    from fintrade_tui.cli import main
    from fintrade_tui.ui.app import FinTradeApp

    opened: list[tuple[str, Path, str]] = []
    monkeypatch.setattr(readiness, "ensure_store", lambda cfg, say: None)
    monkeypatch.setattr(readiness, "ensure_questions", lambda cfg, ws, say: None)
    monkeypatch.setattr(
        FinTradeApp, "run", lambda self: opened.append((self.start, self.cfg.workspace, self.model))
    )
    ws = tmp_path / "ws.duckdb"
    path = write_config(tmp_path, BUNDLE, extra=f"workspace: {ws}\n")
    runner = CliRunner()
    for args in (["--config", str(path)], ["--config", str(path), "tui"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
    default = Config().runs.default_model
    assert opened == [("universe", ws, default)] * 2
    # through the environment, too; subcommands and their options are unchanged
    result = runner.invoke(main, [], env={"FINTRADE_CONFIG": str(path)})
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["--config", str(path), "tui", "--screen", "questions"])
    assert result.exit_code == 0, result.output
    assert [o[0] for o in opened] == ["universe"] * 3 + ["questions"]
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0 and "Commands:" in result.output and "tui" in result.output
    assert len(opened) == 4  # --help opens nothing
    result = runner.invoke(main, ["--config", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2 and "missing.yaml" in result.output and len(opened) == 4


# -- 2. the Company screen opens where the questions are --------------------------------------
async def test_company_opens_on_latest_quarter_with_questions(cfg: Config, con) -> None:
    from fintrade_tui.ui.app import FinTradeApp

    qs = quarters(con, "NVDA")
    q3 = _in_calendar_quarter(qs, date(2025, 7, 1), date(2025, 9, 30))
    assert qs[-1]["period_end"] > date(2025, 9, 30)  # the latest quarter has no question
    app = FinTradeApp(cfg)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await pilot.press(*"NVDA", "enter")
        await settle(pilot)
        screen = app.screen
        assert type(screen).__name__ == "CompanyScreen"
        assert screen.view["quarter"]["key"] == q3["key"]
        assert screen.sub_title == (
            f"NVDA · {q3['key']} (Q3 2025): the latest quarter with questions (2); End: latest data"
        )
        line = str(screen.query_one("#company-quarter").content)
        assert q3["key"] in line and "q questions: 2 in Q3 2025" in line
        await pilot.press("left")  # the keys step quarters as before
        await settle(pilot)
        assert screen.view["quarter"]["key"] == qs[qs.index(q3) - 1]["key"]
        assert "q questions: 1 in Q2 2025" in str(screen.query_one("#company-quarter").content)
        await pilot.press("end")
        await settle(pilot)
        assert screen.view["quarter"]["key"] == qs[-1]["key"]
        assert str(screen.query_one("#company-quarter").content).endswith("q questions)")

        # a company no question names: the latest data, and the subtitle says why
        await goto(pilot, "company", ticker="MSFT")
        assert app.screen.view["quarter"]["key"] == quarters(con, "MSFT")[-1]["key"]
        assert app.screen.sub_title == "MSFT · no question names MSFT: the latest data"
        # a quarter asked for is opened as asked, subtitle unchanged
        await goto(pilot, "company", ticker="NVDA", quarter=qs[-1]["key"])
        assert app.screen.view["quarter"]["key"] == qs[-1]["key"]
        assert app.screen.sub_title == "NVDA"


# -- 3. Questions: never an empty dead end ----------------------------------------------------
async def test_questions_offer_the_nearest_quarter(cfg: Config, con) -> None:
    from fintrade_tui.ui.app import FinTradeApp

    latest = quarters(con, "NVDA")[-1]
    app = FinTradeApp(cfg)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await goto(pilot, "company", ticker="NVDA", quarter=latest["key"])
        await pilot.press("q")
        await settle(pilot)
        screen = app.screen
        assert type(screen).__name__ == "QuestionsScreen" and _ids(screen) == []
        hint = screen.query_one("#q-nearest")
        assert hint.display
        assert str(hint.content) == (
            "No question in Q4 2025 for NVDA; nearest with questions: Q3 2025 (2)"
            " — press n to show it"
        )
        assert screen.active_bindings["n"].binding.description == "Nearest"
        await pilot.press("n")
        await settle(pilot)
        assert _ids(screen) == ["N1", "N2"]
        assert screen.query_one("#q-quarter").value == date(2025, 9, 30)
        assert not hint.display and "n" not in screen.active_bindings
        await pilot.press("c")  # category F: only N1 in Q3 2025
        await pilot.pause()
        assert _ids(screen) == ["N1"]
        await pilot.press("c")  # category T: N2
        await pilot.pause()
        assert _ids(screen) == ["N2"]
        await pilot.press("c")  # FT: none in any quarter for NVDA -> the category is dropped
        await pilot.pause()
        assert _ids(screen) == []
        assert str(hint.content) == (
            "No question in Q3 2025 for NVDA in category FT; without the category filter: 2"
            " — press n to show it"
        )
        await pilot.press("n")
        await pilot.pause()
        assert _ids(screen) == ["N1", "N2"] and screen.query_one("#q-category").value == "*"


def test_nearest_rules() -> None:
    from fintrade_tui.screens.questions import nearest, nearest_line

    f = dict.fromkeys(("category", "ticker", "quarter", "status"))
    assert nearest([], f) is None
    assert nearest(QUESTIONS, f) is None  # something is shown: nothing to offer
    # Q1 2025 lies one quarter from both Q4 2024 (AAPL... not NVDA) and Q2 2025: NVDA -> Q2
    got = nearest(QUESTIONS, {**f, "ticker": "nvda", "quarter": date(2025, 3, 31)})
    assert got == {**f, "ticker": "nvda", "quarter": date(2025, 6, 30)}
    # a tie (Q1 2025 between A1's Q4 2024 and N3's Q2 2025) goes to the earlier quarter
    assert nearest(QUESTIONS, {**f, "quarter": date(2025, 3, 31)})["quarter"] == date(2024, 12, 31)
    # a ticker no question names: the ticker filter goes, the quarter stays when it can
    got = nearest(QUESTIONS, {**f, "ticker": "ZZZ", "quarter": date(2025, 9, 30)})
    assert got == {**f, "quarter": date(2025, 9, 30)}
    assert nearest_line(QUESTIONS, {**f, "ticker": "ZZZ", "quarter": date(2025, 9, 30)}, got) == (
        "No question in Q3 2025 for ZZZ; without the ticker filter: 2 — press n to show it"
    )
    got = nearest(QUESTIONS, {**f, "ticker": "ZZZ"})
    assert got == f
    assert nearest_line(QUESTIONS, {**f, "ticker": "ZZZ"}, got) == (
        "No question for ZZZ; every question: 4 — press n to show it"
    )


# -- 4. Escape walks back, keeping each screen's place ---------------------------------------
async def test_escape_walks_back_keeping_filters_and_cursor(cfg: Config) -> None:
    from fintrade_tui.ui.app import FinTradeApp

    app = FinTradeApp(cfg)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        universe = app.screen
        assert _escape_shows(universe) is None  # the first screen: nowhere to go back to
        await pilot.press(*"semi")
        assert _escape_shows(universe) == "Clear filter"
        await pilot.press("down", "down")  # leaves the filter for the table, then row 2
        table = universe.query_one("#universe-table")
        row = table.cursor_row
        ticker = universe.shown[row]["ticker"]
        assert row == 1 and len(universe.shown) > 2
        await pilot.press("enter")
        await settle(pilot)
        company = app.screen
        assert type(company).__name__ == "CompanyScreen" and company.ticker == ticker
        assert _escape_shows(company) == "Back"
        await pilot.press("escape")
        assert app.screen is universe
        assert universe.query_one("#universe-filter").value == "semi"
        assert table.cursor_row == row and universe.shown[row]["ticker"] == ticker

        universe.query_one("#universe-filter").value = "NVDA"
        await pilot.pause()
        await pilot.press("down", "enter")
        await settle(pilot)
        company = app.screen
        key = company.view["quarter"]["key"]
        await pilot.press("q")
        await settle(pilot)
        questions = app.screen
        assert _ids(questions) == ["N1", "N2"] and _escape_shows(questions) == "Back"
        await pilot.press("down")  # the cursor on N2
        await pilot.press("slash", "escape")  # Escape in a filter: back to the table only
        assert app.screen is questions and app.focused is questions.query_one("#questions")
        await pilot.press("a")
        await settle(pilot)
        arena = app.screen
        assert type(arena).__name__ == "ArenaScreen" and arena.question_id == "N2"
        assert _escape_shows(arena) == "Back"
        await pilot.press("escape")
        assert app.screen is questions and questions.current().id == "N2"
        await pilot.press("escape")
        assert app.screen is company and company.view["quarter"]["key"] == key
        await pilot.press("escape")
        assert app.screen is universe and universe.query_one("#universe-filter").value == "NVDA"
        await pilot.press("escape")  # on the first screen Escape clears its filter
        assert app.screen is universe and universe.query_one("#universe-filter").value == ""
        await pilot.press("escape")  # and then does nothing
        assert app.screen is universe and app.is_running

        await pilot.press("f4")  # a screen opened by its F key goes back the same way
        await settle(pilot)
        results = app.screen
        assert type(results).__name__ == "ResultsScreen" and _escape_shows(results) == "Back"
        await pilot.press("f1")
        await settle(pilot)
        assert _escape_shows(app.screen) == "Back"  # a Universe pushed over Results
        await pilot.press("escape")
        assert app.screen is results
        await pilot.press("escape")
        assert app.screen is universe


async def test_escape_on_a_streaming_arena_warns_first(cfg: Config) -> None:
    """Leaving cancels the answers still streaming: the first Escape says so and stays."""
    import asyncio

    from litellm import CustomLLM

    from fintrade_tui.models import llm, providers
    from fintrade_tui.ui.app import FinTradeApp
    from fintrade_tui.workspace.run_records import RunStore

    class Stalled(CustomLLM):
        """Streams the answer's first word, then nothing until the Arena cancels it."""

        async def astreaming(self, model: str, messages: list, **_: Any):
            yield providers.stream_chunk(ANSWER.split(" ")[0] + " ")
            await asyncio.Event().wait()  # never set: mid-answer until cancelled
            yield providers.stream_chunk("", finished=True)

    llm.litellm()
    providers.register_provider("walk-slow", Stalled())
    cfg.models["slow"] = ModelConfig(model="walk-slow/x")
    app = FinTradeApp(cfg, model="slow", start="questions")
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        questions = app.screen
        await pilot.press("a")
        arena = await until(
            pilot,
            lambda: type(app.screen).__name__ == "ArenaScreen" and app.screen,
            what="the Arena",
        )
        await until(  # the question open, its pane focused: `r` runs it
            pilot,
            lambda: arena.state.runner is not None and app.focused in arena.panes(),
            what="the question open in the Arena",
        )
        await pilot.press("r")
        pane = await until(
            pilot,
            lambda: next((p for p in arena.panes() if p.streaming), None),
            what="a streaming pane",
        )
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is arena
        assert any("Escape again leaves" in n.message for n in notifications(app))
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is questions, what="back on the questions")
        assert app.is_running
        await settle(pilot)  # the stalled answer was cancelled, and recorded so
        assert RunStore(app.workspace_connection()).get(pane.run_id)["status"] == "cancelled"


async def test_keys_typed_in_a_burst_all_reach_the_filter(cfg: Config) -> None:
    """A terminal delivers a fast typist's keys back to back: the first moves the focus from
    the table to the filter, and the next ones, already on their way to the table, must still
    land in the filter, in order (the tmux walk once saw "NDA" for "NVDA"). One explorer takes
    the bursts at each spacing in turn, each from where a new one starts: the filter empty and
    the table focused."""
    from textual import events

    from fintrade_tui.ui.app import FinTradeApp

    app = FinTradeApp(cfg)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#universe-table")
        box = app.screen.query_one("#universe-filter")
        assert app.focused is table
        for gap in (0.0, 0.001, 0.004):
            for key in "NVDA1":
                event = events.Key(key, key)
                event.set_sender(app)
                send_as_terminal(app, event)  # as the terminal's reader thread does
                await asyncio.sleep(gap)  # the subject: keys this far apart, a typist's burst
            # the driver posts each key from a task of its own: the app may look idle before
            # the last of them is even in its queue, so wait for what the keys should do
            await until(pilot, lambda: box.value == "NVDA1", what=f"keys {gap} s apart typed")
            await settle(pilot)
            assert (box.value, app.focused) == ("NVDA1", box), f"keys {gap} s apart"
            box.value = ""  # back to where the explorer started
            table.focus()
            await settle(pilot)
            assert app.focused is table and not box.value
        app.set_focus(None)  # nothing focused: the screen takes the key
        await pilot.press("m")
        assert box.value == "m" and app.focused is box
