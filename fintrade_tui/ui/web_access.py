"""Web access room (UI layer): who the `serve` server (fintrade_tui/ui/web_server.py) lets in.
Only whoever holds its link: a token per server start (or FINTRADE_SERVE_TOKEN, for scripts)
in the URL it prints; the first page load with it sets an HttpOnly, SameSite=Strict cookie,
and every other request and WebSocket upgrade without the token or that cookie is refused
(403) before any handler runs, so no explorer starts for it. Tokens are compared in constant
time and never logged or stored. Wrong tokens are throttled (a few at once, then a few a
second, a bounded queue). Also the TLS context --certfile/--keyfile make. aiohttp loads only
when the middleware is built."""

from __future__ import annotations

import asyncio
import enum
import hmac
import os
import re
import secrets
import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from fintrade_tui.clock import SYSTEM, Clock
from fintrade_tui.errors import UserError

if TYPE_CHECKING:
    from aiohttp.typedefs import Middleware

TOKEN_ENV = "FINTRADE_SERVE_TOKEN"
TOKEN_PARAM = "token"
MIN_TOKEN = 22  # URL-safe characters: 128 bits when random; token_urlsafe(32) makes 43
TOKEN_CHARS = re.compile(r"[A-Za-z0-9_-]+")
MAKE_TOKEN = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
# wrong tokens: BURST answered at once, then one per INTERVAL seconds; QUEUE may wait for a turn
BURST = 10
INTERVAL = 0.25
QUEUE = 8


def server_token(environ: Mapping[str, str] = os.environ) -> str:
    """FINTRADE_SERVE_TOKEN when set (a script's fixed link), else a new random token. The
    error names the variable and the length, never the value."""
    given = environ.get(TOKEN_ENV, "")
    if not given:
        return secrets.token_urlsafe(32)
    if len(given) < MIN_TOKEN or not TOKEN_CHARS.fullmatch(given):
        raise UserError(
            TOKEN_ENV,
            f"is {len(given)} characters; a token needs at least {MIN_TOKEN}, each of A-Z a-z"
            " 0-9 - _",
            f"unset it for a new token at each start, or set one made by {MAKE_TOKEN}",
        )
    return given


class Throttle:
    """Turns for having a token checked, in `clock` time: `burst` at once, then one per
    `interval` seconds; a turn a right token took is given back, so only wrong ones use them
    up. While they are used up, at most `queue` requests wait for one (in arrival order) and
    any more are refused unchecked: a flood of guesses neither gets more than a few answers a
    second nor holds more than a few requests open."""

    def __init__(
        self,
        burst: int = BURST,
        interval: float = INTERVAL,
        queue: int = QUEUE,
        clock: Clock = SYSTEM,
    ) -> None:
        self.burst, self.interval, self.queue, self.clock = burst, interval, queue, clock
        self._turns = float(burst)
        self._stamp = clock.monotonic()
        self._waiting = 0
        self._line = asyncio.Lock()  # the waiters, one at a time, in arrival order

    def _refill(self) -> None:
        now = self.clock.monotonic()
        self._turns = min(self.burst, self._turns + (now - self._stamp) / self.interval)
        self._stamp = now

    def _take(self) -> bool:
        self._refill()
        if self._turns >= 1:
            self._turns -= 1
            return True
        return False

    async def turn(self) -> bool:
        """Wait for a turn: True once it is this request's, False (at once) when `queue`
        requests already wait."""
        if not self._waiting and self._take():
            return True
        if self._waiting >= self.queue:
            return False
        self._waiting += 1
        try:
            async with self._line:
                while not self._take():
                    await self.clock.asleep((1 - self._turns) * self.interval)
                return True
        finally:
            self._waiting -= 1

    def give_back(self) -> None:
        """A right token costs no turn."""
        self._turns = min(self.burst, self._turns + 1)


class Verdict(enum.Enum):
    """What a request showed at the door, and whether it is let in."""

    COOKIE = "the cookie a page load with the token set"
    TOKEN = "the token"
    MISSING = "This address was opened without the server's token."
    WRONG = "The token in this link is not this server's (it may be from an earlier start)."
    BUSY = "Too many wrong tokens were tried just now: open the link again in a few seconds."

    @property
    def admitted(self) -> bool:
        return self in (Verdict.COOKIE, Verdict.TOKEN)


def _same(given: str, secret: bytes) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), secret)


