"""`fintrade-tui serve` lets in only whoever holds its link, seen from another process with no
browser: a real `serve` subprocess on the session's store, and this test process as the other
user of the machine, speaking HTTP and WebSocket itself with the headers it chooses (as the
issue's 20-line aiohttp client did). Without the token, with a wrong one, with a forged
Origin: 403 for every page and every WebSocket upgrade, and no explorer process started. With
the token the explorer answers and takes the keys it is sent, and is gone within seconds of its
tab. A burst of 200 unauthenticated upgrades starts nothing and leaves the open tab working
(counts, not timings). Over TLS: https and wss, and plain http on its port gets no page."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.browser.serving import (
    RawClient,
    Served,
    free_port,
    make_cert,
    read_until,
    trusting,
    wait_gone,
    write_serve_config,
)

pytestmark = pytest.mark.long  # starts `serve` and its explorers (tests/conftest.py LONG_FILES)
ATTACKER = "http://attacker.example"
UNIVERSE = r"fintrade-tui — Universe"
REFUSAL = "lets in only whoever holds its link"


@pytest.fixture(scope="module")
def server(tmp_path_factory, built_store) -> Iterator[tuple[Served, RawClient, str]]:
    folder = tmp_path_factory.mktemp("serve-access")
    served = Served(write_serve_config(folder, built_store.store), free_port())
    try:
        base, token = served.started()
        yield served, RawClient(base), token
    finally:
        served.stop()


async def _log_in(client: RawClient, http: aiohttp.ClientSession, token: str) -> dict[str, str]:
    """What the owner's browser sends once it opened the link: the page's own Origin and the
    cookie the page load set."""
    status, text, res = await client.get(http, f"/?token={token}")
    assert status == 200 and "data-session-websocket-url" in text
    ((name, morsel),) = res.cookies.items()
    assert morsel.value != token and morsel["httponly"] and morsel["samesite"] == "Strict"
    return {"Origin": client.base, "Cookie": f"{name}={morsel.value}"}


def test_without_the_token_every_page_and_upgrade_is_403_and_nothing_starts(server) -> None:
    served, client, token = server
    own = {"Origin": client.base}
    token_cookie = {"Cookie": f"fintrade-serve-{served.port}={token}"}  # the token is no cookie

    async def main() -> None:
        async with client.session() as http:
            for path in ("/", "/static/js/textual.js", "/download/abc", "/ws", "/nowhere"):
                for query in ("", "?token=wrong", f"?token={token[:-1]}"):
                    for headers in ({}, token_cookie, {"Origin": ATTACKER}):
                        status, text, _ = await client.get(http, path + query, headers)
                        assert status == 403 and REFUSAL in text, (path, query, headers)
            for query, headers in [
                ("", own),  # no token: the client, its Origin forged to the server's
                ("&token=wrong", own),
                (f"&token={token}x", own),
                ("", own | token_cookie),
                ("", {"Origin": ATTACKER}),
                ("&token=wrong", {"Origin": ATTACKER}),
                ("", {}),
                (f"&token={token}", {"Origin": ATTACKER}),  # the token, from another site
                (f"&token={token}", {}),  # or from a client that names no page
            ]:
                assert await client.handshake(http, query, headers) == 403, (query, headers)

    asyncio.run(main())
    assert served.explorers() == set()
    with_token = [line for line in served.lines if token in line]
    assert len(with_token) == 1 and "serve: open" in with_token[0], served.lines  # once


def test_with_the_token_the_explorer_answers_and_goes_with_its_tab(server) -> None:
    served, client, token = server

    async def main() -> set[int]:
        async with client.session() as http:
            own = await _log_in(client, http, token)
            for path in ("/", "/static/js/textual.js"):  # the page's own requests
                assert (await client.get(http, path, own))[0] == 200, path
            # the page's addresses follow the server's own name the browser used (its
            # cookie is that host's), and no other Host a request names
            port = served.port
            for host, ws in [("localhost", "localhost"), ("evil.example", "127.0.0.1")]:
                _, text, _ = await client.get(http, f"/?token={token}", {"Host": f"{host}:{port}"})
                assert f'"ws://{ws}:{port}/ws"' in text, host
            tab = await client.handshake(http, "", own)
            assert not isinstance(tab, int), tab
            await read_until(tab, UNIVERSE, 120)
            apps = served.explorers()
            assert len(apps) == 1
            await tab.send_json(["stdin", "NVDA"])
            await read_until(tab, r"matching 'NVDA'", 30)
            # a script holding the link: the token itself on the upgrade
            script = await client.handshake(http, f"&token={token}", {"Origin": client.base})
            assert not isinstance(script, int), script
            await read_until(script, UNIVERSE, 120)
            both = served.explorers()
            assert len(both) == 2 and apps < both
            await tab.close()
            await script.close()
            return both

    wait_gone(asyncio.run(main()), 20, "the closed tabs' explorers gone")


def test_a_burst_of_200_unauthenticated_upgrades_starts_nothing_and_the_tab_works_on(
    server,
) -> None:
    served, client, token = server
    name = f"fintrade-serve-{served.port}"
    kinds = [  # (query, headers) for attempt i
        lambda i: ("", {"Origin": client.base}),
        lambda i: (f"&token=guess{i:040d}", {"Origin": client.base}),
        lambda i: ("", {"Origin": ATTACKER, "Cookie": f"{name}=forged{i}"}),
        lambda i: (f"&token={token}", {"Origin": ATTACKER}),
    ]

    async def main() -> set[int]:
        async with client.session(limit=0) as http:  # no limit: the burst at once
            own = await _log_in(client, http, token)
            tab = await client.handshake(http, "", own)
            assert not isinstance(tab, int), tab
            await read_until(tab, UNIVERSE, 120)
            apps = served.explorers()
            assert len(apps) == 1

            burst = [client.handshake(http, *kinds[i % len(kinds)](i)) for i in range(200)]
            answers = await asyncio.wait_for(asyncio.gather(*burst), 120)
            assert answers == [403] * 200
            assert served.explorers() == apps

            await tab.send_json(["stdin", "NVDA"])  # the open tab works on
            await read_until(tab, r"matching 'NVDA'", 30)
            second = await client.handshake(http, "", own)  # its cookie needs no turn
            assert not isinstance(second, int), second
            await read_until(second, UNIVERSE, 120)
            everything = served.explorers()
            assert len(everything) == 2
            await second.close()
            await tab.close()
            return everything

    wait_gone(asyncio.run(main()), 20, "the explorers gone")


def test_tls_serves_https_and_wss_and_plain_http_gets_no_page(tmp_path: Path, built_store) -> None:
    cert, key = make_cert(tmp_path)
    port = free_port()
    tls = ["--allow-remote", "--certfile", str(cert), "--keyfile", str(key)]
    served = Served(write_serve_config(tmp_path / "cfg", built_store.store), port, *tls)
    try:
        base, token = served.started()
        assert base == f"https://127.0.0.1:{port}"
        client = RawClient(base, trusting(cert))

        async def main() -> set[int]:
            async with client.session() as http:
                status, text, _ = await client.get(http, "/")
                assert status == 403 and REFUSAL in text
                assert await client.handshake(http, "", {"Origin": base}) == 403
                own = await _log_in(client, http, token)
                status, text, res = await client.get(http, f"/?token={token}")
                assert f'"wss://127.0.0.1:{port}/ws"' in text
                assert next(iter(res.cookies.values()))["secure"]
                tab = await client.handshake(http, "", own)
                assert not isinstance(tab, int), tab
                await read_until(tab, UNIVERSE, 120)
                apps = served.explorers()
                await tab.close()
            async with RawClient(f"http://127.0.0.1:{port}").session() as http:
                with pytest.raises(aiohttp.ClientError):
                    await http.get(f"http://127.0.0.1:{port}/?token={token}")
            return apps

        apps = asyncio.run(main())
        assert len(apps) == 1
        wait_gone(apps, 20, "the explorer gone")
    finally:
        served.stop()
