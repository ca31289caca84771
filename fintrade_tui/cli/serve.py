"""CLI command `serve`: the explorer in a web browser. textual-serve's aiohttp server runs a
`fintrade-tui tui` process for the browser tab and relays it over a WebSocket to xterm.js; one
tab at a time, since the explorer holds its workspace (DuckDB: one writer) while it is open.

Whoever reaches the port drives the explorer (runs models, writes exports), so it listens on
loopback unless --allow-remote, and the WebSocket accepts only pages of this server's own origin
(another site open in the same browser cannot drive it). The page loads nothing from the
network: textual-serve's template asks Google for its font, ours serves the copy it ships.
Ctrl+C tells each explorer to quit and waits for it: no process is left behind."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import shlex
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from fintrade_tui.cli import Ctx, friendly, main
from fintrade_tui.cli.tui import check_keymap, tui
from fintrade_tui.errors import UserError

LOOPBACK_NAMES = {"localhost", "127.0.0.1", "[::1]"}
# textual-serve's template fetches Roboto Mono from Google Fonts; its static folder has the font
FONT_FACE = """<style>
      @font-face {
        font-family: "Roboto Mono";
        src: url("{{ config.static.url }}fonts/RobotoMono-VariableFont_wght.ttf");
      }
    </style>"""
# one explorer at a time: each holds the workspace (DuckDB: one writer) while it is open
ONE_WRITER_WAIT = 10.0
APP_QUIT_WAIT = 10.0  # an explorer told to quit that is still running then is killed
BUSY = (
    b"\x1b[2J\x1b[H\r\n  fintrade-tui: the explorer is open in another tab of this server.\r\n"
    b"  Its workspace takes one writer at a time: close that tab, then reload this one.\r\n"
)
FREE = "pick a free --port, and a --host address of this machine"
REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref=\"https?://[^\"]*\"[^>]*>", re.S)
REMOTE_LOAD = re.compile(
    r"\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//|@import|url\(\s*[\"']?\s*(?:https?:)?//"
)


def is_loopback(host: str) -> bool:
    """True for a host name or address that only this machine can reach."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def base_url(host: str, port: int) -> str:
    """http://host:port, with an IPv6 address in brackets; a wildcard address (all
    interfaces) becomes this machine's name, which other machines can resolve."""
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = socket.getfqdn()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


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


def app_command(root_params: dict[str, Any], screen: str, model: str | None) -> str:
    """The shell command textual-serve runs per tab: this CLI, with the config and bundle
    `serve` got (as absolute paths), opening the explorer. `exec`: the shell becomes the app,
    so the pid textual-serve stops is the app's own."""
    argv = [sys.executable, "-m", "fintrade_tui"]
    for name in ("config", "bundle"):
        if root_params.get(name):
            argv += [f"--{name}", str(Path(root_params[name]).resolve())]
    argv += ["tui", "--screen", screen] + (["--model", model] if model else [])
    return "exec " + shlex.join(argv)


def check_bindable(host: str, port: int) -> None:
    """Bind (and release) every address `host` names, as aiohttp will: a taken port or an
    address of another machine is one line here, before the URL is printed."""
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        ):
            with socket.socket(family, kind, proto) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp does
                probe.bind(address)
    except OSError as exc:
        raise UserError(f"--host {host} --port {port}", exc.strerror or str(exc), FREE) from None


def _children() -> list[int]:
    """The pids whose parent is this process (Linux /proc; empty where there is none)."""
    me, pids = str(os.getpid()), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after the command's name
        except (OSError, IndexError):
            continue
        if fields[1] == me and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def _stop_children(grace: float = 5.0) -> None:
    """The last resort after the server stopped: an app that did not quit is terminated."""
    left = _children()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in left:
            with contextlib.suppress(ProcessLookupError):  # it quit meanwhile
                os.kill(pid, sig)
        end = time.monotonic() + grace
        while (left := _children()) and time.monotonic() < end:
            time.sleep(0.1)
        if not left:
            return


def _screens() -> list[str]:
    """The screens `tui --screen` opens on (one list, the tui command's)."""
    return list(next(p for p in tui.params if p.name == "screen").type.choices)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="listen on an address other machines can reach: anyone who reaches the port controls"
    " the explorer (prefer an SSH tunnel to the loopback default)",
)
@click.option(
    "--public-url",
    help="the address browsers open, when it is not http://HOST:PORT (behind a proxy)",
)
@click.option("--screen", type=click.Choice(_screens()), default="universe", show_default=True)
@click.option("--model", "-m", help="the model the Arena starts with (default runs.default_model)")
@click.pass_obj
@friendly
def serve(
    obj: Ctx,
    host: str,
    port: int,
    allow_remote: bool,
    public_url: str | None,
    screen: str,
    model: str | None,
) -> None:
    """Serve the explorer to a web browser, one tab at a time (Ctrl+C stops)."""
    if not allow_remote and not is_loopback(host):
        raise UserError(
            f"--host {host}",
            "gives full control of the explorer (its models, files and exports) to anyone who"
            " can reach the port",
            f"keep the loopback default and tunnel from your machine: ssh -L {port}:127.0.0.1:"
            f"{port} <this host>, then open http://127.0.0.1:{port}; or add --allow-remote on"
            " a network you trust",
        )
    check_bindable(host.strip("[]"), port)
    from fintrade_tui.runs.readiness import ensure_questions, ensure_store
    from fintrade_tui.store.workspace import open_workspace

    # every tab would stumble on a bad config or a missing store: settle both once, here
    cfg = obj.cfg
    check_keymap(cfg.ui.keymap, cfg.source_file or "config.yaml")
    say = lambda msg: click.echo(msg, err=True)  # noqa: E731
    ensure_store(cfg, say)
    with open_workspace(cfg.workspace) as ws:
        ensure_questions(cfg, ws, say)
    command = app_command(click.get_current_context().find_root().params, screen, model)
    url = (public_url or base_url(host, port)).rstrip("/")
    with tempfile.TemporaryDirectory(prefix="fintrade-serve-") as folder:
        server = _server_class()(
            command,
            host=host.strip("[]"),
            port=port,
            title="fintrade-tui",
            public_url=url,
            templates_path=offline_template(Path(folder)),
        )
        try:
            server.serve()
        except OSError as exc:  # taken since check_bindable
            raise UserError(f"--host {host} --port {port}", str(exc), FREE) from None
        finally:
            _stop_children()
    click.echo("fintrade-tui serve: stopped")


def _server_class() -> type:
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
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.origins = allowed_origins(self.public_url)
            self.sessions: dict[asyncio.Task, web.Request] = {}
            self.one_writer = asyncio.Lock()

        def initialize_logging(self) -> None:
            """textual-serve's request log and logo are noise here: warnings only."""
            import logging

            logging.basicConfig(level="WARNING", format="%(message)s")

        async def on_startup(self, app: web.Application) -> None:
            click.echo(f"fintrade-tui serve: open {self.public_url} (Ctrl+C stops)")
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
                    await asyncio.wait_for(self.one_writer.acquire(), ONE_WRITER_WAIT)
                except TimeoutError:
                    return await self._busy(request)
                try:
                    return await super().handle_websocket(request)
                finally:
                    self.one_writer.release()
            finally:
                self.sessions.pop(task, None)

        async def _busy(self, request: web.Request) -> web.WebSocketResponse:
            """Another tab holds the workspace: this one says so until it is closed."""
            ws = web.WebSocketResponse(heartbeat=15)
            try:
                await ws.prepare(request)
                await ws.send_bytes(BUSY)
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
