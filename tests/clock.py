"""Test-side time: a `FakeClock` that code under test reads and waits on (it takes a `clock`,
fintrade_tui/clock.py) and the test moves with `advance`, plus `wait_until` for state another
process changes. With them a test waits for a condition, never for a time: the one real wait
left is the generous timeout that turns a hang into a failure."""

from __future__ import annotations

import asyncio
import selectors
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from fintrade_tui.clock import Clock

T = TypeVar("T")
STUCK = 300.0  # real seconds a fake wait on the test's own thread lasts before it is a hang
EVENT_POLL = 0.005  # real seconds between looks at an event a fake wait also ends on


@dataclass(eq=False)
class _Wait:
    deadline: float
    event: threading.Event | None = None
    wake: Callable[[], None] | None = None  # a coroutine's: resolve its future

    def blocked(self, now: float) -> bool:
        return now < self.deadline and not (self.event is not None and self.event.is_set())


class FakeClock(Clock):
    """Time that stands still until the test calls `advance`. A thread in `sleep` or `wait`
    and a coroutine in `asleep` (on a real event loop) return once the clock passes their
    deadline; `waiting()` counts those still blocked, `until_waiting(n)` waits for them to get
    there. `run(main)` runs a coroutine on an event loop whose time is this clock's and jumps
    to the next deadline whenever every task waits."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._cond = threading.Condition()
        self._waits: list[_Wait] = []

    # -- the Clock the code under test sees --
    def monotonic(self) -> float:
        with self._cond:
            return self._now

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.wait(None, seconds)

    def wait(self, event: threading.Event | None, timeout: float) -> bool:
        # a thread of the code under test may outlive its test, waiting: only the test's
        # own thread gives up (it would otherwise hang the suite)
        on_main = threading.current_thread() is threading.main_thread()
        give_up = time.monotonic() + STUCK if on_main else float("inf")
        with self._cond:
            w = self._enter(_Wait(self._now + timeout, event))
            try:
                while True:
                    if event is not None and event.is_set():
                        return True
                    if self._now >= w.deadline:
                        return False
                    if time.monotonic() > give_up:
                        raise TimeoutError(f"nobody advanced the fake clock for {STUCK:g} s")
                    # a set event notifies nobody: look again shortly
                    self._cond.wait(EVENT_POLL if event is not None else STUCK)
            finally:
                self._leave(w)

    async def asleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        if isinstance(loop, _FakeTimeLoop) and loop.clock is self:  # timers in this time
            await asyncio.sleep(seconds)
            return
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        woken = loop.create_future()

        def resolve() -> None:
            if not woken.done():
                woken.set_result(None)

        with self._cond:
            w = self._enter(
                _Wait(self._now + seconds, wake=lambda: loop.call_soon_threadsafe(resolve))
            )
        try:
            await woken
        finally:
            with self._cond:
                self._leave(w)

    # -- what the test does --
    def advance(self, seconds: float) -> None:
        """Move time on by `seconds`; every wait whose deadline it passes ends."""
        assert seconds >= 0, "time does not go back"
        with self._cond:
            self._now += seconds
            for w in self._waits:
                if w.wake is not None and not w.blocked(self._now):
                    w.wake()
            self._cond.notify_all()

    def waiting(self) -> int:
        """Threads and coroutines blocked on this clock now (a wait whose deadline has passed
        or whose event is set no longer counts, even before its thread runs again)."""
        with self._cond:
            return sum(w.blocked(self._now) for w in self._waits)

    def until_waiting(self, n: int = 1, timeout: float = 120.0) -> None:
        """Block (really) until at least `n` waits are blocked on this clock: the code under
        test has reached the point where only time moves it on."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.waiting() >= n, timeout):
                raise AssertionError(f"{self.waiting()} of {n} waits on the fake clock came")

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """`asyncio.run(main)` in this clock's time: when no task can go on, the clock jumps
        to the earliest timer instead of the loop sleeping (a wait for a thread or I/O, with
        no timer due, still waits for real)."""
        with asyncio.Runner(loop_factory=lambda: _FakeTimeLoop(self)) as runner:
            return runner.run(main)

    def _enter(self, w: _Wait) -> _Wait:
        self._waits.append(w)
        self._cond.notify_all()
        return w

    def _leave(self, w: _Wait) -> None:
        self._waits.remove(w)
        self._cond.notify_all()


class _FakeTimeSelector(selectors.DefaultSelector):
    """Where the event loop would sleep until its next timer, the fake clock jumps there."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock

    def select(self, timeout: float | None = None) -> list:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:  # no timer at all: only a thread or I/O can wake the loop
            return super().select(None)
        self.clock.advance(timeout)
        return []


class _FakeTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: FakeClock) -> None:
        super().__init__(_FakeTimeSelector(clock))
        self.clock = clock

    def time(self) -> float:
        return self.clock.monotonic()


def wait_until(
    condition: Callable[[], T], timeout: float = 120.0, every: float = 0.02, what: str = ""
) -> T:
    """Look at `condition` (state another process or thread changes) until it holds, and
    return what it returned; AssertionError naming `what` after `timeout` real seconds.
    `every` only paces the looking: nothing here waits for a time to pass."""
    give_up = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > give_up:
            raise AssertionError(f"still waiting for {what or condition} after {timeout:g} s")
        time.sleep(every)
    return value