class Access:
    """The door of one server: its token, the cookie's name and its value (a random secret of
    this start, not the token: a cookie is never worth guessing, so checking one costs no
    turn), and the throttle on tokens."""

    def __init__(
        self, token: str, *, port: int, secure: bool, throttle: Throttle | None = None
    ) -> None:
        self._token = token.encode()
        self._session = secrets.token_urlsafe(32)
        self.cookie_name = f"fintrade-serve-{port}"  # cookies ignore ports: one per server
        self.secure = secure
        self.throttle = throttle or Throttle()

    def link(self, url: str) -> str:
        """The address to open: `url` with the token."""
        return f"{url.rstrip('/')}/?{TOKEN_PARAM}={self._token.decode()}"

    async def check(self, token: str | None, cookie: str | None) -> Verdict:
        """The cookie, else the token in its turn (see Throttle)."""
        if cookie and _same(cookie, self._session.encode()):
            return Verdict.COOKIE
        if not token:
            return Verdict.MISSING  # no guess made: nothing to slow down
        if not await self.throttle.turn():
            return Verdict.BUSY
        if _same(token, self._token):
            self.throttle.give_back()
            return Verdict.TOKEN
        return Verdict.WRONG

    def set_cookie(self, response: Any) -> None:
        """The session cookie on an aiohttp response: HttpOnly, SameSite=Strict, for the whole
        server, Secure over TLS; it ends with the browser session."""
        response.set_cookie(
            self.cookie_name,
            self._session,
            path="/",
            httponly=True,
            samesite="Strict",
            secure=self.secure,
        )


REFUSAL = """<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>fintrade-tui: open the link serve printed</title>
    <style>
      body {{ background: #0c181f; color: #e6e6e6; font-family: monospace; margin: 4em;
             max-width: 60em; line-height: 1.5; }}
      code {{ color: #ffd479; }}
    </style>
  </head>
  <body>
    <h1>fintrade-tui serve lets in only whoever holds its link</h1>
    <p>{reason}</p>
    <p>Open the link <code>fintrade-tui serve</code> printed when it started: it ends in
      <code>/?token=&hellip;</code>. A server started again prints a new one (unless
      <code>{env}</code> sets it).</p>
  </body>
</html>
"""


def refusal_page(verdict: Verdict) -> str:
    return REFUSAL.format(reason=verdict.value, env=TOKEN_ENV)


Handler = Callable[[Any], Awaitable[Any]]


def access_middleware(access: Access) -> Middleware:
    """The aiohttp middleware that holds the door for every route (the page, its static
    files, downloads, the WebSocket): a request not let in gets 403 and the refusal page
    before its handler runs. A page load with the token gets the cookie."""
    from aiohttp import web

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        verdict = await access.check(
            request.query.get(TOKEN_PARAM), request.cookies.get(access.cookie_name)
        )
        if not verdict.admitted:
            response = web.Response(
                status=403, text=refusal_page(verdict), content_type="text/html"
            )
        else:
            response = await handler(request)
        if not response.prepared:  # a WebSocket has sent its headers already
            if verdict is Verdict.TOKEN:
                access.set_cookie(response)
            # the token in a page's URL goes in no Referer; no other site frames the page;
            # no page is kept in a cache (the static files may be)
            response.headers["Referrer-Policy"] = "no-referrer"
            response.headers["X-Frame-Options"] = "DENY"
            if response.content_type == "text/html":
                response.headers["Cache-Control"] = "no-store"
        return response

    return guard


def _encrypted_key() -> str:
    raise UserError(
        "--keyfile",
        "is encrypted, and serve cannot ask for its passphrase",
        "give it a key without one (openssl pkey -in KEY -out PLAIN_KEY), kept readable by you"
        " only",
    )


def tls_context(certfile: str, keyfile: str | None) -> ssl.SSLContext:
    """The server's TLS: the certificate chain in `certfile` and its private key (in
    `keyfile`, or in `certfile` too); TLS 1.2 or later. A missing, unreadable or mismatched
    file is one line."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    for flag, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if path is not None and not os.path.isfile(path):
            raise UserError(f"{flag} {path}", "is not a file", "give the path of a PEM file")
    try:
        context.load_cert_chain(certfile, keyfile, password=_encrypted_key)
    except ssl.SSLError as exc:
        where = f"--certfile {certfile}" + (f" --keyfile {keyfile}" if keyfile else "")
        problem = (
            "the key is not this certificate's"
            if exc.reason == "KEY_VALUES_MISMATCH"
            else "no PEM certificate and private key could be read from it"
        )
        raise UserError(
            where,
            f"cannot serve TLS: {problem}",
            "give a PEM certificate (chain) and the private key it was made for",
        ) from None
    except OSError as exc:  # unreadable
        raise UserError(f"--certfile {certfile}", exc.strerror or str(exc)) from None
    return context
