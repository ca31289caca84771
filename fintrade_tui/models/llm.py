"""Model gateway room: the one place that imports litellm (lazily) and turns a registry entry
into call arguments. Every model call of the app goes through `stream_chat` or `complete`.

Per-request arguments only: no global litellm settings change between calls. API keys are
read from the environment variable the registry names and never leave this module's kwargs;
every text a call gives back (streamed deltas, whole replies, tool-call arguments, error lines)
passes through `redact` first, so a provider echoing a key shows `***` instead.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fintrade_tui import redact
from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.errors import UserError
from fintrade_tui.models.keys import env_key

_litellm: Any = None


def litellm() -> Any:
    """litellm, imported on first use with the offline cost map (else it fetches one from the
    web and prints warnings into the terminal) and the local provider registered."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm as mod

        mod.suppress_debug_info = True
        import logging

        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
            # its warnings go to stderr and would garble the terminal UI and piped output
            logging.getLogger(name).setLevel(logging.ERROR)
        from fintrade_tui.models import local

        local.install()
        _litellm = mod
    return _litellm


def model_spec(cfg: Config, name: str) -> ModelConfig:
    # every key variable of the registry in use is blanked wherever its value shows up
    redact.watch_config(cfg.models)
    if name not in cfg.models:
        known = ", ".join(sorted(cfg.models)) or "none"
        raise UserError(
            f"model {name!r}", f"is not in the registry ({known})", "add it under models:"
        )
    return cfg.models[name]


def call_kwargs(name: str, spec: ModelConfig, model_dir: Path | None = None) -> dict[str, Any]:
    """litellm keyword arguments for one registry entry (the key from its env variable);
    `model_dir` holds the packaged local weights (config `model_dir`)."""
    kw: dict[str, Any] = {
        "model": spec.model,
        "temperature": spec.temperature,
        "max_tokens": spec.max_tokens,
        "timeout": spec.timeout,
    }
    if spec.api_base:
        kw["api_base"] = spec.api_base
    if spec.api_key_env:
        kw["api_key"] = env_key(f"model {name!r}", spec.api_key_env)
    if spec.model.startswith("local/"):
        from fintrade_tui.models import local

        local.register(spec.model.split("/", 1)[1], spec.gguf, spec.context_tokens, model_dir)
    kw.update(spec.extra)
    if spec.deployments:
        from fintrade_tui.models import deployments

        kw[deployments.POOL] = deployments.pool(name, spec)  # chosen per attempt: _routed
    return kw


async def _routed(
    kwargs: dict[str, Any], usage: Usage | None = None, messages: list[dict] | None = None
) -> dict[str, Any]:
    """The call's own arguments: with deployments, one chosen (and paced) for this attempt."""
    from fintrade_tui.models import deployments

    pool = kwargs.get(deployments.POOL)
    if pool is None:
        return kwargs
    base = {k: v for k, v in kwargs.items() if k != deployments.POOL}
    dep, kw = await pool.acquire(base, messages)
    if usage is not None:
        usage.deployment = dep
    return kw


def _failed(kwargs: dict[str, Any], usage: Usage | None, exc: BaseException) -> None:
    """A retryable failure cools the deployment that answered it down."""
    from fintrade_tui.models import deployments

    pool = kwargs.get(deployments.POOL)
    if pool is not None and usage is not None and usage.deployment and retryable(exc):
        pool.cool_down(usage.deployment)


def warm(cfg: Config, name: str) -> None:
    """Start loading a local model's weights now, in the background (the Arena calls it as a
    run starts, so the load overlaps RAG's indexing); hosted models need nothing."""
    spec = model_spec(cfg, name)
    if spec.model.startswith("local/"):
        from fintrade_tui.models import local

        call_kwargs(name, spec, cfg.model_dir)  # registers the GGUF (verified before loading)
        local._engine(spec.model)


def prefill(cfg: Config, name: str, messages: list[dict[str, str]]) -> int:
    """Have a local model read `messages` now (blocking until read), so a prompt that starts
    with them later reads only the rest; returns the tokens read. Hosted models: 0."""
    spec = model_spec(cfg, name)
    if not spec.model.startswith("local/"):
        return 0
    from fintrade_tui.models import local
    from fintrade_tui.models.llama_engine import Sampling

    call_kwargs(name, spec, cfg.model_dir)
    engine = local._engine(spec.model)
    for _ in engine.stream(messages, Sampling(max_tokens=1, temperature=0.0)):
        pass
    return len(engine.prompt_tokens(messages))


