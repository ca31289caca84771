"""Redaction room: the one place that blanks API keys out of text before it is stored, shown or
logged. Every text that leaves a model call (streamed and final answers, tool-call arguments,
reasoning, error lines, judge replies) and every run record passes through here.

A secret is any value, 8 characters or longer, of
- a key `keys.env_key` read from the environment (every model's and deployment's key),
- an environment variable a registry entry in use names (`api_key_env`, set by `watch`),
- any environment variable whose name ends in _API_KEY, _KEY or _TOKEN (belt and braces),
and its base64 form too. Each occurrence becomes `***` (MARK). Shorter values are left alone:
blanking a 3-letter "key" would garble ordinary text. The environment is read at each call (a
stream: as it starts), so a key exported after start-up is covered; nothing here stores or
logs a key.
"""

from __future__ import annotations

import base64
import functools
import os
from typing import Any

MARK = "***"
MIN_LEN = 8
SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN")

_read: set[str] = set()  # key values env_key handed out
_names: set[str] = set()  # variables the registry in use names


def remember(value: str | None) -> None:
    """A key value read from the environment for a call: blank it wherever it shows up."""
    if value and len(value) >= MIN_LEN:
        _read.add(value)


def watch(names: Any) -> None:
    """Environment variable names holding keys (a config's `api_key_env`s)."""
    _names.update(n for n in names if n)


def watch_config(models: dict[str, Any]) -> None:
    """Every `api_key_env` of a model registry, its deployments' included."""
    names = []
    for spec in models.values():
        names.append(spec.api_key_env)
        names += [d.api_key_env for d in spec.deployments]
    watch(names)


def secrets() -> tuple[str, ...]:
    """The values to blank now, longest first (a key containing another is blanked whole)."""
    env = os.environ
    values = set(_read)
    values.update(env[n] for n in _names if n in env)
    values.update(v for k, v in env.items() if k.upper().endswith(SUFFIXES))
    return _forms(frozenset(v for v in values if len(v) >= MIN_LEN))


@functools.lru_cache(maxsize=32)
def _forms(values: frozenset[str]) -> tuple[str, ...]:
    out = set(values)
    for v in values:
        raw = v.encode("utf-8", "surrogateescape")  # a variable's non-UTF-8 bytes, as they are
        b = base64.b64encode(raw).decode()
        out.update({b, b.rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("=")})
    return tuple(sorted((f for f in out if len(f) >= MIN_LEN), key=lambda f: (-len(f), f)))


def text(s: str, extra: tuple[str, ...] = ()) -> str:
    """`s` with every secret (and the `extra` values, e.g. a call's own keys) blanked."""
    if not s:
        return s
    return _blank(s, (*secrets(), *_long_enough(extra)))


def _long_enough(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(str(k) for k in values if k and len(str(k)) >= MIN_LEN)


def _blank(s: str, keys: tuple[str, ...]) -> str:
    for key in keys:
        if key in s:
            s = s.replace(key, MARK)
    return s


def scrub(obj: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string blanked; dict keys
    too. Other values are returned as they are."""
    keys = secrets()
    if not keys:
        return obj
    return _scrub(obj, keys)


def _scrub(obj: Any, keys: tuple[str, ...]) -> Any:
    if isinstance(obj, str):
        for key in keys:
            if key in obj:
                obj = obj.replace(key, MARK)
        return obj
    if isinstance(obj, dict):
        return {_scrub(k, keys): _scrub(v, keys) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(_scrub(v, keys) for v in obj)
    return obj


_MESSAGE_FIELDS = ("content", "reasoning_content", "refusal")


def response(resp: Any) -> Any:
    """A litellm completion with its message text, reasoning, tool-call names and arguments and
    provider fields blanked, in place (callers read `choices[i].message`); returned."""
    if not secrets():
        return resp
    for choice in getattr(resp, "choices", None) or []:
        msg = getattr(choice, "message", None)
        if msg is None:
            continue
        for name in _MESSAGE_FIELDS:
            value = getattr(msg, name, None)
            if isinstance(value, str):
                setattr(msg, name, text(value))
        calls = list(getattr(msg, "tool_calls", None) or [])
        legacy = getattr(msg, "function_call", None)
        for fn in [getattr(c, "function", None) for c in calls] + [legacy]:
            for name in ("arguments", "name"):
                value = getattr(fn, name, None) if fn is not None else None
                if isinstance(value, str):
                    setattr(fn, name, text(value))
        extra = getattr(msg, "provider_specific_fields", None)
        if isinstance(extra, dict):
            msg.provider_specific_fields = scrub(extra)
    return resp


class Stream:
    """Blanks secrets in a stream of text deltas, even one split across deltas: the tail that
    could still be the start of a secret is held back until the next delta shows it is not."""

    def __init__(self, extra: tuple[str, ...] = ()) -> None:
        # the environment read once a stream, not at each delta (~0.5 ms each, dozens a run)
        self.keys = (*secrets(), *_long_enough(extra))
        self.held = ""

    def feed(self, delta: str) -> str:
        """The text that can be shown now."""
        buf = _blank(self.held + delta, self.keys)
        keep = self._prefix_len(buf)
        self.held = buf[len(buf) - keep :] if keep else ""
        return buf[: len(buf) - keep]

    def flush(self) -> str:
        """What is held at the end; a held start of a secret this long is blanked too (a
        key cut off by the token limit)."""
        rest, self.held = self.held, ""
        return MARK if len(rest) >= MIN_LEN else rest

    def _prefix_len(self, buf: str) -> int:
        """Length of the longest tail of `buf` that is a proper prefix of a secret."""
        best = 0
        for key in self.keys:
            for n in range(min(len(key) - 1, len(buf)), best, -1):
                if buf.endswith(key[:n]):
                    best = n
                    break
        return best
