"""HTTP room for `pull`: a rate-limited urllib client behind a `Fetcher` protocol (tests inject
a fake), and atomic file writes so a reader never sees half a file."""

from __future__ import annotations

import gzip
import http.client
import os
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from fintrade_tui.errors import UserError

SEC_MAX_RPS = 10.0  # SEC fair-access policy


class Fetcher(Protocol):
    def get(self, url: str) -> bytes: ...


class FetchError(Exception):
    """A request that failed; `status` is the HTTP code, or None for a network failure."""

    def __init__(self, url: str, status: int | None, reason: str) -> None:
        self.url, self.status, self.reason = url, status, reason
        super().__init__(f"{url}: {status or 'network error'} {reason}")


class HttpFetcher:
    """urllib client with SEC's required User-Agent and a global request-rate limit."""

    def __init__(
        self,
        user_agent: str,
        requests_per_second: float,
        timeout: float = 60.0,
        *,
        opener: Callable[..., Any] = urllib.request.urlopen,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.user_agent = user_agent
        self.interval = 1.0 / min(requests_per_second, SEC_MAX_RPS)
        self.timeout = timeout
        self._open, self._clock, self._sleep = opener, clock, sleep
        self._next = 0.0

    def _wait(self) -> None:
        now = self._clock()
        if now < self._next:
            self._sleep(self._next - now)
            now = self._next
        self._next = now + self.interval

    def get(self, url: str) -> bytes:
        ua = self.user_agent  # SEC wants "name email"
        if not (urlsplit(url).hostname or "").endswith("sec.gov"):
            ua = f"Mozilla/5.0 (compatible; {ua})"  # Yahoo answers 429 to non-browser agents
        req = urllib.request.Request(url, headers={"User-Agent": ua, "Accept-Encoding": "gzip"})
        self._wait()
        try:
            with self._open(req, timeout=self.timeout) as resp:
                body = resp.read()
                if (resp.headers.get("Content-Encoding") or "").lower() == "gzip":
                    body = gzip.decompress(body)
                return body
        except urllib.error.HTTPError as exc:
            raise FetchError(url, exc.code, str(exc.reason)) from None
        except (urllib.error.URLError, OSError, EOFError, http.client.HTTPException) as exc:
            # DNS failure, refused, timed out, connection cut mid-body
            raise FetchError(url, None, str(getattr(exc, "reason", exc))) from None


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, so a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the suffix keeps the temp file out of ingest's *.csv / *.htm globs
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UserError(
            str(path), f"cannot be written ({exc.strerror or exc})", "choose a writable --out"
        ) from None
