"""UI room: headless SVG screenshots of the explorer's screens (Textual's own export).

`shoot()` opens one screen in a headless app (`App.run_test`), waits until the screen's workers
have finished and their results reached the widgets, and returns `export_screenshot()`'s SVG.
It runs its own event loop (`asyncio.run`) in a fresh `contextvars.Context`, so it can be called
from a CLI command, from a worker thread of a running explorer (whose context variables name
that app) or from any plain thread; called on a thread whose event loop is running, it draws on
a helper thread instead (and blocks until done).

A running explorer or a CLI command already holding the workspace passes its open DuckDB
connections (`store`, `workspace`): DuckDB allows one writing process, so the workspace cannot
be opened a second time. Without them the app opens them as it always does, and closes them.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from contextlib import suppress
from datetime import date
from typing import Any

from textual import events
from textual.widgets import DataTable, Input, TextArea

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.ui.app import FinTradeApp

SCREENS = ("universe", "company", "questions", "arena", "results", "own_question")
SETTLE_ROUNDS = 3  # pause + wait for workers, as tests/ui/conftest.py `settle()` does
SCREEN_WAITS = 400  # x 50 ms: how long the asked-for screen may take to be pushed
MAX_ROUNDS = 40  # a screen whose workers start further workers: keep waiting, but not forever
TABLE_WAIT = 30.0  # seconds: only a table that never settles takes this long


class ShotApp(FinTradeApp):
    """The explorer opened straight on one screen, on the caller's connections if given; the
    errors a screen reports are kept (a screenshot of a failed screen is an error)."""

    watch_workspace = False  # a picture of one moment: nothing to refresh

    def __init__(
        self,
        cfg: Config,
        screen: str,
        screen_args: dict[str, Any],
        store: Any = None,
        workspace: Any = None,
    ) -> None:
        super().__init__(cfg, start=screen)
        self.animation_level = "none"  # no transitions half-way in the picture
        self.screen_args = screen_args
        self.given_store, self.given_workspace = store, workspace
        self.errors: list[tuple[str, BaseException]] = []

    def on_mount(self, event: events.Mount | None = None) -> None:
        if event is not None:  # Textual passes it (a handler that takes a parameter)
            event.prevent_default()  # FinTradeApp.on_mount opens `start` without arguments
        # the own-question form opens from the Company screen (`o`), prefilled from it
        first = "company" if self.start == "own_question" else self.start
        self.action_goto(first, **self.screen_args)

    def store(self) -> Any:
        if self.given_store is None:
            return super().store()
        with self._lock:
            return self.given_store.cursor()

    def workspace(self) -> Any:
        if self.given_workspace is None:
            return super().workspace()
        with self._lock:
            return self.given_workspace.cursor()

    def workspace_connection(self) -> Any:
        if self.given_workspace is None:
            return super().workspace_connection()
        return self.given_workspace

    def notify_error(self, where: str, exc: BaseException) -> None:
        self.errors.append((where, exc))
        super().notify_error(where, exc)

    def close_own(self) -> None:
        """Close what this app opened itself (never the caller's connections)."""
        for con in (self._store, self._workspace):
            if con is not None:
                con.close()
        self._store = self._workspace = None


def shoot(
    cfg: Config,
    screen: str,
    *,
    size: tuple[int, int] = (140, 44),
    ticker: str | None = None,
    quarter: str | None = None,
    run_ids: list[str] | None = None,
    question_id: str | None = None,
    store: Any = None,
    workspace: Any = None,
    title: str | None = None,
) -> str:
    """SVG text of one screen of the explorer, drawn headlessly at `size` (columns, rows).

    `screen`: universe, company (needs `ticker`; `quarter` is a quarter key such as
    "FY2024 Q4", a period end date, "latest" for the latest quarter with data, or None for the
    quarter the screen opens on: the latest with questions), questions (optional `ticker`,
    `quarter` as a quarter end date, `question_id` to put the cursor on), arena (`run_ids`
    replays those stored runs read-only; `question_id` opens a question) or results.
    `store` / `workspace`: open DuckDB connections to reuse. `title`: the SVG window title."""
    args = screen_args(screen, ticker, quarter, run_ids, question_id)
    width, height = size
    if width < 20 or height < 10:
        raise UserError(f"size {width}x{height}", "is too small to draw", "use e.g. 140x44")
    app = ShotApp(cfg, screen, args, store=store, workspace=workspace)
    focus = question_id if screen == "questions" else None
    return _in_own_loop(lambda: _draw(app, size, title, focus))


def screen_args(
    screen: str,
    ticker: str | None,
    quarter: str | None,
    run_ids: list[str] | None,
    question_id: str | None,
) -> dict[str, Any]:
    """The screen's constructor arguments; options the screen has no use for are an error."""
    if screen not in SCREENS:
        raise UserError(f"screen {screen!r}", "is not a screen", f"use one of {', '.join(SCREENS)}")
    takes = {
        "universe": set(),
        "company": {"ticker", "quarter"},
        "questions": {"ticker", "quarter", "question"},
        "arena": {"run", "question"},
        "results": set(),
        "own_question": {"ticker", "quarter"},
    }[screen]
    given = {"ticker": ticker, "quarter": quarter, "run": run_ids, "question": question_id}
    for name, value in given.items():
        if value and name not in takes:
            fix = f"drop it, or use it with {_users(name)}"
            raise UserError(f"--{name} {_show(value)}", f"means nothing to {screen}", fix)
    if screen in ("company", "own_question"):
        if not ticker or not ticker.strip():
            raise UserError("company", "needs a ticker", "pass --ticker, e.g. --ticker NVDA")
        when: str | date | None = date.max if (quarter or "").lower() == "latest" else quarter
        return {"ticker": ticker, "quarter": when}
    if screen == "questions":
        return {"ticker": ticker, "quarter_end": _day(quarter)}
    if screen == "arena":
        if run_ids:
            return {"run_ids": list(run_ids), "read_only": True, "question_id": question_id}
        return {"question_id": question_id}
    return {}


def _users(option: str) -> str:
    names = {
        "ticker": "company, own_question or questions",
        "quarter": "company, own_question or questions",
        "run": "arena",
        "question": "arena or questions",
    }
    return names[option]


def _show(value: Any) -> str:
    return " ".join(value) if isinstance(value, list) else str(value)


def _day(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UserError(
            f"--quarter {value!r}", "is not a quarter end date", "use YYYY-MM-DD, e.g. 2024-09-30"
        ) from None


def _in_own_loop(make: Any) -> str:
    """Run the coroutine `make()` returns on an event loop of its own, in an empty context
    (a Textual worker thread carries its app in context variables), on this thread, or on a
    helper thread when this one is running a loop already."""

    def run() -> str:
        return contextvars.Context().run(asyncio.run, make())

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    out: dict[str, Any] = {}

    def helper() -> None:
        try:
            out["svg"] = run()
        except BaseException as exc:  # handed to the caller's thread
            out["error"] = exc

    thread = threading.Thread(target=helper, name="fintrade-screenshot")
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out["svg"]


async def _draw(app: ShotApp, size: tuple[int, int], title: str | None, focus: str | None) -> str:
    try:
        async with app.run_test(size=size) as pilot:
            if app.start == "own_question":
                from fintrade_tui.screens.company import CompanyScreen

                await _settle(pilot, "company")
                company = app.screen
                if not isinstance(company, CompanyScreen):  # _settle waited for it
                    raise RuntimeError(f"the Company screen is not up ({company!r} is)")
                company.action_own()  # `o`: the form, prefilled from the Company screen
            await _settle(pilot)
            if app.errors:
                where, exc = app.errors[0]
                if isinstance(exc, UserError):
                    raise exc
                first = (str(exc).splitlines() or [""])[0][:200]
                raise UserError(
                    where,
                    f"the screen could not be drawn ({type(exc).__name__}: {first})",
                    "check the options, the store and the workspace",
                )
            if focus:
                _cursor_on(app, focus)
            _no_blink(app)
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            await tables_measured(pilot)  # last: nothing may add rows after it
            return app.export_screenshot(title=title)
    finally:
        app.close_own()


async def _settle(pilot: Any, screen: str | None = None) -> None:
    """Until the asked-for screen (or `screen`) is up and no worker runs (a worker's result
    may start another: Arena's load, then panes)."""
    from fintrade_tui.ui.registry import SCREENS as CLASSES

    app = pilot.app
    want = CLASSES[screen or app.start][1]
    for _ in range(SCREEN_WAITS):  # pushed on mount: on a busy machine that is not at once
        if type(app.screen).__name__ == want:
            break
        await pilot.pause(0.05)
    for i in range(MAX_ROUNDS):
        await pilot.pause()
        # not `wait_for_complete`: it raises a worker's error if the worker is still listed;
        # the screen's own handler reports that error (ShotApp.errors), which _draw raises
        await asyncio.gather(*(w.wait() for w in list(app.workers)), return_exceptions=True)
        if i + 1 >= SETTLE_ROUNDS and not any(w.is_running for w in app.workers):
            break
    await pilot.pause()


async def tables_measured(pilot: Any) -> None:
    """Every DataTable has handled what it was sent, and the screen has been painted after.

    The screens give their tables fixed column widths from the data they show (ui/tables.py),
    so the picture no longer waits for a table to measure its rows on its own Idle: a busy
    machine once drew every column cut to its header's width. What a table still sizes on its
    Idle is its scroll extent (a scrollbar's thumb), so each is waited for: Textual's
    `wait_for_refresh` runs after the messages the table already holds and the screen's next
    paint."""
    for table in pilot.app.screen.query(DataTable):
        with suppress(TimeoutError):  # a table that never settles is drawn as it is
            async with asyncio.timeout(TABLE_WAIT):
                await table.wait_for_refresh()
    await pilot.pause()


def _cursor_on(app: ShotApp, question_id: str) -> None:
    table = app.screen.query_one("#questions", DataTable)
    try:
        row = table.get_row_index(question_id)
    except Exception:
        raise UserError(
            f"--question {question_id!r}",
            "is not listed on the questions screen",
            "check the id and the --ticker / --quarter filters",
        ) from None
    table.move_cursor(row=row)


def _no_blink(app: ShotApp) -> None:
    """A cursor caught half-way through a blink would differ from one export to the next."""
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    for area in app.screen.query(TextArea):
        area.cursor_blink = False
