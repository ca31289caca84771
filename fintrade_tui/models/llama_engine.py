"""Local inference room: one llama.cpp instance of a GGUF serves every stream at once.

A scheduler thread owns the model and one context with a slot (a llama.cpp sequence) per
concurrent stream. Each step decodes one batch holding the next token of every answer being
generated plus a chunk of at most one prompt being read, so three Arena panes cost one copy of
the weights and their tokens share every matrix pass. A new prompt starts from the longest
prefix any slot already holds (the system prompt, question and instructions the conditions
share): those cells are copied, not recomputed, which is what llama.cpp's KV cache allows.

llama.cpp is imported when the first engine loads. Only the scheduler thread touches it. How a
stream picks its tokens (`Sampling`, the sampler chain, logprobs) is in `llama_sampling.py`.
"""

from __future__ import annotations

import codecs
import ctypes
import logging
import os
import queue
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from fintrade_tui.models.llama_sampling import Sampling, sampler_chain, token_logprobs

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage

PARALLEL = 3  # streams decoded together; more wait for a free slot
BATCH = 512  # prompt tokens read per step (with every generating stream's next token)
_END = object()


@dataclass
class _Request:
    tokens: list[int]
    sampling: Sampling
    out: queue.Queue = field(default_factory=queue.Queue)
    cancel: threading.Event = field(default_factory=threading.Event)
    slot: int = -1
    n_past: int = 0  # tokens of this slot's sequence already in the KV cache
    reused: int = 0  # prompt tokens taken from the cache instead of read
    pending: int | None = None  # sampled, emitted, not yet decoded
    generated: int = 0
    sampler: Any = None
    text: str = ""  # generated text not yet handed out (held back while it may start a stop)
    logprobs: list[dict] = field(default_factory=list)  # one entry per generated token
    decoder: Any = field(default_factory=lambda: codecs.getincrementaldecoder("utf-8")("replace"))


