"""Local model throughput, measured side by side in one run: llama.cpp called directly (raw),
through litellm's custom provider, and through the app's streaming layer (`llm.stream_chat`,
what every run uses), then three app streams at once. Prints tokens/s, time to first token and
the ratios to raw. Greedy decoding, so every path generates the same tokens.

    .venv/bin/python benchmarks/bench_models.py [--reps 5] [--max-tokens 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from fintrade_tui.config import load_config
from fintrade_tui.runs import llm, local

MESSAGES = [
    {"role": "system", "content": "You are a careful financial analyst."},
    {
        "role": "user",
        "content": "Explain step by step how return on equity, the debt-to-equity ratio and "
        "20-day momentum together describe a company's quality and its recent trading.",
    },
]


def _rates(t0: float, stamps: list[float]) -> dict[str, float]:
    """Tokens/s over the decoding span (first to last token) and time to first token."""
    n = len(stamps)
    span = stamps[-1] - stamps[0] if n > 1 else float("nan")
    return {"tokens": n, "ttft": stamps[0] - t0, "tps": (n - 1) / span}


def raw(gguf: Any, n_ctx: int, max_tokens: int) -> dict[str, float]:
    from llama_cpp import Llama

    global _RAW
    if _RAW is None:
        _RAW = Llama(model_path=str(gguf), n_ctx=n_ctx, verbose=False)
    _RAW.reset()
    t0 = time.perf_counter()
    stamps = []
    for chunk in _RAW.create_chat_completion(
        messages=MESSAGES, stream=True, max_tokens=max_tokens, temperature=0.0
    ):
        if chunk["choices"][0]["delta"].get("content"):
            stamps.append(time.perf_counter())
    return _rates(t0, stamps)


_RAW: Any = None


async def through_litellm(kw: dict, max_tokens: int) -> dict[str, float]:
    lm = llm.litellm()
    t0 = time.perf_counter()
    stamps = []
    resp = await lm.acompletion(
        messages=MESSAGES, stream=True, **(kw | {"max_tokens": max_tokens, "temperature": 0.0})
    )
    async for chunk in resp:
        if chunk.choices and chunk.choices[0].delta.content:
            stamps.append(time.perf_counter())
    return _rates(t0, stamps)


async def through_app(kw: dict, max_tokens: int) -> dict[str, float]:
    t0 = time.perf_counter()
    stamps = []
    usage = llm.Usage()
    async for _ in llm.stream_chat(
        kw | {"max_tokens": max_tokens, "temperature": 0.0}, MESSAGES, usage
    ):
        stamps.append(time.perf_counter())
    return _rates(t0, stamps)


async def three_at_once(kw: dict, max_tokens: int) -> dict[str, float]:
    t0 = time.perf_counter()
    runs = await asyncio.gather(*(through_app(kw, max_tokens) for _ in range(3)))
    wall = time.perf_counter() - t0
    return {
        "tokens": sum(r["tokens"] for r in runs),
        "ttft": max(r["ttft"] for r in runs),
        "tps": statistics.median(r["tps"] for r in runs),  # per stream
        "aggregate_tps": sum(r["tokens"] for r in runs) / wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=200)
    a = ap.parse_args()
    cfg = load_config()
    spec = cfg.models["local"]
    kw = llm.call_kwargs("local", spec)
    gguf = spec.gguf or local.default_gguf()
    print(f"model {gguf.name}, {a.reps} interleaved repetitions, greedy, max {a.max_tokens} tokens")
    # warm-up: load both llama.cpp copies (raw and the provider's) and import litellm
    raw(gguf, spec.context_tokens, 8)
    asyncio.run(through_app(kw, 8))
    results: dict[str, list[dict]] = {"raw": [], "litellm": [], "app": [], "app x3": []}
    for _ in range(a.reps):
        results["raw"].append(raw(gguf, spec.context_tokens, a.max_tokens))
        results["litellm"].append(asyncio.run(through_litellm(kw, a.max_tokens)))
        results["app"].append(asyncio.run(through_app(kw, a.max_tokens)))
        results["app x3"].append(asyncio.run(three_at_once(kw, a.max_tokens)))
    base = statistics.median(r["tps"] for r in results["raw"])
    print(f"{'path':<10}{'tokens':>8}{'tok/s':>9}{'ratio':>8}{'ttft ms':>10}{'aggregate':>11}")
    for name, rs in results.items():
        tps = statistics.median(r["tps"] for r in rs)
        ttft = statistics.median(r["ttft"] for r in rs) * 1000
        agg = statistics.median(r.get("aggregate_tps", r["tps"]) for r in rs)
        tokens = statistics.median(r["tokens"] for r in rs)
        print(f"{name:<10}{tokens:>8.0f}{tps:>9.1f}{tps / base:>8.3f}{ttft:>10.1f}{agg:>11.1f}")
    print("ratio = median tokens/s over raw llama.cpp; app x3: per-stream median, aggregate total")


if __name__ == "__main__":
    main()
