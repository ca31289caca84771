"""Kill-points room, a testing hook: named places in the writing commands where the process
stops itself (SIGSTOP) when the environment asks, so a test can SIGKILL it at exactly that
point instead of after a guessed delay.

`FINTRADE_STOP_AT=NAME` stops the process the first time it reaches the point NAME;
`FINTRADE_STOP_AT=NAME:N` the N-th time (a point reached with `count=k` advances by k, e.g.
k runs stored in one group: it stops in the group that makes N). Before stopping it flushes
stdio and writes one line to stderr (`STOP_LINE`, naming the point and the pid). Unset, a
point costs one environment lookup. The points and what the process has done when it stops
there are listed in docs/reliability.md (Kills: stop points). Counts are per process: a
forked worker counts from the parent's count at the fork.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import suppress
from typing import Any

ENV = "FINTRADE_STOP_AT"
STOP_LINE = "fintrade-tui: stopped at {point} #{reached} (pid {pid})"

_reached: dict[str, int] = {}
_counting = threading.Lock()


def stop_at(name: str, count: int = 1, **context: Any) -> None:
    """Stop this process here if `FINTRADE_STOP_AT` names this point and the count is due;
    `context` (e.g. the accession in hand) goes into the stderr line. Continues on SIGCONT."""
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    with _counting:
        before = _reached.get(name, 0)
        _reached[name] = before + count
    target = int(nth) if nth else 1  # not a number: ValueError, a misspelt hook fails loudly
    if before < target <= before + count:
        _stop(name, before + count, context)


def _stop(name: str, reached: int, context: dict[str, Any]) -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(AttributeError, OSError, ValueError):  # closed or replaced by a caller
            stream.flush()
    line = STOP_LINE.format(point=name, reached=reached, pid=os.getpid())
    line += "".join(f" {k}={v}" for k, v in context.items())
    with suppress(OSError):  # fd 2 itself: whatever a caller put in place of sys.stderr
        os.write(2, (line + "\n").encode(errors="replace"))
    os.kill(os.getpid(), signal.SIGSTOP)
