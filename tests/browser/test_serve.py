"""`fintrade-tui serve`: the explorer in a real browser, offline. A real `serve` subprocess on
the session's store and a new workspace; headless Chromium opens the link it prints (nothing
may leave the machine), the Universe appears, NVDA + Enter opens its Company screen, a second
tab runs an explorer of its own on the same workspace and a third (over --max-tabs 2) is told
so and starts none; closing the second ends its explorer; SIGINT then stops the server and the
apps it started. The screen is read from xterm.js's own buffer (it draws on a canvas): an init
script keeps the page's Terminal when textual.js creates it.

Only the printed link lets a browser in: the same address without its token, or with another,
shows the refusal page and starts nothing; the link sets a cookie (HttpOnly, SameSite=Strict)
that lets the browser's other tabs in, and its token leaves the address bar. A closed tab's
explorer is gone within seconds. Without a browser: a non-loopback --host is refused in one
line, and the page template loads nothing from the network (test_serve_access.py: raw clients,
a burst of them, TLS)."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.ui.web_server import allowed_origins, is_loopback, offline_template
from tests.browser.serving import Served, free_port, wait_gone, write_serve_config

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


@pytest.fixture
def served(tmp_path: Path, built_store) -> Iterator[tuple[Served, str, str]]:
    port = free_port()
    server = Served(write_serve_config(tmp_path, built_store.store), port)
    try:
        base, token = server.started()
        assert base == f"http://127.0.0.1:{port}"
        yield server, base, token
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


@pytest.mark.browser
def test_the_explorer_in_a_browser_offline_then_ctrl_c(offline_page, served, built_store):
    server, base, token = served
    link = f"{base}/?token={token}"
    with duckdb.connect(str(built_store.store), read_only=True) as con:
        (tickers,) = con.execute(
            "SELECT count(*) FROM (SELECT ticker FROM prices UNION SELECT ticker FROM filings)"
        ).fetchone()
        (name,) = con.execute("SELECT name FROM companies WHERE ticker = 'NVDA'").fetchone()
    page = offline_page
    page.set_viewport_size({"width": 1600, "height": 1000})
    page.context.add_init_script(KEEP_TERMINAL)  # this page and the second tab's

    # the same address without the token, or with another: the refusal page, no explorer
    for refused in (base, f"{base}/?token=x{token}"):
        res = page.goto(refused, wait_until="load")
        assert res.status == 403, refused
        assert "lets in only whoever holds its link" in page.inner_text("h1")
    assert page.context.cookies() == [] and server.explorers() == set()

    page.goto(link, wait_until="load")  # the stylesheets and the font have been asked for
    _screen_until(page, r"fintrade-tui — Universe", 120)
    shown = _screen_until(page, r"(\d+) of \1 tickers · Enter opens", 60)
    assert int(shown[1]) == tickers
    assert "token" not in page.url  # out of the address bar once the page has it
    (cookie,) = page.context.cookies()
    assert cookie["name"] == f"fintrade-serve-{server.port}" and cookie["value"] != token
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
    apps = server.explorers()
    assert len(apps) == 1  # this tab's explorer

    page.focus(".xterm-helper-textarea")  # keys, not a mouse click on a row
    page.keyboard.type("NVDA")
    _screen_until(page, r"of \d+ tickers matching 'NVDA'", 20)
    page.keyboard.press("Enter")
    _screen_until(page, r"NVDA · FY\d{4} Q\d \(Q\d \d{4}\)", 30)
    _screen_until(page, rf"{re.escape(name)} · ", 10)

    # a second tab of the same browser, the bare address: its cookie lets it in, an explorer
    # of its own on the same workspace; a third is one too many
    second = page.context.new_page()
    second.goto(base, wait_until="load")
    _screen_until(second, r"(\d+) of \1 tickers · Enter opens", 120)
    both = server.explorers()
    assert len(both) == 2 and apps < both
    third = page.context.new_page()
    third.goto(base, wait_until="load")
    _screen_until(third, r"2 explorer\(s\) are open in other tabs of this server", 30)
    assert server.explorers() == both

    # a closed tab's explorer is gone within seconds
    second.close()
    wait_gone(both - apps, 20, "the closed tab's explorer gone")
    assert server.explorers() == apps

    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(30) == 0, server.lines
    assert server.lines[-1] == "fintrade-tui serve: stopped"
    wait_gone(apps, 10, "the explorer gone")
    with_token = [line for line in server.lines if token in line]
    assert len(with_token) == 1 and "serve: open" in with_token[0]  # the start line only
    assert page.blocked == []  # nothing on the page tried to leave the machine


def test_a_host_other_machines_reach_is_refused_without_allow_remote() -> None:
    res = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--port", "8123"])
    assert res.exit_code == 2
    line = res.output.strip()
    assert "\n" not in line and "Traceback" not in res.output
    assert line.startswith("error: --host 0.0.0.0: gives full control of the explorer")
    assert "ssh -L 8123:127.0.0.1:8123" in line and "--allow-remote with --certfile" in line


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
    assert 'url.searchParams.delete("token")' in page  # the token leaves the address bar
    font = re.search(r'url\("\{\{ config\.static\.url \}\}(fonts/[^"]+)"\)', page)[1]
    import textual_serve

    assert (Path(textual_serve.__file__).parent / "static" / font).is_file()
