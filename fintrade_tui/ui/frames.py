"""Frame pacing: a screen repaints at the next frame tick after a slow frame, not the one after.

Textual repaints a screen from an interval timer (60 fps, paused while nothing is dirty). When a
frame takes longer than the interval the timer skips the ticks it missed - but one too many:
Textual 8.2 sets `count = elapsed / interval + 1` and then waits for tick `count + 1`, so every
slow frame is followed by a whole idle tick. Three panes streaming on 2 cores make most frames
slower than 16.7 ms, and the Arena painted in 33-50 ms steps while the event loop sat idle
(`benchmarks/bench_tui.py`). `FramePaced` gives a screen a timer that waits only for the next
tick, and ticks at 240 Hz instead of 60: frames still come only when something has changed and
the screen's messages are handled (the timer is paused otherwise), but a change waits at most
4 ms for its frame instead of 17 - with three streaming panes, the largest gap between frames
went from 65 to 45 ms and the frames carry fewer changes each.

Inside `app.batch_update()` (Markdown appends, mounts) Textual neither starts the timer nor
paints on a tick, and nothing tells the screen when the batch ends: changes made in a batch
stayed unpainted until the next message reached the screen (a company's fundamentals table
showed header-width columns until a key was pressed). Here the timer runs through a batch and
paints at the first tick after it.
"""

from __future__ import annotations

from textual import _time, constants, events
from textual.timer import EventTargetGone, Timer


class FrameTimer(Timer):
    """Textual's Timer whose skipping resumes at the next tick after a late one."""

    async def _run(self) -> None:
        count = 0
        interval = self._interval
        await self._active.wait()
        start = _time.get_time()
        while self._repeat is None or count <= self._repeat:
            next_tick = start + (count + 1) * interval
            now = _time.get_time()
            if self._skip and next_tick < now:
                count = int((now - start) / interval)  # the next tick is count + 1
                continue
            await _time.sleep(max(0.0, next_tick - now))
            count += 1
            await self._active.wait()
            if self._reset:
                start, count, self._reset = _time.get_time(), 0, False
                continue
            try:
                await self._tick(next_timer=next_tick, count=count)
            except EventTargetGone:
                break


class FramePaced:
    """Mixed into a Screen (before it): its repaints are driven by a `FrameTimer`."""

    FRAME_RATE = 240  # ticks per second; Textual's TEXTUAL_FPS, if set higher, wins
    _frame_timer: Timer | None = None

    @property
    def _update_timer(self) -> Timer:
        if self._frame_timer is None:
            update = self._on_timer_update
            interval = 1 / max(self.FRAME_RATE, constants.MAX_FPS)
            timer = FrameTimer(self, interval, name="screen_update", callback=update, pause=True)
            timer._start()
            self._timers.add(timer)
            self._frame_timer = timer
        return self._frame_timer

    def _on_idle(self, event: events.Idle) -> None:
        """Runs before Screen's own handler, which skips the timer while a batch is open."""
        if self.app._batch_count and self.is_current:
            self._update_timer.resume()

    def _on_timer_update(self) -> None:
        if self.app._batch_count:
            return  # still in the batch: keep ticking, paint after it
        super()._on_timer_update()
