"""Frame pacing (ui/frames.py): a paced screen paints from a public interval timer at its frame
rate, and paints a change made inside `app.batch_update()` once the batch ends, where Textual's
own screen leaves it unpainted until something else reaches the screen."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual import constants
from textual.app import App, ComposeResult
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static

from fintrade_tui.ui.frames import FramePaced
from fintrade_tui.ui.textual_private import paint_pending
from tests.ui.conftest import LIMIT
from tests.ui.test_screenshots import screen_lines


class _Plain(Screen):
    def compose(self) -> ComposeResult:
        yield Static("before", id="text")


class _Paced(FramePaced, _Plain):
    pass


def test_the_frame_interval_is_the_frame_rate_or_textuals_if_higher(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    screen = _Paced()
    monkeypatch.setattr(constants, "MAX_FPS", 60)
    assert screen.frame_interval() == 1 / 240
    monkeypatch.setattr(constants, "MAX_FPS", 500)  # TEXTUAL_FPS=500
    assert screen.frame_interval() == 1 / 500


async def test_a_paced_screen_paints_from_the_timer_it_made() -> None:
    """The timer Textual's screen paints from is the one `frame_timer()` asked `set_interval`
    for: paused until something is dirty, ticking `frame_tick` at the frame interval."""
    made: list[tuple[float, Any, dict[str, Any], Any]] = []
    screen = _Paced()
    set_interval = screen.set_interval

    def recorded(interval: float, callback: Any = None, **kwargs: Any) -> Any:
        timer = set_interval(interval, callback, **kwargs)
        made.append((interval, callback, kwargs, timer))
        return timer

    screen.set_interval = recorded  # type: ignore[method-assign]
    app = App()
    async with app.run_test(size=(40, 5)) as pilot:
        await app.push_screen(screen)
        await pilot.pause()
        want = {"name": "screen_update", "pause": True}
        assert [(i, c, k) for i, c, k, _ in made] == [(1 / 240, screen.frame_tick, want)]
        assert screen.paint_timer is made[0][3]
        assert not paint_pending(screen)
        assert "before" in screen_lines(app.export_screenshot())[0]


async def handled(node: DOMNode) -> None:
    """Until `node` has handled every message sent to it so far (and its idle handlers, which
    run when its queue is empty, have run after them)."""
    done = asyncio.Event()
    node.call_later(done.set)
    await done.wait()


async def _changed_in_a_batch(
    pilot: Pilot[Any], screen: Screen, in_batch: Callable[[], Awaitable[None]] | None = None
) -> asyncio.Event:
    """Change a widget inside `batch_update()`, wait until the screen has taken the change (and
    gone idle) while the batch is still open, and `in_batch()`; close the batch, and send the
    screen nothing more. The event is set when the screen lays out and paints."""
    app = pilot.app
    await app.push_screen(screen)
    await pilot.pause()  # Pilot paints what is pending
    assert not paint_pending(screen)
    painted = asyncio.Event()
    screen.screen_layout_refresh_signal.subscribe(screen, lambda _: painted.set(), immediate=True)
    text = screen.query_one("#text", Static)
    with app.batch_update():
        text.update("after")
        await handled(text)  # the widget asks its screen for a layout and a paint
        await handled(screen)  # the screen takes that, then goes idle: still in the batch
        if in_batch is not None:
            await in_batch()
        assert paint_pending(screen) and not painted.is_set()
    return painted


async def test_changes_made_in_a_batch_are_painted_after_it() -> None:
    app = App()
    async with app.run_test(size=(40, 5)) as pilot:
        screen = _Paced()
        ticked = asyncio.Event()
        tick = screen.frame_tick

        def recorded() -> None:
            ticked.set()
            tick()

        screen.frame_tick = recorded  # type: ignore[method-assign]

        async def a_tick() -> None:  # one lands in the batch: the timer ticks on through it
            ticked.clear()
            async with asyncio.timeout(LIMIT):
                await ticked.wait()

        painted = await _changed_in_a_batch(pilot, screen, a_tick)
        async with asyncio.timeout(LIMIT):  # only a screen that never paints takes this long
            await painted.wait()
        assert not paint_pending(screen)
        assert "after" in screen_lines(app.export_screenshot())[0]


async def test_textual_screens_still_leave_batched_changes_unpainted() -> None:
    """Why FramePaced handles batches: if this fails, Textual paints after a batch on its own
    and `FramePaced.on_idle` can go."""
    app = App()
    async with app.run_test(size=(40, 5)) as pilot:
        screen = _Plain()
        painted = await _changed_in_a_batch(pilot, screen)
        await asyncio.sleep(0.3)  # the subject: nothing paints the change, however long
        assert paint_pending(screen) and not painted.is_set()
