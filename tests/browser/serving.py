"""What the `serve` tests share (tests/browser/test_serve*.py): a real `fintrade-tui serve`
subprocess and the lines it prints, its config on the session's store, the explorers it runs
(its child processes, from /proc), and a raw client of its own: plain HTTP requests and
WebSockets from this process, with the headers a test chooses (no browser). Every wait here
is for a condition, with a generous timeout that turns a hang into a failure."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
from pathlib import Path

import aiohttp

from tests.clock import wait_until
from tests.conftest import BUNDLE, ROOT

START_LINE = r"fintrade-tui serve: open (https?://\S+?)(/\?token=([\w-]+))? \(Ctrl\+C stops\)"
CSI = re.compile(r"\x1b(?:\[[0-9;?<>=]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> set[int]:
    """Live processes whose parent is `pid` (from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, ppid = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, ValueError):
            continue
        if ppid == str(pid) and state != "Z":
            found.add(int(stat.parent.name))
    return found


def write_serve_config(folder: Path, store: Path) -> Path:
    """A config on the session's store (a symlink) and a new workspace, in `folder`."""
    link = folder / "store" / store.name
    link.parent.mkdir(parents=True)
    link.symlink_to(store)
    path = folder / "config.yaml"
    path.write_text(
        f"bundle: {BUNDLE}\nstore: {link}\nworkspace: {folder / 'workspace.duckdb'}\n"
        f"model_dir: {ROOT / 'data' / 'models'}\nretrieval: {{index: {folder / 'lancedb'}}}\n"
    )
    return path


class Served:
    """A `fintrade-tui serve` subprocess and the lines it prints."""

    def __init__(
        self, config: Path, port: int, *extra: str, env: dict[str, str] | None = None
    ) -> None:
        base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.port = port
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fintrade_tui", "--config", str(config), "serve"]
            + ["--port", str(port), "--max-tabs", "2", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=base | (env or {}),
            start_new_session=True,  # its apps share its process group: stop() ends them all
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float) -> re.Match[str]:
        def printed() -> re.Match[str] | None:
            found = next(filter(None, (re.search(pattern, ln) for ln in list(self.lines))), None)
            assert found or self.proc.poll() is None, (
                f"serve exited {self.proc.returncode}: {self.lines}"
            )
            return found

        return wait_until(printed, timeout, 0.1, f"{pattern!r} printed: {self.lines}")

    def started(self, timeout: float = 180) -> tuple[str, str]:
        """The base URL and the token of the start line (a new workspace: the seed questions
        are imported before the server starts)."""
        found = self.wait_for(START_LINE, timeout)
        assert found[3], f"no token in the start line: {found[0]}"
        return found[1], found[3]

    def explorers(self) -> set[int]:
        return children(self.proc.pid)

    def stop(self) -> None:
        """After a failed test: whatever of the group is left, ended (SIGINT first)."""
        for sig, grace in ((signal.SIGINT, 20), (signal.SIGKILL, 10)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)


def screen_text(data: bytes) -> str:
    """What an explorer sent, escape sequences left out."""
    return CSI.sub("", data.decode("utf-8", "replace"))


class RawClient:
    """HTTP requests and WebSockets to one server from this process, no browser: no cookie
    jar (a test sends the Cookie header itself), the Origin it is given."""

    def __init__(self, base: str, tls: ssl.SSLContext | None = None) -> None:
        self.base, self.tls = base.rstrip("/"), tls
        self.ws_base = ("wss" if base.startswith("https") else "ws") + base[base.index(":") :]

    def session(self, limit: int = 100) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            cookie_jar=aiohttp.DummyCookieJar(),
            connector=aiohttp.TCPConnector(limit=limit, ssl=self.tls if self.tls else False),
            timeout=aiohttp.ClientTimeout(total=60),
        )

    async def get(
        self, http: aiohttp.ClientSession, path: str, headers: dict[str, str] | None = None
    ) -> tuple[int, str, aiohttp.ClientResponse]:
        async with http.get(self.base + path, headers=headers or {}) as res:
            return res.status, await res.text(), res

    async def handshake(
        self, http: aiohttp.ClientSession, query: str = "", headers: dict[str, str] | None = None
    ) -> int | aiohttp.ClientWebSocketResponse:
        """The refused handshake's HTTP status, or the open WebSocket."""
        try:
            return await http.ws_connect(
                f"{self.ws_base}/ws?width=120&height=40{query}", headers=headers or {}
            )
        except aiohttp.WSServerHandshakeError as exc:
            return exc.status


async def read_until(ws: aiohttp.ClientWebSocketResponse, pattern: str, timeout: float) -> str:
    """The explorer's screen output read until `pattern` shows in it (escape sequences left
    out); an AssertionError with what came when it does not within `timeout` seconds."""
    seen = b""

    async def read() -> str:
        nonlocal seen
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.BINARY:
                seen += msg.data
                if re.search(pattern, screen_text(seen)):
                    return screen_text(seen)
        raise AssertionError(f"the WebSocket closed before {pattern!r}: {screen_text(seen)}")

    try:
        return await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        raise AssertionError(
            f"{pattern!r} not sent within {timeout} s: {screen_text(seen)[-2000:]}"
        ) from None


def wait_gone(pids: set[int], timeout: float, what: str) -> None:
    wait_until(lambda: not any(Path(f"/proc/{p}").exists() for p in pids), timeout, 0.1, what)


def make_cert(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and 127.0.0.1 and its key (openssl, an EC key:
    made in a moment), in `folder`."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        + ["-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    return cert, key


def trusting(cert: Path) -> ssl.SSLContext:
    """A client TLS context that trusts `cert` alone."""
    return ssl.create_default_context(cafile=str(cert))
