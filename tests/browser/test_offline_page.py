"""The harness itself: `offline_page` lets loopback through and blocks and records the rest."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.browser

PAGE = b"""<!doctype html><html><head>
<link rel="stylesheet" href="https://fonts.example.com/css?family=Mono">
<script src="http://cdn.example.net/lib.js"></script>
</head><body><p id="ok">local page</p>
<script>new WebSocket("wss://socket.example.org/live");</script>
<img src="/local.png"></body></html>"""


@pytest.fixture
def local_site() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server answering PAGE at / and recording the paths it served."""
    served: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            served.append(self.path)
            body = PAGE if self.path == "/" else b""
            self.send_response(200 if self.path == "/" else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", served
    finally:
        server.shutdown()
        server.server_close()


def test_offline_page_blocks_and_records_everything_off_the_machine(offline_page, local_site):
    url, served = local_site
    offline_page.goto(url)
    assert offline_page.text_content("#ok") == "local page"
    offline_page.wait_for_function("document.readyState === 'complete'")
    # the page's script opens the WebSocket: the browser's requests are handled while
    # Playwright waits, so each look waits on the page a little until all three were blocked
    for _ in range(200):
        if len(offline_page.blocked) >= 3:
            break
        offline_page.wait_for_timeout(50)  # a condition polled (Playwright's event pump)
    assert sorted(offline_page.blocked) == [
        "http://cdn.example.net/lib.js",
        "https://fonts.example.com/css?family=Mono",
        "wss://socket.example.org/live",
    ]
    assert served == ["/", "/local.png"]  # the loopback requests went through