def public_params(spec: ModelConfig) -> dict[str, Any]:
    """What a run record keeps of its model parameters: everything but secrets."""
    # endpoints and their limits are not model settings: adding a deployment keeps batch keys
    d = spec.model_dump(mode="json", exclude={"api_key_env", "deployments", "cooldown"})
    d["extra"] = {k: v for k, v in d["extra"].items() if "key" not in k.lower()}
    if spec.model.startswith("local/"):
        from fintrade_tui.models.weights import CATALOGUE

        # packaged weights are verified against this hash before they are loaded
        w = None if spec.gguf else CATALOGUE.get(spec.model.split("/", 1)[1])
        d["gguf_sha256"] = w.sha256 if w else None
    return d


def supports_tools(spec: ModelConfig) -> bool:
    if spec.tools != "auto":
        return spec.tools == "native"
    if spec.model.startswith("local/"):
        return False
    try:
        return bool(litellm().supports_function_calling(model=spec.model))
    except Exception:  # unknown to litellm's model map: use the router
        return False


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
    kwargs: dict[str, Any],
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
        shown = redact.Stream(_call_keys(kwargs))  # a key split over deltas is blanked too
        try:
            call = await _routed(kwargs, usage, messages)
            response = await lm.acompletion(
                messages=messages,
                stream=True,
                stream_options={"include_usage": True},
                **call,
                **extra,
            )
            async for chunk in response:
                _take_usage(chunk, usage)
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
            _cost(lm, kwargs["model"], usage)
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _failed(kwargs, usage, exc)
            if got_text or attempt >= retries or not retryable(exc):
                if tail := shown.flush():
                    yield tail  # the partial answer the caller keeps
                raise
            attempt += 1
            usage.retries = attempt
            await asyncio.sleep(backoff * 2 ** (attempt - 1))


async def complete(
    kwargs: dict[str, Any],
    messages: list[dict[str, Any]],
    retries: int = 3,
    backoff: float = 1.0,
    **extra: Any,
) -> Any:
    """One whole (non-streamed) completion with the same retry policy: tool rounds, judges."""
    lm = litellm()
    attempt = 0
    while True:
        usage = Usage()
        try:
            call = await _routed(kwargs, usage, messages)
            return redact.response(await lm.acompletion(messages=messages, **call, **extra))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            _failed(kwargs, usage, exc)
            if attempt >= retries or not retryable(exc):
                raise
            attempt += 1
            await asyncio.sleep(backoff * 2 ** (attempt - 1))


def _take_usage(chunk: Any, usage: Usage) -> None:
    u = getattr(chunk, "usage", None)
    if u and getattr(u, "completion_tokens", None):
        usage.tokens_in = u.prompt_tokens
        usage.tokens_out = u.completion_tokens


def _cost(lm: Any, model: str, usage: Usage) -> None:
    if usage.tokens_in is None or model.startswith("local/"):
        return
    try:
        a, b = lm.cost_per_token(
            model=model,
            prompt_tokens=usage.tokens_in,
            completion_tokens=usage.tokens_out or 0,
        )
        usage.cost = a + b
    except Exception:  # a model litellm has no price for
        usage.cost = None


def _call_keys(kwargs: dict[str, Any] | None) -> tuple[str, ...]:
    """The keys one call's arguments hold (its own, or each deployment's)."""
    from fintrade_tui.models.deployments import POOL

    keys = [(kwargs or {}).get("api_key")]
    pool = (kwargs or {}).get(POOL)
    keys += list(pool.keys.values()) if pool is not None else []
    return tuple(str(k) for k in keys if k)


def error_text(exc: BaseException, kwargs: dict[str, Any] | None = None) -> str:
    """One line for the run record and the pane: the error class and its first line, with
    every key blanked out should a provider echo it back (before cutting: a key across the
    cut would otherwise leave its start)."""
    whole = redact.text(str(exc), _call_keys(kwargs))
    first = (whole.strip().splitlines() or [""])[0][:300]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