class Engine:
    """One GGUF loaded once; `stream()` is safe to call from any number of threads."""

    def __init__(
        self, gguf: Path, context_tokens: int, parallel: int = PARALLEL, threads: int = 1
    ) -> None:
        self.gguf, self.context_tokens, self.parallel = gguf, context_tokens, parallel
        self.threads = threads
        self._waiting: deque[_Request] = deque()
        self._cond = threading.Condition()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="llama-engine", daemon=True)
        self._thread.start()

    # --- the callers' side ------------------------------------------------------------------

    def stream(
        self, messages: list[dict], sampling: Sampling, cancel: threading.Event | None = None
    ) -> Iterator[dict[str, Any]]:
        """`{"text": ...}` pieces, then `{"usage": ..., "finish": ..., "cached_tokens": n}`
        (with `"logprobs"`, OpenAI's per-token list, when the sampling asks for them).
        Closing the iterator or setting `cancel` stops the generation at the next step."""
        self._ready.wait()
        if self._error is not None:
            raise self._error
        tokens = self.prompt_tokens(messages)
        if len(tokens) + 1 > self.context_tokens:
            raise ValueError(
                f"the prompt is {len(tokens)} tokens, more than the model's context of "
                f"{self.context_tokens}; lower evidence_tokens or raise context_tokens"
            )
        req = _Request(tokens, sampling)
        if cancel is not None:
            req.cancel = cancel
        with self._cond:
            self._waiting.append(req)
            self._cond.notify()
        try:
            while True:
                part = req.out.get()
                if part is _END:
                    return
                if isinstance(part, BaseException):
                    raise part
                yield part
        finally:
            req.cancel.set()
            with self._cond:
                self._cond.notify()

    def prompt_tokens(self, messages: list[dict]) -> list[int]:
        """The chat template of the GGUF applied and tokenized, as llama-cpp-python does."""
        # OpenAI-style message dicts: llama-cpp-python types them as TypedDicts
        rendered = self._format(messages=cast("list[ChatCompletionRequestMessage]", messages))
        with self._tok_lock:
            return self._model.tokenize(
                rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True
            )

    # --- the scheduler thread ---------------------------------------------------------------

    def _load(self) -> None:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        internals, binding_log = llama_cpp_internals()
        # llama.cpp's log lines would garble the terminal UI (its binding maps warnings to
        # ERROR, so only CRITICAL keeps them out); failures surface as exceptions instead
        binding_log.setLevel(logging.CRITICAL)
        llama_cpp.llama_backend_init()
        self._lib = llama_cpp
        self._model = internals.LlamaModel(
            path_model=str(self.gguf), params=llama_cpp.llama_model_default_params(), verbose=False
        )
        p = llama_cpp.llama_context_default_params()
        # one KV pool for all slots: a shared prefix is stored once, and a slot may use it all
        p.n_ctx = self.context_tokens * self.parallel
        p.n_batch = p.n_ubatch = BATCH + self.parallel
        p.n_seq_max = self.parallel
        p.kv_unified = True
        self._cores = os.cpu_count() or 1
        p.n_threads = p.n_threads_batch = self._threads_now = self._cores
        p.no_perf = True
        self._ctx = internals.LlamaContext(model=self._model, params=p, verbose=False)
        self._mem = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._batch = internals.LlamaBatch(n_tokens=BATCH + self.parallel, embd=0, n_seq_max=1)
        self._tok_lock = threading.Lock()
        self._buf = ctypes.create_string_buffer(256)
        model = self._model
        eos, bos = model.token_eos(), model.token_bos()
        self._format = Jinja2ChatFormatter(
            template=model.metadata()["tokenizer.chat_template"],
            eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "",
        )
        self._slots: list[list[int]] = [[] for _ in range(self.parallel)]  # tokens in each seq
        self._busy: list[_Request | None] = [None] * self.parallel
        self._used = [0] * self.parallel  # when each slot last took a prompt
        self._clock = 0
        self._reading: _Request | None = None  # the one prompt being read

    def _run(self) -> None:
        try:
            self._load()
        except BaseException as exc:  # handed to every caller
            self._error = exc
        self._ready.set()
        if self._error is not None:
            return
        while True:
            with self._cond:
                while not self._work():
                    self._cond.wait()
            try:
                self._step()
            except BaseException as exc:  # a failed decode ends the streams it carried
                for req in [r for r in self._busy if r is not None]:
                    self._finish(req, exc)
                self._lib.llama_memory_clear(self._mem, True)  # its cells are in doubt now
                self._slots = [[] for _ in range(self.parallel)]

    def _work(self) -> bool:
        self._drop_cancelled()
        free = any(r is None for r in self._busy)
        return any(r is not None for r in self._busy) or bool(self._waiting and free)

    def _drop_cancelled(self) -> None:
        for r in [r for r in self._waiting if r.cancel.is_set()]:
            self._waiting.remove(r)
            r.out.put(_END)
        for held in self._busy:
            if held is not None and held.cancel.is_set():
                self._end(held, "cancelled")

    def _admit(self) -> None:
        """Start reading the waiting prompt with the fewest tokens left to read once the longest
        prefix a slot holds is reused: panes asked together see their first tokens soonest."""
        with self._cond:
            if self._reading is not None or not self._waiting or None not in self._busy:
                return
            req = min(self._waiting, key=self._to_read)
            self._waiting.remove(req)
        try:
            self._start(req)
        except BaseException as exc:  # a bad request (a grammar llama.cpp rejects) fails alone
            self._finish(req, exc)

    def _to_read(self, req: _Request) -> int:
        return len(req.tokens) - max(_common(s, req.tokens) for s in self._slots)

    def _start(self, req: _Request) -> None:
        # built first, so a failure leaves the cache alone
        req.sampler = sampler_chain(self._lib, self._model.vocab, req.sampling)
        toks = req.tokens
        shared = [_common(s, toks) for s in self._slots]
        src = max(range(self.parallel), key=lambda i: shared[i])
        free = [i for i, r in enumerate(self._busy) if r is None]
        # the least recently used free slot, so other cached prompts stay for their next use
        dest = min(free, key=lambda i: (i == src and len(free) > 1, self._used[i]))
        self._clock += 1
        self._used[dest] = self._clock
        lib = self._lib
        if shared[dest] >= shared[src]:  # the slot's own cells are the best start: trim its tail
            n = min(shared[dest], len(toks) - 1)  # read at least one token: its logits start us
            lib.llama_memory_seq_rm(self._mem, dest, n, -1)
        else:  # another slot holds a longer prefix: its cells are tagged for this one too
            n = min(shared[src], len(toks) - 1)
            lib.llama_memory_seq_rm(self._mem, dest, -1, -1)
            lib.llama_memory_seq_cp(self._mem, src, dest, 0, n)
        self._slots[dest] = toks[:n]
        req.slot, req.n_past, req.reused = dest, n, n
        self._busy[dest] = req
        self._reading = req

    def _step(self) -> None:
        self._admit()
        lib, b = self._lib, self._batch.batch
        b.n_tokens = 0
        # each generating stream with the token it sampled last (read before the decode)
        decoding = [(r, r.pending) for r in self._busy if r is not None and r.pending is not None]
        rows: list[tuple[_Request, int]] = []
        for r, token in decoding:
            rows.append((r, _add(b, token, r.n_past, r.slot, True)))
        reading, chunk = self._reading, []
        if reading is not None:
            start = reading.n_past
            chunk = reading.tokens[start : start + BATCH]
            last = start + len(chunk) == len(reading.tokens)
            for j, t in enumerate(chunk):
                i = _add(b, t, start + j, reading.slot, last and j == len(chunk) - 1)
            if last:
                rows.append((reading, i))
        if b.n_tokens == 0:
            return
        # streams' next tokens alone: one thread (ggml's per-op barriers stall when a second
        # thread waits for a core the UI or another process holds); prompt chunks: every core
        threads = self.threads if reading is None else self._cores
        if threads != self._threads_now:
            lib.llama_set_n_threads(self._ctx.ctx, threads, threads)
            self._threads_now = threads
        if lib.llama_decode(self._ctx.ctx, b) != 0:
            # the KV pool is full: drop the prompts idle slots keep for reuse, then try again
            for i, held in enumerate(self._busy):
                if held is None:
                    lib.llama_memory_seq_rm(self._mem, i, -1, -1)
                    self._slots[i] = []
            if lib.llama_decode(self._ctx.ctx, b) != 0:
                raise RuntimeError("llama.cpp could not fit the batch in its context")
        for r, token in decoding:
            self._slots[r.slot].append(token)
            r.n_past += 1
        if reading is not None:
            self._slots[reading.slot].extend(chunk)
            reading.n_past += len(chunk)
            if reading.n_past == len(reading.tokens):
                self._reading = None
        for r, i in rows:
            self._next(r, lib.llama_sampler_sample(r.sampler, self._ctx.ctx, i), i)

    def _next(self, r: _Request, token: int, row: int) -> None:
        """Hand out a sampled token's text, or end the stream."""
        if self._lib.llama_vocab_is_eog(self._model.vocab, token):
            return self._end(r, "stop")
        r.generated += 1
        if r.sampling.logprobs is not None:
            lib, vocab, ctx = self._lib, self._model.vocab, self._ctx.ctx
            rivals = r.sampling.logprobs
            r.logprobs.append(token_logprobs(lib, vocab, ctx, row, token, rivals, self._piece))
        r.text += r.decoder.decode(self._piece(token))
        stop = r.sampling.stop
        cut = min((r.text.find(s) for s in stop if s in r.text), default=-1)
        if cut >= 0:
            r.text = r.text[:cut]
            return self._end(r, "stop")
        # text that could begin a stop string waits for the next piece
        hold = max((k for s in stop for k in range(1, len(s)) if r.text.endswith(s[:k])), default=0)
        if len(r.text) > hold:
            r.out.put({"text": r.text[: len(r.text) - hold]})
            r.text = r.text[len(r.text) - hold :]
        if r.generated >= r.sampling.max_tokens or r.n_past + 1 >= self.context_tokens:
            return self._end(r, "length")
        r.pending = token

    def _piece(self, token: int) -> bytes:
        n = self._lib.llama_token_to_piece(self._model.vocab, token, self._buf, 256, 0, False)
        return self._buf.raw[:n] if n >= 0 else b""

    def _end(self, r: _Request, finish: str) -> None:
        if r.text and finish != "cancelled":
            r.out.put({"text": r.text})
        usage = {"prompt_tokens": len(r.tokens), "completion_tokens": r.generated}
        last = {"usage": usage, "finish": finish, "cached_tokens": r.reused}
        if r.sampling.logprobs is not None:
            last["logprobs"] = r.logprobs
        r.out.put(last)
        self._finish(r, None)

    def _finish(self, r: _Request, error: BaseException | None) -> None:
        if error is not None:
            r.out.put(error)
        r.out.put(_END)
        if r.sampler is not None:
            self._lib.llama_sampler_free(r.sampler)
            r.sampler = None
        if self._reading is r:
            # a prompt cut off while being read leaves a partial cache: it is still a prefix
            self._reading = None
        if r.slot >= 0 and self._busy[r.slot] is r:
            self._busy[r.slot] = None


