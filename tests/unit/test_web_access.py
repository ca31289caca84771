"""Who `serve` lets in, without a server process: the token (random per start or
FINTRADE_SERVE_TOKEN, checked, never echoed), the throttle on wrong tokens in fake time, the
verdicts at the door, the aiohttp middleware on an in-process app (403 before the handler,
the cookie's attributes), the TLS context, the explorer's environment without the token, and
the CLI's one-line refusals and start line (the server's serve replaced: nothing listens)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.cli import serve as serve_cmd
from fintrade_tui.errors import UserError
from fintrade_tui.ui.web_access import (
    TOKEN_ENV,
    Access,
    Throttle,
    Verdict,
    access_middleware,
    server_token,
    tls_context,
)
from fintrade_tui.ui.web_server import server_class
from tests.browser.serving import free_port, make_cert
from tests.clock import FakeClock
from tests.conftest import BUNDLE, write_config

GOOD = "A" * 10 + "b-_" * 5 + "z" * 3  # 28 URL-safe characters


def test_a_new_token_each_start_or_the_one_the_environment_sets() -> None:
    first, second = server_token({}), server_token({TOKEN_ENV: ""})
    assert first != second and len(first) >= 43
    assert server_token({TOKEN_ENV: GOOD}) == GOOD
    for bad in ("short", "x" * 30 + "/", "é" * 30):
        with pytest.raises(UserError) as err:
            server_token({TOKEN_ENV: bad})
        assert str(err.value).startswith(f"{TOKEN_ENV}: is {len(bad)} characters")
        assert bad not in str(err.value)  # never echoed


def test_wrong_tokens_get_a_few_answers_at_once_then_a_few_a_second() -> None:
    clock = FakeClock()
    throttle = Throttle(burst=3, interval=0.5, queue=2, clock=clock)

    async def main() -> None:
        start = clock.monotonic()
        assert [await throttle.turn() for _ in range(3)] == [True] * 3  # the burst, at once
        assert clock.monotonic() == start
        queued = [asyncio.create_task(throttle.turn()) for _ in range(2)]
        await asyncio.sleep(0)  # both wait in line now
        assert await throttle.turn() is False  # a third in line: refused at once, unchecked
        assert await asyncio.gather(*queued) == [True, True]
        assert clock.monotonic() - start == pytest.approx(1.0)  # one turn per interval
        throttle.give_back()  # a right token's turn comes back
        assert await throttle.turn() is True and clock.monotonic() - start == pytest.approx(1.0)

    clock.run(main())


def test_the_door_lets_in_the_cookie_or_the_token_and_nothing_else() -> None:
    access = Access(GOOD, port=8000, secure=False, throttle=Throttle(burst=2, queue=0))
    cookie = access._session

    async def main() -> list[Verdict]:
        return [
            await access.check(None, None),
            await access.check(None, "forged"),
            await access.check("é" * 5, None),  # not ASCII: compared all the same
            await access.check(GOOD, None),  # a right token costs no turn
            await access.check(GOOD + "x", None),  # the second wrong one: the last turn
            await access.check(GOOD, None),  # none left, nobody may wait: not even checked
            await access.check("wrong", cookie),  # the cookie needs no turn
        ]

    assert asyncio.run(main()) == [
        Verdict.MISSING,
        Verdict.MISSING,
        Verdict.WRONG,
        Verdict.TOKEN,
        Verdict.WRONG,
        Verdict.BUSY,
        Verdict.COOKIE,
    ]
    assert access.link("http://127.0.0.1:8000/") == f"http://127.0.0.1:8000/?token={GOOD}"
    assert cookie != GOOD


@pytest.mark.parametrize("secure", [False, True])
def test_the_middleware_answers_403_before_any_handler_and_sets_a_strict_cookie(
    secure: bool,
) -> None:
    from aiohttp import DummyCookieJar, web
    from aiohttp.test_utils import TestClient, TestServer

    access = Access(GOOD, port=8123, secure=secure)
    handled: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        handled.append(request.path)
        return web.Response(text="the explorer")

    async def main() -> None:
        app = web.Application(middlewares=[access_middleware(access)])
        app.router.add_get("/", handler)
        app.router.add_get("/static/{name}", handler)
        async with TestClient(TestServer(app), cookie_jar=DummyCookieJar()) as client:
            for path, headers in [
                ("/", {}),
                ("/static/textual.js", {}),
                ("/?token=wrong", {}),
                ("/", {"Cookie": f"fintrade-serve-8123={GOOD}"}),  # the token is no cookie
                ("/nowhere", {}),
            ]:
                res = await client.get(path, headers=headers)
                assert res.status == 403, path
                assert "lets in only whoever holds its link" in await res.text()
                assert "set-cookie" not in res.headers
            assert handled == []

            res = await client.get(f"/?token={GOOD}")
            assert res.status == 200 and await res.text() == "the explorer"
            (set_cookie,) = res.headers.getall("Set-Cookie")
            name, rest = set_cookie.split("=", 1)
            value, *attributes = [a.strip() for a in rest.split(";")]
            assert name == "fintrade-serve-8123" and value == access._session
            attributes = {a.lower() for a in attributes}
            assert {"httponly", "path=/", "samesite=strict"} <= attributes
            assert ("secure" in attributes) is secure
            assert res.headers["Referrer-Policy"] == "no-referrer"

            res = await client.get("/static/textual.js", headers={"Cookie": f"{name}={value}"})
            assert res.status == 200 and "set-cookie" not in res.headers
            assert handled == ["/", "/static/textual.js"]

    asyncio.run(main())


def test_tls_context_and_its_one_line_refusals(tmp_path: Path) -> None:
    cert, key = make_cert(tmp_path)
    assert tls_context(str(cert), str(key)) is not None
    both = tmp_path / "both.pem"
    both.write_text(cert.read_text() + key.read_text())
    assert tls_context(str(both), None) is not None  # the key in the certificate's file
    encrypted = tmp_path / "encrypted.pem"
    subprocess.run(
        ["openssl", "pkey", "-in", key, "-out", encrypted, "-aes256", "-passout", "pass:x"],
        check=True,
    )
    (tmp_path / "other").mkdir()
    other, _ = make_cert(tmp_path / "other")
    for args, start in [
        ((str(tmp_path / "missing.pem"), None), "--certfile"),
        ((str(cert), None), "--certfile"),  # no key in it
        ((str(cert), str(cert)), "--certfile"),
        ((str(other), str(key)), "--certfile"),  # another certificate's key
        ((str(cert), str(encrypted)), "--keyfile: is encrypted"),
    ]:
        with pytest.raises(UserError) as err:
            tls_context(*args)
        assert str(err.value).startswith(start) and "\n" not in str(err.value), args
    with pytest.raises(UserError, match="the key is not this certificate's"):
        tls_context(str(other), str(key))


def test_the_explorers_environment_holds_no_token(monkeypatch) -> None:
    import textual_serve.server

    server_class()
    monkeypatch.setenv(TOKEN_ENV, GOOD)

    async def noop(*_: object) -> None:
        return None

    service = textual_serve.server.AppService(
        "true", write_bytes=noop, write_str=noop, close=noop, download_manager=None
    )
    env = service._build_environment(100, 30)
    assert TOKEN_ENV not in env and env["COLUMNS"] == "100"


def _serve(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    config = write_config(tmp_path / "cfg", BUNDLE)
    return CliRunner().invoke(main, ["--config", str(config), "serve", *args], env=env)


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--allow-remote"], "error: --allow-remote: would send the link's token"),
        (["--host", "0.0.0.0", "--allow-remote"], "error: --allow-remote: would send"),
        (["--keyfile", "k.pem"], "error: --keyfile: needs --certfile"),
        (["--certfile", "c.pem", "--insecure"], "error: --insecure: contradicts --certfile"),
        (["--certfile", "missing.pem"], "error: --certfile missing.pem: is not a file"),
    ],
)
def test_serve_refuses_in_one_line(tmp_path: Path, args: list[str], start: str) -> None:
    res = _serve(tmp_path, "--port", "8123", *args)
    assert res.exit_code == 2
    line = res.output.strip()
    assert "\n" not in line and "Traceback" not in res.output
    assert line.startswith(start), line
    if "--allow-remote" in args:
        assert "--certfile CERT.pem --keyfile KEY.pem" in line and "--insecure" in line


def test_a_bad_token_in_the_environment_is_one_line(tmp_path: Path) -> None:
    res = _serve(tmp_path, env={TOKEN_ENV: "letmein"})
    assert res.exit_code == 2
    assert res.output.strip().startswith(f"error: {TOKEN_ENV}: is 7 characters")
    assert "letmein" not in res.output


@pytest.fixture
def started(monkeypatch) -> list:
    """`serve` up to its start line: the store left alone, the server's serve only prints
    what it would on start-up, no child process of the test's own stopped."""
    servers: list = []

    class Printed(server_class()):
        def serve(self, debug: bool = False) -> None:
            servers.append(self)
            asyncio.run(self.on_startup(None))

    monkeypatch.setattr(serve_cmd, "prepare", lambda cfg: None)
    monkeypatch.setattr(serve_cmd, "server_class", lambda: Printed)
    monkeypatch.setattr(serve_cmd, "_stop_children", lambda: None)
    return servers


