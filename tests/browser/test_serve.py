"""`fintrade-tui serve`: the explorer in a real browser, offline. A real `serve` subprocess on
the session's store and a new workspace; headless Chromium opens its page (nothing may leave
the machine), the Universe appears, NVDA + Enter opens its Company screen, a second tab runs an
explorer of its own on the same workspace and a third (over --max-tabs 2) is told so and starts
none; SIGINT then stops the server and the apps it started. The screen is read from xterm.js's
own buffer (it draws on a canvas): an init script keeps the page's Terminal when textual.js
creates it.

The WebSocket refuses pages of other origins. Without a browser: a non-loopback --host is
refused in one line, and the page template loads nothing from the network."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.ui.web_server import allowed_origins, is_loopback, offline_template
from tests.clock import wait_until
from tests.conftest import BUNDLE, ROOT

# textual.js assigns `this.terminal = new Terminal(...)`: a setter on Object.prototype sees it
# once and leaves an ordinary property behind
KEEP_TERMINAL = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true});
    if (value && value.buffer && typeof value.write === "function") window.__terminal = value;
  },
});
"""
SCREEN = """() => {
  const t = window.__terminal;
  if (!t) return "";
  const b = t.buffer.active, rows = [];
  for (let i = 0; i < t.rows; i++) {
    const line = b.getLine(b.viewportY + i);
    rows.push(line ? line.translateToString(true) : "");
  }
  return rows.join("\\n");
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> set[int]:
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


class Served:
    """A `fintrade-tui serve` subprocess and the lines it prints."""

    def __init__(self, config: Path, port: int) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fintrade_tui", "--config", str(config), "serve"]
            + ["--port", str(port), "--max-tabs", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
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

    def stop(self) -> None:
        """After a failed test: whatever of the group is left, ended (SIGINT first)."""
        for sig, grace in ((signal.SIGINT, 20), (signal.SIGKILL, 10)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(grace)


@pytest.fixture
def serve_config(tmp_path: Path, built_store) -> Path:
    """The session's store (a symlink) and a new workspace."""
    store = tmp_path / "store" / built_store.store.name
    store.parent.mkdir()
    store.symlink_to(built_store.store)
    path = tmp_path / "config.yaml"
    path.write_text(
        f"bundle: {BUNDLE}\nstore: {store}\nworkspace: {tmp_path / 'workspace.duckdb'}\n"
        f"model_dir: {ROOT / 'data' / 'models'}\nretrieval: {{index: {tmp_path / 'lancedb'}}}\n"
    )
    return path


@pytest.fixture
def served(serve_config: Path) -> Iterator[tuple[Served, str]]:
    port = _free_port()
    server = Served(serve_config, port)
    try:
        # a new workspace: the seed questions are imported before the server starts
        url = server.wait_for(r"fintrade-tui serve: open (http://\S+) \(Ctrl\+C stops\)", 180)[1]
        assert url == f"http://127.0.0.1:{port}"
        yield server, url
    finally:
        server.stop()


def _screen_until(page, pattern: str, timeout: float) -> re.Match[str]:
    """The terminal's text matched, once the page shows it (the browser waits on the
    condition: Playwright's `wait_for_function`)."""
    wanted = f"(re) => new RegExp(re, 'm').test(({SCREEN})())"
    try:
        page.wait_for_function(wanted, arg=pattern, timeout=timeout * 1000)
    except Exception:
        text = page.evaluate(SCREEN)
        raise AssertionError(
            f"{pattern!r} not on the terminal after {timeout} s:\n{text}"
        ) from None
    return re.search(pattern, page.evaluate(SCREEN), re.MULTILINE)


def _handshake(port: int, origin: str | None) -> int:
    """The HTTP status of a WebSocket handshake on /ws from a page of `origin`."""
    con = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
    }
    try:
        con.request("GET", "/ws", headers=headers | ({"Origin": origin} if origin else {}))
        return con.getresponse().status
    finally:
        con.close()


