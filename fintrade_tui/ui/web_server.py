"""Web server room (UI layer): textual-serve serving the explorer to a browser for the `serve`
command (fintrade_tui/cli/serve.py) — an offline copy of its page template, and its Server with
the door of web_access.py on every route (its token, cookie and throttle), an origin check on
the WebSocket, TLS when given, up to --max-tabs explorers, a start line, an explorer gone
within seconds of its tab, and a shutdown that leaves no app process behind. textual-serve and
aiohttp load only when called."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fintrade_tui.errors import UserError
from fintrade_tui.ui.web_access import TOKEN_ENV, TOKEN_PARAM, Access, access_middleware

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
# the printed link's token leaves the address bar once the page has it (a shared screen, the
# history): the cookie it set lets the page's own requests in
DROP_TOKEN = f"""<script>
      (() => {{
        const url = new URL(window.location.href);
        if (url.searchParams.has("{TOKEN_PARAM}")) {{
          url.searchParams.delete("{TOKEN_PARAM}");
          history.replaceState(null, "", url.pathname + url.search + url.hash);
        }}
      }})();
    </script>
  </head>"""


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
    """textual-serve's page template with its remote font link replaced by the font it ships
    and the script that takes the token out of the address bar, written to `folder`; refused
    if anything else in it would load from the network."""
    import textual_serve

    original = Path(textual_serve.__file__).parent / "templates" / "app_index.html"
    page = REMOTE_LINK.sub(lambda _: FONT_FACE, original.read_text(encoding="utf-8"))
    if "</head>" not in page:
        raise UserError(str(original), "has no </head>", "pin textual-serve as requirements.lock")
    page = page.replace("</head>", DROP_TOKEN, 1)
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
    """textual-serve's Server with this command's door, origin check, TLS, start line and
    shutdown (built on demand: aiohttp and textual-serve load only when `serve` runs)."""
    import asyncio
    import signal

    import aiohttp_jinja2
    import textual_serve.server
    from aiohttp import web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server, to_int

    class ReapedAppService(AppService):
        def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
            """textual-serve's environment for the app, without the server's token."""
            environment = super()._build_environment(width, height)
            environment.pop(TOKEN_ENV, None)
            return environment

        async def stop(self) -> None:
            """textual-serve's stop (quit, then read the app's output to its end) for at most
            APP_QUIT_WAIT seconds all told, then the process killed if it has not ended: a
            closed tab's explorer is gone within seconds, even one that hangs, and none
            outlives the event loop that watches it."""
            process = self._process
            loop = asyncio.get_running_loop()
            deadline = loop.time() + APP_QUIT_WAIT
            try:
                await asyncio.wait_for(super().stop(), APP_QUIT_WAIT)
            except TimeoutError:
                self._task = None  # cancelled with the wait: a second stop must not await it
            if process is None or process.returncode is not None:
                return
            try:
                await asyncio.wait_for(process.wait(), max(0.1, deadline - loop.time()))
            except TimeoutError:
                process.kill()
                await process.wait()

    # the one place textual-serve builds a session's app service (Server.handle_websocket);
    # it takes no factory, so its module's class is replaced (mypy: a class is not assignable)
    textual_serve.server.AppService = ReapedAppService  # type: ignore[misc]

    class ExplorerServer(Server):
        def __init__(
            self,
            *args: Any,
            access: Access,
            max_tabs: int = MAX_TABS,
            ssl_context: Any = None,
            warnings: tuple[str, ...] = (),
            **kwargs: Any,
        ) -> None:
            super().__init__(*args, **kwargs)
            self.access = access
            self.origins = allowed_origins(self.public_url)
            self.sessions: dict[asyncio.Task, web.Request] = {}
            self.max_tabs = max_tabs
            self.tabs = asyncio.Semaphore(max_tabs)
            self.ssl_context = ssl_context
            self.warnings = warnings

        def initialize_logging(self) -> None:
            """textual-serve's request log and logo are noise here: warnings only, and no
            access log at all (the printed link's token is in a URL)."""
            import logging

            logging.basicConfig(level="WARNING", format="%(message)s")
            logging.getLogger("aiohttp.access").disabled = True

        def serve(self, debug: bool = False) -> None:
            """textual-serve's serve, with TLS when given and no access log."""
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self.request_exit)
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                ssl_context=self.ssl_context,
                handle_signals=False,
                loop=loop,
                access_log=None,
                print=lambda *args: None,
            )

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(access_middleware(self.access))  # before every route
            return app

        async def on_startup(self, app: web.Application) -> None:
            print(f"fintrade-tui serve: open {self.access.link(self.public_url)} (Ctrl+C stops)")
            for line in self.warnings:
                print(f"fintrade-tui serve: warning: {line}")
            sys.stdout.flush()

        @aiohttp_jinja2.template("app_index.html")
        async def handle_index(self, request: web.Request) -> dict[str, Any]:
            """textual-serve's page, its addresses on the name the browser used when that is
            one of this server's own (a page opened as localhost loads from localhost: its
            cookie is that host's), else on the public URL."""
            origin = f"{request.scheme}://{request.host}".lower()
            base = origin if origin in self.origins else self.public_url.rstrip("/")
            static = base + str(request.app.router["static"].url_for(filename="/"))
            socket = base + str(request.app.router["websocket"].url_for())
            return {
                "font_size": to_int(request.query.get("fontsize", "16"), 16),
                "app_websocket_url": ("wss:" if base.startswith("https:") else "ws:")
                + socket.split(":", 1)[1],
                "config": {"static": {"url": static.rstrip("/") + "/"}},
                "application": {"name": self.title},
            }

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
            origin = request.headers.get("Origin", "").lower()
            if origin not in self.origins:
                raise web.HTTPForbidden(text=f"origin {origin or '(none)'} may not drive the app")
            task = asyncio.current_task()
            if task is None:  # aiohttp runs each handler in a task
                raise RuntimeError("handle_websocket runs outside a task")
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
