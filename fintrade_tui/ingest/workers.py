"""Worker-process room: process pools whose workers never outlive the process that started them.

A SIGKILL of the parent runs no cleanup, so a pool's own shutdown never happens and its
workers (e.g. ingest's iXBRL parsers) would keep running for minutes. Each worker therefore
arranges, when it starts, to die with its parent: on Linux the kernel sends it SIGKILL
(prctl PR_SET_PDEATHSIG); elsewhere a daemon thread polls os.getppid() and exits the worker
when the parent changed (re-parented to init or a subreaper).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_POLL_SECONDS = 0.5


def _set_pdeathsig() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_POLL_SECONDS)
    os._exit(1)


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this worker when `parent` (the pid that made the pool) dies."""
    if _set_pdeathsig():
        # the parent may have died between fork and prctl: the signal then never comes
        if os.getppid() != parent:
            os._exit(1)
        return
    threading.Thread(target=_watch, args=(parent,), name="die-with-parent", daemon=True).start()


def pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers die with this process, a kill -9 included.

    PR_SET_PDEATHSIG fires when the thread that forked the worker ends, so create and use
    the pool in one thread (the executor forks its workers from the submitting thread)."""
    return ProcessPoolExecutor(
        max_workers=workers, initializer=die_with_parent, initargs=(os.getpid(),)
    )
