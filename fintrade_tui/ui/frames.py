"""Frame pacing: a screen repaints up to 240 times a second, and paints what changed inside a
batch as soon as the batch ends.

Textual repaints a screen from an interval timer (60 fps, paused while nothing is dirty). Three
panes streaming on 2 cores make most frames slower than a 60 fps tick, and each change then
waited up to a whole tick for its frame (`benchmarks/bench_tui.py`). `FramePaced` gives a screen
an update timer at 240 Hz instead (Textual's TEXTUAL_FPS, if set higher, wins): frames still come
only when something has changed and the screen's messages are handled (the timer is paused
otherwise), but a change waits at most a quarter as long for its frame.

Inside `app.batch_update()` (Markdown appends, mounts) Textual neither starts the timer nor
paints on a tick, and nothing tells the screen when the batch ends: changes made in a batch
stayed unpainted until the next message reached the screen (a company's fundamentals table
showed header-width columns until a key was pressed). Here the timer runs through a batch and
paints at the first tick after it.

The timer is Textual's public `set_interval`; the screen paints from it through the one hook in
ui/textual_private.py (Textual has no public way to give a screen its update timer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import constants, events
from textual.timer import Timer

from fintrade_tui.ui.textual_private import FrameTimerHook, batch_open, paint_now

if TYPE_CHECKING:
    from textual.screen import Screen

    _ScreenMixin = Screen[Any]  # for the type checker: the mixin's methods run on a Screen
else:
    _ScreenMixin = object


class FramePaced(FrameTimerHook, _ScreenMixin):
    """Mixed into a Screen (before it): its repaints come from `frame_timer()`."""

    FRAME_RATE = 240  # ticks per second; Textual's TEXTUAL_FPS, if set higher, wins
    paint_timer: Timer | None = None  # made on first use, as Textual makes its own

    def frame_interval(self) -> float:
        """Seconds between ticks."""
        return 1 / max(self.FRAME_RATE, constants.MAX_FPS)

    def frame_timer(self) -> Timer:
        """The screen's update timer: paused until something is dirty, as Textual's."""
        if self.paint_timer is None:
            self.paint_timer = self.set_interval(
                self.frame_interval(), self.frame_tick, name="screen_update", pause=True
            )
        return self.paint_timer

    def on_idle(self, event: events.Idle) -> None:
        """Runs before Screen's own idle handler, which leaves the timer paused while a batch
        is open: here it ticks on, to paint once the batch ends."""
        if batch_open(self.app) and self.is_current:
            self.frame_timer().resume()

    def frame_tick(self) -> None:
        if batch_open(self.app):
            return  # still in the batch: keep ticking, paint after it
        paint_now(self)  # Textual's own tick: pauses the timer, lays out, paints
