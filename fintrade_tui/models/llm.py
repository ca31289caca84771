"""Model gateway room: the one place that imports litellm (lazily) and sends a resolved model's
`Call` (models/resolve.py). Every model call of the app goes through `stream_chat` or `complete`.

Per-request arguments only: no global litellm settings change between calls. API keys are
read from the environment variable the registry names and never leave a call's arguments;
every text a call gives back (streamed deltas, whole replies, tool-call arguments, error lines)
passes through `redact` first, so a provider echoing a key shows `***` instead.
"""

from __future__ import annotations

import asyncio
import email.utils
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fintrade_tui import redact

if TYPE_CHECKING:
    from fintrade_tui.models.deployments import Pool


@dataclass
class Call:
    """One call's arguments: what litellm is sent, and the model's deployment pool, kept
    apart (it chooses and paces an endpoint per attempt and is never sent)."""

    kwargs: dict[str, Any]
    pool: Pool | None = None
    local: bool = False  # an offline model: no price (unless its entry sets one), no key
    # the entry's own prices (litellm's `custom_cost_per_token`; models/pricing.py), else None:
    # litellm's price map
    price: dict[str, float] | None = None

    def updated(self, **kwargs: Any) -> Call:
        return Call(self.kwargs | kwargs, self.pool, self.local, self.price)

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys this call may send (its own, or each deployment's): blanked wherever a
        provider echoes them."""
        keys = [self.kwargs.get("api_key")]
        keys += list(self.pool.keys.values()) if self.pool is not None else []
        return tuple(str(k) for k in keys if k)


_litellm: Any = None


def litellm() -> Any:
    """litellm, imported on first use with the offline cost map (else it fetches one from the
    web and prints warnings into the terminal) and the local provider registered."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as mod

        mod.suppress_debug_info = True
        # its success logging feeds litellm's own callbacks (none here: usage and cost are read
        # from the stream, `_cost`); on, it cost ~4 CPU-s of lazy imports at a process's first
        # streamed answers, a third of a 60-run batch against an instant server
        mod.disable_streaming_logging = True
        import logging

        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            # its warnings go to stderr and would garble the terminal UI and piped output
            logging.getLogger(name).setLevel(logging.ERROR)
        from fintrade_tui.models import local

        local.install()
        _litellm = mod
    return _litellm


async def _routed(
    call: Call, usage: Usage | None = None, messages: list[dict] | None = None
) -> dict[str, Any]:
    """The call's own arguments: with deployments, one chosen (and paced) for this attempt."""
    if call.pool is None:
        return call.kwargs
    dep, kw = await call.pool.acquire(call.kwargs, messages)
    if usage is not None:
        usage.deployment = dep
    return kw


def _failed(call: Call, usage: Usage | None, exc: BaseException) -> None:
    """A retryable failure cools the deployment that answered it down."""
    if call.pool is not None and usage is not None and usage.deployment and retryable(exc):
        call.pool.cool_down(usage.deployment)


# the retry wait: patched by tests, which record the waits instead of sleeping them
sleep = asyncio.sleep
MAX_RETRY_AFTER = 120.0  # seconds: a longer Retry-After ends the run instead of stalling it


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """The seconds a 429/503 reply's Retry-After header asks for (a number or an HTTP date),
    None without one."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        value = next((str(v) for k, v in dict(headers or {}).items() if k.lower() == "retry-after"))
    except StopIteration:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _no_client_retries(kwargs: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments with the client library's own retries off (the OpenAI client
    retried 429s twice on its own): every attempt is made, counted and paced here."""
    return {**kwargs, **extra, "max_retries": 0}


async def _wait_to_retry(exc: BaseException, attempt: int, backoff: float) -> None:
    """Exponential backoff, or the server's Retry-After when it asks for longer."""
    await sleep(max(backoff * 2 ** (attempt - 1), retry_after(exc) or 0.0))


def _worth_retrying(exc: BaseException) -> bool:
    """`retryable`, unless the server asks for a wait longer than MAX_RETRY_AFTER."""
    asked = retry_after(exc)
    return retryable(exc) and (asked is None or asked <= MAX_RETRY_AFTER)


def retryable(exc: BaseException) -> bool:
    """429, 5xx and connection failures are worth another try; bad requests are not."""
    lm = litellm()
    kinds = (
        lm.RateLimitError,
        lm.InternalServerError,
        lm.ServiceUnavailableError,
        lm.APIConnectionError,
    )
    if isinstance(exc, kinds):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


@dataclass
class Usage:
    """What one streamed call measured."""

    started: float = field(default_factory=time.monotonic)
    ttft: float | None = None  # seconds to the first text
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    retries: int = 0
    deployment: str | None = None  # the registry deployment that answered (None: no list)


async def stream_chat(
    call: Call,
    messages: list[dict[str, Any]],
    usage: Usage,
    retries: int = 3,
    backoff: float = 1.0,
    **extra: Any,
) -> AsyncIterator[str]:
    """Text deltas of one chat completion. Failures before the first text are retried with
    exponential backoff when `retryable`; a failure after it ends the stream with the error
    (the caller keeps the partial answer)."""
    lm = litellm()
    attempt = 0
    while True:
        got_text = False
        shown = redact.Stream(call.keys)  # a key split over deltas is blanked too
        try:
            kwargs = await _routed(call, usage, messages)
            response = await lm.acompletion(
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                **_no_client_retries(kwargs, extra),
            )
            reported: tuple[int | None, int | None] = (None, None)
            async for chunk in response:
                if (got := _reported(chunk))[0] is not None:
                    reported = got
                if not chunk.choices:
                    continue
                text = chunk.choices[0].delta.content
                if text:
                    if usage.ttft is None:
                        usage.ttft = time.monotonic() - usage.started
                    got_text = True
                    if text := shown.feed(text):
                        yield text
            if tail := shown.flush():
                yield tail
            _cost(call, usage, *reported)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _failed(call, usage, exc)
            if got_text or attempt >= retries or not _worth_retrying(exc):
                if tail := shown.flush():
                    yield tail  # the partial answer the caller keeps
                raise
            attempt += 1
            usage.retries = attempt
            await _wait_to_retry(exc, attempt, backoff)


async def complete(
    call: Call,
    messages: list[dict[str, Any]],
    retries: int = 3,
    backoff: float = 1.0,
    usage: Usage | None = None,
    **extra: Any,
) -> Any:
    """One whole (non-streamed) completion with the same retry policy: tool rounds, judges.
    With `usage`, the reply's reported tokens and their cost are added to it (a run's tool
    rounds and best-of choice count in its record)."""
    lm = litellm()
    attempt = 0
    while True:
        tried = Usage()
        try:
            kwargs = await _routed(call, tried, messages)
            reply = await lm.acompletion(messages=messages, **_no_client_retries(kwargs, extra))
            if usage is not None:
                _cost(call, usage, *_reported(reply))
            return redact.response(reply)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _failed(call, tried, exc)
            if attempt >= retries or not _worth_retrying(exc):
                raise
            attempt += 1
            await _wait_to_retry(exc, attempt, backoff)


def _reported(reply: Any) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens a chunk or reply reports, (None, None) without usage."""
    u = getattr(reply, "usage", None)
    if u and getattr(u, "completion_tokens", None):
        return u.prompt_tokens, u.completion_tokens
    return None, None


def call_cost(
    model: str, tokens_in: int, tokens_out: int, custom: dict[str, float] | None = None
) -> float | None:
    """USD of one call's reported usage: litellm's `cost_per_token` (its price map), or the
    entry's own prices (`custom`); None for a model litellm has no price for."""
    try:
        a, b = litellm().cost_per_token(
            model=model,
            prompt_tokens=tokens_in,
            completion_tokens=tokens_out,
            custom_cost_per_token=custom,
        )
    except Exception:  # not in the price map, and no price of its own
        return None
    return a + b


def _cost(call: Call, usage: Usage, tokens_in: int | None, tokens_out: int | None) -> None:
    """Add one call's reported usage, and its cost, to what `usage` holds: a run that makes
    several calls (tool rounds, best-of-N candidates and the choice) records their sum. The
    cost is the provider's token counts priced, never an estimate; None once any priced call
    could not be priced."""
    if tokens_in is None:
        return
    first = usage.tokens_in is None
    usage.tokens_in = (usage.tokens_in or 0) + tokens_in
    usage.tokens_out = (usage.tokens_out or 0) + (tokens_out or 0)
    if call.local and call.price is None:
        return
    cost = call_cost(call.kwargs["model"], tokens_in, tokens_out or 0, call.price)
    if cost is None or (usage.cost is None and not first):
        usage.cost = None
    else:
        usage.cost = (usage.cost or 0.0) + cost


def error_text(exc: BaseException, call: Call | None = None) -> str:
    """One line for the run record and the pane: the error class and its first line, with
    every key blanked out should a provider echo it back (before cutting: a key across the
    cut would otherwise leave its start)."""
    whole = redact.text(str(exc), call.keys if call else ())
    first = (whole.strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
