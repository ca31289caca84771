"""Browser fixtures: one headless Chromium per session (Debian's /usr/bin/chromium, driven by
Playwright's sync API; never a browser Playwright downloads) and `offline_page`, a page in a
fresh context that lets through only local addresses and records every other request.

Playwright's sync API and pytest-asyncio share the main thread. Between two sync calls
Playwright leaves its event loop marked as *running* in this thread (its dispatcher greenlet is
suspended inside the loop), and a later async test would then fail to start its own loop. So
every use of Playwright here happens inside `_turn()`, which marks the loop running for the
duration and clears the mark afterwards: async tests of the same run see no loop."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",  # root in CI, no user namespaces
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # the browser's own traffic (updates, sync, field trials) is not the page's
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LOCAL_SCHEMES = {"file", "data", "about", "blob"}
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def is_local(url: str) -> bool:
    """True for a URL that stays on this machine: file:, data:, about:, blob: or loopback."""
    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or (parts.hostname or "") in LOCAL_HOSTS


@contextmanager
def _turn(loop: asyncio.AbstractEventLoop) -> Iterator[None]:
    """Playwright's loop marked running in this thread only while Playwright is used."""
    asyncio._set_running_loop(loop)
    try:
        yield
    finally:
        asyncio._set_running_loop(None)


class Chromium:
    """The session's browser and the loop its Playwright runs on."""

    def __init__(self, browser, loop: asyncio.AbstractEventLoop) -> None:
        self.browser, self.loop = browser, loop


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    if not Path(CHROMIUM).exists():
        reason = f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(reason)  # CI installs it: a skip there would hide the browser tests
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    if asyncio._get_running_loop() is not None:
        pytest.fail("an asyncio loop is running in this thread: Playwright's sync API cannot start")
    manager = sync_playwright()
    pw = manager.start()
    loop = asyncio.get_running_loop()  # the sync API's loop: start() left it marked (see _turn)
    asyncio._set_running_loop(None)
    try:
        with _turn(loop):
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    except BaseException:
        with _turn(loop):
            manager.__exit__()
        raise
    yield Chromium(browser, loop)
    with _turn(loop):
        browser.close()
        manager.__exit__()


@pytest.fixture
def offline_page(chromium: Chromium) -> Iterator:
    """A Playwright `Page` in a fresh context: requests that leave the machine are aborted and
    their URLs kept in `page.blocked` (a test asserts it stays empty)."""
    with _turn(chromium.loop):
        context = chromium.browser.new_context(service_workers="block")
        blocked: list[str] = []

        def guard(route) -> None:
            if is_local(route.request.url):
                route.continue_()
            else:
                blocked.append(route.request.url)
                route.abort("blockedbyclient")

        context.route("**/*", guard)
        # WebSockets bypass context.route: those to other hosts are closed and recorded too
        context.route_web_socket(lambda url: not is_local(url), lambda ws: _refuse(ws, blocked))
        page = context.new_page()
        page.blocked = blocked
        try:
            yield page
        finally:
            context.close()


def _refuse(ws, blocked: list[str]) -> None:
    blocked.append(ws.url)
    ws.close(code=1008, reason="offline test")
