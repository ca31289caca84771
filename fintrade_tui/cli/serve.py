"""CLI command `serve`: the explorer in a web browser. textual-serve's aiohttp server runs a
`fintrade-tui tui` process for each browser tab (up to --max-tabs at once; they share the
workspace like any processes do) and relays it over a WebSocket to xterm.js.

Whoever gets in drives the explorer (runs models on the owner's keys, reads the workspace,
writes exports), so only whoever holds the printed link gets in: a token per start (or
FINTRADE_SERVE_TOKEN), then a cookie; anything else is refused before an explorer starts. It
listens on loopback unless --allow-remote, which needs TLS (--certfile/--keyfile) or an explicit
--insecure the start line warns about; the WebSocket also accepts only pages of this server's
own origin. The page loads nothing from the network: textual-serve's template asks Google for
its font, ours serves the copy it ships. Ctrl+C tells each explorer to quit and waits for it:
no process is left behind. The server itself (textual-serve, its page template, the door) is
the UI layer's: fintrade_tui/ui/web_server.py and web_access.py."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from fintrade_tui.cli.base import Ctx, friendly, main
from fintrade_tui.cli.tui import prepare, tui
from fintrade_tui.errors import UserError
from fintrade_tui.ui.web_access import Access, server_token, tls_context
from fintrade_tui.ui.web_server import is_loopback, offline_template, server_class

FREE = "pick a free --port, and a --host address of this machine"
INSECURE = (
    "--insecure: the link's token and everything the explorer shows cross the network in clear"
    " text; anyone on the path can read them and take the session"
)


def base_url(host: str, port: int, tls: bool = False) -> str:
    """http(s)://host:port, with an IPv6 address in brackets; a wildcard address (all
    interfaces) becomes this machine's name, which other machines can resolve."""
    if host in ("0.0.0.0", "::", "[::]", ""):
        host = socket.getfqdn()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{'https' if tls else 'http'}://{host}:{port}"


def check_exposure(
    host: str,
    port: int,
    allow_remote: bool,
    certfile: str | None,
    keyfile: str | None,
    insecure: bool,
) -> None:
    """Who can reach the server, settled before anything starts: a host other machines reach
    needs --allow-remote, and --allow-remote needs TLS or an explicit --insecure."""
    tunnel = (
        f"ssh -L {port}:127.0.0.1:{port} <this host>, then open the link serve prints with"
        f" http://127.0.0.1:{port}"
    )
    if not allow_remote and not is_loopback(host):
        raise UserError(
            f"--host {host}",
            "gives full control of the explorer (its models, files and exports) to anyone who"
            " can reach the port and get its link",
            f"keep the loopback default and tunnel from your machine: {tunnel}; or add"
            " --allow-remote with --certfile and --keyfile (TLS)",
        )
    if keyfile and not certfile:
        raise UserError("--keyfile", "needs --certfile (the certificate it is the key of)")
    if certfile and insecure:
        raise UserError("--insecure", "contradicts --certfile", "drop one of them")
    if allow_remote and not certfile and not insecure:
        raise UserError(
            "--allow-remote",
            "would send the link's token and everything the explorer shows over the network"
            " in clear text",
            "add --certfile CERT.pem --keyfile KEY.pem to serve TLS, or --insecure on a"
            f" network you trust; or keep the loopback default and tunnel: {tunnel}",
        )


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
    screen = next(p for p in tui.params if p.name == "screen")
    assert isinstance(screen.type, click.Choice)  # tui's --screen is a click.Choice
    return list(screen.type.choices)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="listen on an address other machines can reach (needs --certfile/--keyfile or"
    " --insecure); prefer an SSH tunnel to the loopback default",
)
@click.option(
    "--certfile",
    metavar="PEM",
    help="serve TLS (https) with this certificate (chain); required by --allow-remote",
)
@click.option("--keyfile", metavar="PEM", help="the certificate's private key, unencrypted")
@click.option(
    "--insecure",
    is_flag=True,
    help="let --allow-remote serve plain http: the token crosses the network in clear text",
)
@click.option(
    "--public-url",
    help="the address browsers open, when it is not http://HOST:PORT (behind a proxy)",
)
@click.option("--screen", type=click.Choice(_screens()), default="universe", show_default=True)
@click.option("--model", "-m", help="the model the Arena starts with (default runs.default_model)")
@click.option(
    "--max-tabs",
    type=click.IntRange(1, 32),
    default=4,
    show_default=True,
    help="explorers at once, one per browser tab (each a process of a few hundred MB)",
)
@click.pass_obj
@friendly
def serve(
    obj: Ctx,
    host: str,
    port: int,
    allow_remote: bool,
    certfile: str | None,
    keyfile: str | None,
    insecure: bool,
    public_url: str | None,
    screen: str,
    model: str | None,
    max_tabs: int,
) -> None:
    """Serve the explorer to a web browser, an explorer per tab (Ctrl+C stops); only whoever
    holds the printed link gets in."""
    check_exposure(host, port, allow_remote, certfile, keyfile, insecure)
    token = server_token()  # FINTRADE_SERVE_TOKEN checked before anything starts
    tls = tls_context(certfile, keyfile) if certfile else None
    check_bindable(host.strip("[]"), port)
    prepare(obj.cfg)  # every tab would stumble on a bad config or a missing store: once, here
    command = app_command(click.get_current_context().find_root().params, screen, model)
    url = (public_url or base_url(host, port, tls is not None)).rstrip("/")
    access = Access(token, port=port, secure=url.startswith("https:"))
    remote_clear = insecure and not is_loopback(host)
    with tempfile.TemporaryDirectory(prefix="fintrade-serve-") as folder:
        server = server_class()(
            command,
            host=host.strip("[]"),
            port=port,
            title="fintrade-tui",
            public_url=url,
            templates_path=offline_template(Path(folder)),
            max_tabs=max_tabs,
            access=access,
            ssl_context=tls,
            warnings=(INSECURE,) if remote_clear else (),
        )
        try:
            server.serve()
        except OSError as exc:  # taken since check_bindable
            raise UserError(f"--host {host} --port {port}", str(exc), FREE) from None
        finally:
            _stop_children()
    click.echo("fintrade-tui serve: stopped")
