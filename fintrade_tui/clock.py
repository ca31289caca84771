"""Clock room: the time that scheduling code reads and waits on (the write-behind timer, the
deployment pace, the workspace gate's idle release and back-off), passed in as an argument so
tests can hand over a clock they move themselves (`tests/clock.py`) instead of sleeping.
`SYSTEM` is the real one and every default."""

from __future__ import annotations

import asyncio
import threading
import time


class Clock:
    """Real time: `time.monotonic`, `time.sleep`, `asyncio.sleep` and `Event.wait`."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (only differences mean anything)."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Block this thread for `seconds`."""
        if seconds > 0:
            time.sleep(seconds)

    async def asleep(self, seconds: float) -> None:
        """Suspend this coroutine for `seconds`."""
        await asyncio.sleep(seconds)

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """`event.wait(timeout)` in this clock's time: True once the event is set, False when
        `timeout` seconds passed first."""
        return event.wait(timeout)


SYSTEM = Clock()