def test_the_start_line_holds_the_link_with_its_token(tmp_path: Path, started) -> None:
    port = free_port()
    res = _serve(tmp_path, "--port", str(port), env={TOKEN_ENV: GOOD})
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        f"fintrade-tui serve: open http://127.0.0.1:{port}/?token={GOOD} (Ctrl+C stops)",
        "fintrade-tui serve: stopped",
    ]
    (server,) = started
    assert server.ssl_context is None and not server.access.secure

    res = _serve(tmp_path, "--port", str(port), env={TOKEN_ENV: ""})  # a new one each start
    token = res.output.split("?token=")[1].split()[0]
    assert len(token) >= 43 and token != GOOD


def test_tls_makes_an_https_link_and_insecure_remote_warns(tmp_path: Path, started) -> None:
    cert, key = make_cert(tmp_path)
    port = free_port()
    tls = ["--allow-remote", "--certfile", str(cert), "--keyfile", str(key)]
    res = _serve(tmp_path, "--port", str(port), *tls, env={TOKEN_ENV: GOOD})
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == (
        f"fintrade-tui serve: open https://127.0.0.1:{port}/?token={GOOD} (Ctrl+C stops)"
    )
    assert started[-1].ssl_context is not None and started[-1].access.secure

    res = _serve(tmp_path, "--host", "0.0.0.0", "--port", str(port), "--allow-remote", "--insecure")
    assert res.exit_code == 0, res.output
    first, warning, _ = res.output.splitlines()
    assert first.startswith("fintrade-tui serve: open http://") and "?token=" in first
    assert warning.startswith("fintrade-tui serve: warning: --insecure: the link's token")
