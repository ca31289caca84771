"""Local inference room, sampling: how one stream of the llama.cpp engine picks its tokens.

`Sampling` is a stream's OpenAI-style parameters; `sampler_chain` turns them into llama.cpp's
sampler chain and `token_logprobs` reads OpenAI's logprobs entry for a sampled token. Both run
on the engine's scheduler thread (`llama_engine.py`), which hands them the llama_cpp module and
its handles: nothing here imports llama.cpp, so callers build a `Sampling` without loading it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Sampling:
    """How one stream picks its tokens (OpenAI-style parameters, llama.cpp's defaults)."""

    max_tokens: int = 512
    temperature: float = 0.8
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    grammar: str | None = None  # GBNF text with a `root` rule
    logprobs: int | None = None  # None: off; k: each token's logprob and its k likeliest rivals


def sampler_chain(lib: Any, vocab: Any, s: Sampling) -> Any:
    """llama.cpp's sampler chain for `s` (the caller frees it with `llama_sampler_free`).

    `lib` is the llama_cpp module, `vocab` the model's vocabulary."""
    chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())

    def add(smpl: Any) -> None:
        lib.llama_sampler_chain_add(chain, smpl)

    if s.grammar:
        add(lib.llama_sampler_init_grammar(vocab, s.grammar.encode(), b"root"))
    if (s.repeat_penalty, s.frequency_penalty, s.presence_penalty) != (1.0, 0.0, 0.0):
        n_vocab = lib.llama_vocab_n_tokens(vocab)
        add(
            lib.llama_sampler_init_penalties(
                n_vocab, 64, s.repeat_penalty, s.frequency_penalty, s.presence_penalty
            )
        )
    if s.temperature <= 0:
        add(lib.llama_sampler_init_greedy())
        return chain
    add(lib.llama_sampler_init_top_k(s.top_k))
    add(lib.llama_sampler_init_top_p(s.top_p, 1))
    add(lib.llama_sampler_init_min_p(s.min_p, 1))
    add(lib.llama_sampler_init_temp(s.temperature))
    add(lib.llama_sampler_init_dist(lib.LLAMA_DEFAULT_SEED if s.seed is None else s.seed))
    return chain


def token_logprobs(
    lib: Any,
    vocab: Any,
    ctx: Any,
    row: int,
    token: int,
    k: int,
    piece: Callable[[int], bytes],
) -> dict[str, Any]:
    """OpenAI's entry for one token, from the model's raw distribution at that step (before
    grammar and penalties: a caller renormalizes over the tokens it could have taken).

    `ctx` is the raw llama_context, `row` the batch row whose logits sampled `token`, `k` how
    many likeliest rivals to list, `piece` a token's bytes."""
    import numpy as np

    n = lib.llama_vocab_n_tokens(vocab)
    logits = np.ctypeslib.as_array(lib.llama_get_logits_ith(ctx, row), (n,))
    peak = float(logits.max())
    norm = peak + float(np.log(np.exp(logits - peak).sum()))
    top = np.argpartition(logits, -k)[-k:] if k else np.array([], dtype=int)
    top = top[np.argsort(-logits[top])]

    def entry(t: int) -> dict[str, Any]:
        return {"token": piece(t).decode("utf-8", "replace"), "logprob": float(logits[t]) - norm}

    return entry(token) | {"top_logprobs": [entry(int(t)) for t in top]}
