"""Web server room (UI layer): textual-serve serving the explorer to a browser for the `serve`
command (fintrade_tui/cli/serve.py) — an offline copy of its page template, and its Server with
an origin check, one explorer at a time (the workspace takes one writer), a start line and a
shutdown that leaves no app process behind. textual-serve and aiohttp load only when called."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fintrade_tui.errors import UserError

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "[::1]"}
# textual-serve's template fetches Roboto Mono from Google Fonts; its static folder has the font
FONT_FACE = """<style>
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf");
      }
    </style>"""
# each tab runs an explorer process of its own (a few hundred MB); they share the workspace
MAX_TABS = 4
TAB_WAIT = 10.0  # a reloaded tab's previous explorer takes a moment to quit
APP_QUIT_WAIT = 10.0  # an explorer told to quit that is still running then is killed


def busy_text(max_tabs: int) -> bytes:
    return (
        f"\x1b[2J\x1b[H\r\n  fintrade-tui: {max_tabs} explorer(s) are open in other tabs of"
        " this server, the most it runs at once (serve --max-tabs).\r\n"
        "  Close one of them, then reload this tab.\r\n"
    ).encode()


REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref=\"https?://[^\"]*\"[^>]*>", re.S)
REMOTE_LOAD = re.compile(
    r"\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//|@import|url\(\s*[\"']?\s*(?:https?:)?//"
)


def is_loopback(host: str) -> bool:
    """True for a host name or address that only this machine can reach."""
    import ipaddress

    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def allowed_origins(public_url: str) -> set[str]:
    """The page origins whose WebSocket may drive the app: the server's own, and on loopback
    the other names of this machine (a page opened as localhost talks to 127.0.0.1)."""
    parts = urlsplit(public_url)
    origins = {f"{parts.scheme}://{parts.netloc}".lower()}
    if is_loopback(parts.hostname or ""):
        port = f":{parts.port}" if parts.port else ""
        origins |= {f"{parts.scheme}://{name}{port}" for name in LOOPBACK_NAMES}
    return origins


def offline_template(folder: Path) -> Path:
    """textual-serve's page template with its remote font link replaced by the font it ships,
    written to `folder`; refused if anything else in it would load from the network."""
    import textual_serve

    original = Path(textual_serve.__file__).parent / "templates" / "app_index.html"
    page = REMOTE_LINK.sub(lambda _: FONT_FACE, original.read_text(encoding="utf-8"))
    # an upgrade that loads something new from the network must not pass unnoticed
    if found := REMOTE_LOAD.search(page):
        raise UserError(
            str(original),
            f"loads {found.group(0)!r}... from the network, which the offline page cannot",
            "pin textual-serve to the version in requirements.lock",
        )
    (folder / "app_index.html").write_text(page, encoding="utf-8")
    return folder


def server_class() -> type:
    """textual-serve's Server with this command's origin check, start line and shutdown
    (built on demand: aiohttp and textual-serve load only when `serve` runs)."""
    import asyncio

    import textual_serve.server
    from aiohttp import web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    class ReapedAppService(AppService):
        async def stop(self) -> None:
            """textual-serve's stop (quit, then read the app's output to its end), and then
            the process itself waited for, killed if it does not end: none is left behind,
            and none outlives the event loop that watches it."""
            process = self._process
            await super().stop()
            if process is None or process.returncode is not None:
                return
            try:
                await asyncio.wait_for(process.wait(), APP_QUIT_WAIT)
            except TimeoutError:
                process.kill()
                await process.wait()

    # the one place textual-serve builds a session's app service (Server.handle_websocket)
    textual_serve.server.AppService = ReapedAppService

    class ExplorerServer(Server):
        def __init__(self, *args: Any, max_tabs: int = MAX_TABS, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.origins = allowed_origins(self.public_url)
            self.sessions: dict[asyncio.Task, web.Request] = {}
            self.max_tabs = max_tabs
            self.tabs = asyncio.Semaphore(max_tabs)

        def initialize_logging(self) -> None:
            """textual-serve's request log and logo are noise here: warnings only."""
            import logging

            logging.basicConfig(level="WARNING", format="%(message)s")

        async def on_startup(self, app: web.Application) -> None:
            print(f"fintrade-tui serve: open {self.public_url} (Ctrl+C stops)")
            sys.stdout.flush()

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
            origin = request.headers.get("Origin", "").lower()
            if origin not in self.origins:
                raise web.HTTPForbidden(text=f"origin {origin or '(none)'} may not drive the app")
            task = asyncio.current_task()
            self.sessions[task] = request  # for on_shutdown
            try:
                try:
                    # a reloaded tab's previous explorer takes a moment to quit and let go
                    await asyncio.wait_for(self.tabs.acquire(), TAB_WAIT)
                except TimeoutError:
                    return await self._busy(request)
                try:
                    return await super().handle_websocket(request)
                finally:
                    self.tabs.release()
            finally:
                self.sessions.pop(task, None)

        async def _busy(self, request: web.Request) -> web.WebSocketResponse:
            """As many tabs as it runs are open: this one says so until it is closed."""
            ws = web.WebSocketResponse(heartbeat=15)
            try:
                await ws.prepare(request)
                await ws.send_bytes(busy_text(self.max_tabs))
                async for _ in ws:  # the message stays on screen until the tab goes
                    pass
            except asyncio.CancelledError:
                pass  # the server stops
            finally:
                await ws.close()
            return ws

        async def on_shutdown(self, app: web.Application) -> None:
            """Each open tab is disconnected, as if its browser had left: textual-serve then
            tells its app to quit and waits for it (aiohttp alone would wait a minute for the
            browsers to leave). A session still running after that is cancelled."""
            for request in self.sessions.values():
                if request.transport is not None:
                    request.transport.close()
            if sessions := list(self.sessions):
                _, late = await asyncio.wait(sessions, timeout=10)
                for task in late:
                    task.cancel()

    return ExplorerServer
