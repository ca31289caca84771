"""Frame pacing: after a frame that overran its tick, the screen's update timer fires at the
next tick (FrameTimer), where Textual's own Timer idles one tick more."""

from __future__ import annotations

import asyncio
import time

from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from fintrade_tui.ui.frames import FramePaced, FrameTimer

INTERVAL = 0.1


async def _second_tick_after(timer_class: type[Timer]) -> float:
    """Seconds from the end of a slow first tick (1.3 intervals of work) to the second tick."""
    marks: list[float] = []

    def tick() -> None:
        marks.append(time.perf_counter())
        if len(marks) == 1:
            time.sleep(1.3 * INTERVAL)  # a frame that overran its tick
            marks.append(time.perf_counter())

    app = App()
    async with app.run_test():
        timer = timer_class(app, INTERVAL, callback=tick)
        timer._start()
        while len(marks) < 3:
            await asyncio.sleep(0.01)
        timer.stop()
    return marks[2] - marks[1]


async def test_frame_timer_fires_at_the_next_tick_after_a_slow_one() -> None:
    # the slow tick starts at 1.0 intervals and ends at 2.3: the next tick is at 3.0
    assert await _second_tick_after(FrameTimer) < 1.2 * INTERVAL


async def test_textual_timer_still_skips_one_tick_too_many() -> None:
    """Why FrameTimer exists: Textual's Timer waits until 4.0. If this fails, Textual fixed
    its skipping and FrameTimer can go."""
    assert await _second_tick_after(Timer) > 1.4 * INTERVAL


class _PacedScreen(FramePaced, Screen):
    def compose(self) -> ComposeResult:
        yield Static("painted")


async def test_a_paced_screen_repaints_through_a_frame_timer() -> None:
    app = App()
    async with app.run_test() as pilot:
        await app.push_screen(_PacedScreen())
        await pilot.pause()
        assert isinstance(app.screen._update_timer, FrameTimer)
        assert "painted" in app.screen._compositor.render_strips()[0].text


class _Plain(Screen):
    def compose(self) -> ComposeResult:
        yield Static("before", id="text")


class _Paced(FramePaced, _Plain):
    pass


async def _unpainted_after_a_batch(screen: Screen) -> bool:
    """Change a widget inside `batch_update()`, close the batch, send the screen nothing more:
    is the change still waiting to be painted 0.3 s later?"""
    app = App()
    async with app.run_test() as pilot:
        await app.push_screen(screen)
        await pilot.pause()
        await asyncio.sleep(0.1)
        with app.batch_update():
            screen.query_one("#text", Static).update("after")
            await asyncio.sleep(0.1)  # ticks land inside the batch
        await asyncio.sleep(0.3)
        return bool(screen._dirty_widgets or screen._layout_required)


async def test_changes_made_in_a_batch_are_painted_after_it() -> None:
    assert not await _unpainted_after_a_batch(_Paced())


async def test_textual_screens_still_leave_batched_changes_unpainted() -> None:
    """Why FramePaced handles batches: if this fails, Textual fixed it."""
    assert await _unpainted_after_a_batch(_Plain())