def llama_cpp_internals() -> tuple[Any, logging.Logger]:
    """llama-cpp-python's private parts the engine needs: its `_internals` module and the logger
    its C log callback checks (from its private `_logger`).

    `_internals` holds LlamaModel, LlamaContext and LlamaBatch, the owning wrappers over the C
    API (load, free, tokenize, read metadata) that its public `Llama` is built on. `Llama` gives
    its context several sequences and a unified KV pool only for embeddings, and keeps the
    context private; the public C API alone would mean rewriting those wrappers here. So they
    are reached in this one place, read against the release pyproject.toml and
    requirements-llama.lock pin (tests/unit/test_llama_engine.py loads a model through them)."""
    import llama_cpp

    return llama_cpp._internals, llama_cpp._logger.logger


def _common(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _add(b: Any, token: int, pos: int, seq: int, logits: bool) -> int:
    i = b.n_tokens
    b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = token, pos, 1, logits
    b.seq_id[i][0] = seq
    b.n_tokens = i + 1
    return i


_ENGINES: dict[tuple[Path, int], Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine(gguf: Path, context_tokens: int, threads: int = 1) -> Engine:
    """The one engine of a GGUF (loaded in the background on first use)."""
    with _ENGINES_LOCK:
        key = (gguf, context_tokens)
        if key not in _ENGINES:
            _ENGINES[key] = Engine(gguf, context_tokens, threads=threads)
        return _ENGINES[key]