@pytest.mark.browser
def test_the_explorer_in_a_browser_offline_then_ctrl_c(offline_page, served, built_store):
    server, url = served
    with duckdb.connect(str(built_store.store), read_only=True) as con:
        (tickers,) = con.execute(
            "SELECT count(*) FROM (SELECT ticker FROM prices UNION SELECT ticker FROM filings)"
        ).fetchone()
        (name,) = con.execute("SELECT name FROM companies WHERE ticker = 'NVDA'").fetchone()
    page = offline_page
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.context.add_init_script(KEEP_TERMINAL)  # this page and the second tab's
    page.goto(url, wait_until="load")  # the stylesheets and the font have been asked for
    _screen_until(page, r"fintrade-tui — Universe", 120)
    shown = _screen_until(page, r"(\d+) of \1 tickers · Enter opens", 60)
    assert int(shown[1]) == tickers
    apps = _children(server.proc.pid)
    assert len(apps) == 1  # this tab's explorer

    page.focus(".xterm-helper-textarea")  # keys, not a mouse click on a row
    page.keyboard.type("NVDA")
    _screen_until(page, r"of \d+ tickers matching 'NVDA'", 20)
    page.keyboard.press("Enter")
    _screen_until(page, r"NVDA · FY\d{4} Q\d \(Q\d \d{4}\)", 30)
    _screen_until(page, rf"{re.escape(name)} · ", 10)

    # a second tab: an explorer of its own on the same workspace; a third is one too many
    second = page.context.new_page()
    second.goto(url, wait_until="load")
    _screen_until(second, r"(\d+) of \1 tickers · Enter opens", 120)
    both = _children(server.proc.pid)
    assert len(both) == 2 and apps < both
    apps = both
    third = page.context.new_page()
    third.goto(url, wait_until="load")
    _screen_until(third, r"2 explorer\(s\) are open in other tabs of this server", 30)
    assert _children(server.proc.pid) == apps

    # another site open in the same browser may not drive it (nor a client that names none)
    port = int(url.rsplit(":", 1)[1])
    for origin in ("http://attacker.example", f"http://127.0.0.1:{port + 1}", None):
        assert _handshake(port, origin) == 403, origin
    assert _children(server.proc.pid) == apps

    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(30) == 0, server.lines
    assert server.lines[-1] == "fintrade-tui serve: stopped"
    wait_until(
        lambda: not any(Path(f"/proc/{p}").exists() for p in apps), 10, 0.1, "the explorer gone"
    )
    assert page.blocked == []  # nothing on the page tried to leave the machine


def test_a_host_other_machines_reach_is_refused_without_allow_remote() -> None:
    res = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "8123"])
    assert res.exit_code == 2
    line = res.output.strip()
    assert "\n" not in line and "Traceback" not in res.output
    assert line.startswith("error: --host 0.0.0.0: gives full control of the explorer")
    assert "ssh -L 8123:127.0.0.1:8123" in line and "--allow-remote" in line


def test_loopback_and_origins() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("127.3.4.5") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert not is_loopback("example.org") and not is_loopback("::")
    assert allowed_origins("http://127.0.0.1:8000") == {
        "http://127.0.0.1:8000",
        "http://localhost:8000",
        "http://[::1]:8000",
    }
    assert allowed_origins("https://Explorer.example.org/") == {"https://explorer.example.org"}


def test_the_page_template_loads_nothing_remote(tmp_path: Path) -> None:
    page = (offline_template(tmp_path) / "app_index.html").read_text()
    assert "fonts.googleapis.com" not in page
    assert re.findall(r"(?:src|href)=\"(https?:)?//", page) == []
    font = re.search(r'url\("\{\{ config\.static\.url \}\}(fonts/[^"]+)"\)', page)[1]
    import textual_serve

    assert (Path(textual_serve.__file__).parent / "static" / font).is_file()
