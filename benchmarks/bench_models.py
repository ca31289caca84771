"""Local model speed, side by side in one run, for each packaged model (the 1.5B default and
SmolLM2):

1. tokens/s of one stream: llama.cpp called directly (raw `Llama`), through litellm's custom
   provider, and through the app's streaming layer (`llm.stream_chat`, what every run uses),
   with the ratios to raw (greedy, so every path decodes the same prompt);
2. three Arena panes at once (No-RAG, RAG and Oracle prompts of one question, built by the
   app's TELeR renderer at the model's evidence budget): time to first token of each pane and
   the process's peak RSS, with the app's one shared engine (prefix reuse, batched decoding)
   vs three separate llama.cpp instances (one per pane, as before). Each scenario runs in a
   fresh subprocess, so its RSS is its own.

Printed as one table, a row per model and path (one stream) or engine (three panes).

    .venv/bin/python -m benchmarks.bench_models [--models local,local-tiny] [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks import harness
from fintrade_tui.config import load_config
from fintrade_tui.models import llm
from fintrade_tui.models.resolve import resolve
from fintrade_tui.runs.prompts import build_prompt
from fintrade_tui.workspace.evidence import Evidence, EvidenceItem
from fintrade_tui.workspace.questions import Question

MESSAGES = [
    {"role": "system", "content": "You are a careful financial analyst."},
    {
        "role": "user",
        "content": "Explain step by step how return on equity, the debt-to-equity ratio and "
        "20-day momentum together describe a company's quality and its recent trading.",
    },
]
PARAGRAPH = (
    "Net sales increased during fiscal 2024 compared to 2023, driven by higher revenue from "
    "Services and iPhone, partially offset by lower net sales of iPad and Wearables. Gross "
    "margin percentage was {n}.6% and operating expenses grew {n}% year over year. "
)


def _rates(t0: float, stamps: list[float]) -> dict[str, float]:
    """Tokens/s over the decoding span (first to last token) and time to first token."""
    n = len(stamps)
    span = stamps[-1] - stamps[0] if n > 1 else float("nan")
    return {"tokens": n, "ttft": stamps[0] - t0, "tps": (n - 1) / span}


def _item(k: int, track: str, words: int) -> EvidenceItem:
    text = "".join(PARAGRAPH.format(n=k + i) for i in range(max(1, words // 45)))
    title = f"AAPL 10-K filed 2024-11-01, part {k}"
    return EvidenceItem(f"e{k}", track, text, title, "AAPL", date(2024, 11, 1))


def pane_prompts(evidence_tokens: int) -> list[list[dict]]:
    """No-RAG, RAG and Oracle prompts of one question, as the Arena would send them."""
    q = Question(
        id="F1",
        source="bench",
        category="F",
        text="As of September 2025, is Apple really as profitable as everyone says it is?",
        tickers=["AAPL"],
        as_of=date(2025, 9, 30),
    )
    rag = [_item(k, "filing", evidence_tokens // 3) for k in range(4)]
    oracle = [_item(10 + k, "fundamentals", 40) for k in range(3)]
    out = []
    for cond, items in (("no_rag", []), ("rag", rag), ("oracle", oracle)):
        p = build_prompt(q, Evidence(cond, items), "L5", evidence_tokens)
        out.append(p.messages)
    return out


# --- single stream: raw vs litellm vs app ------------------------------------------------------


def raw_stream(llama: Any, messages: list, max_tokens: int) -> dict[str, float]:
    llama.reset()
    t0 = time.perf_counter()
    stamps = []
    for chunk in llama.create_chat_completion(
        messages=messages, stream=True, max_tokens=max_tokens, temperature=0.0
    ):
        if chunk["choices"][0]["delta"].get("content"):
            stamps.append(time.perf_counter())
    return _rates(t0, stamps)


async def through_litellm(call: llm.Call, max_tokens: int) -> dict[str, float]:
    t0 = time.perf_counter()
    stamps = []
    resp = await llm.litellm().acompletion(
        messages=MESSAGES,
        stream=True,
        **(call.kwargs | {"max_tokens": max_tokens, "temperature": 0.0}),
    )
    async for chunk in resp:
        if chunk.choices and chunk.choices[0].delta.content:
            stamps.append(time.perf_counter())
    return _rates(t0, stamps)


async def through_app(call: llm.Call, messages: list, max_tokens: int) -> dict[str, float]:
    t0 = time.perf_counter()
    stamps = []
    usage = llm.Usage()
    async for _ in llm.stream_chat(
        call.updated(max_tokens=max_tokens, temperature=0.0), messages, usage
    ):
        stamps.append(time.perf_counter())
    return _rates(t0, stamps)


def single(cfg: Any, name: str, reps: int, max_tokens: int) -> dict[str, dict]:
    from llama_cpp import Llama

    spec = cfg.models[name]
    kw = resolve(cfg, name).call()
    from fintrade_tui.models import local

    gguf = local._SPECS[spec.model.split("/", 1)[1]].gguf
    raw = Llama(model_path=str(gguf), n_ctx=spec.context_tokens, verbose=False)
    raw_stream(raw, MESSAGES, 8)  # warm-up: both copies loaded, litellm imported
    asyncio.run(through_app(kw, MESSAGES, 8))
    runs: dict[str, list[dict]] = {"raw": [], "litellm": [], "app": []}
    for _ in range(reps):  # interleaved, so drift on the machine hits every path alike
        runs["raw"].append(raw_stream(raw, MESSAGES, max_tokens))
        runs["litellm"].append(asyncio.run(through_litellm(kw, max_tokens)))
        runs["app"].append(asyncio.run(through_app(kw, MESSAGES, max_tokens)))
    return {
        path: {k: statistics.median(r[k] for r in rs) for k in ("tokens", "tps", "ttft")}
        for path, rs in runs.items()
    }


# --- three panes: one subprocess per scenario -------------------------------------------------


def _rss_sampler(peak: list[int], stop: threading.Event) -> None:
    while not stop.is_set():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                peak[0] = max(peak[0], int(line.split()[1]) * 1024)
        stop.wait(0.05)


def panes(name: str, scenario: str, max_tokens: int) -> dict[str, Any]:
    """Three panes at once in this process: `shared` (the app) or `separate` instances."""
    cfg = load_config()
    spec = cfg.models[name]
    kw = resolve(cfg, name).call()
    prompts = pane_prompts(spec.evidence_tokens or cfg.runs.context_tokens)
    peak, stop = [0], threading.Event()
    threading.Thread(target=_rss_sampler, args=(peak, stop), daemon=True).start()
    if scenario == "shared":

        async def all_three() -> list[dict]:
            return await asyncio.gather(*(through_app(kw, p, max_tokens) for p in prompts))

        asyncio.run(through_app(kw, MESSAGES, 2))  # load the engine before the clock starts
        t0 = time.perf_counter()
        res = asyncio.run(all_three())
    else:
        from llama_cpp import Llama

        from fintrade_tui.models import local

        gguf = local._SPECS[spec.model.split("/", 1)[1]].gguf
        copies = [
            Llama(model_path=str(gguf), n_ctx=spec.context_tokens, verbose=False) for _ in prompts
        ]
        res = [{}] * 3
        t0 = time.perf_counter()

        def go(k: int) -> None:
            res[k] = raw_stream(copies[k], prompts[k], max_tokens)

        threads = [threading.Thread(target=go, args=(k,)) for k in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    wall = time.perf_counter() - t0
    stop.set()
    return {
        "ttft": [r["ttft"] for r in res],
        "wall": wall,
        "rss": peak[0],
        "generated": sum(r["tokens"] for r in res),
    }


def main() -> None:
    ap = harness.parser(__doc__, reps=3)
    ap.add_argument("--models", default="local,local-tiny")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--pane-tokens", type=int, default=48)
    ap.add_argument("--scenario", help=argparse.SUPPRESS)  # internal: one subprocess's part
    a = ap.parse_args()
    if a.scenario:
        name, scenario = a.scenario.split(":")
        harness.emit(panes(name, scenario, a.pane_tokens))
        return
    cfg = load_config()
    rows: list[list[object]] = []
    for name in a.models.split(","):
        spec = cfg.models[name]
        harness.log(f"{name} = {spec.model}: one stream, {a.reps} interleaved repetitions")
        s = single(cfg, name, a.reps, a.max_tokens)
        base = s["raw"]["tps"]
        for path, r in s.items():
            tokens, tps, ttft = f"{r['tokens']:.0f}", f"{r['tps']:.1f}", f"{r['ttft'] * 1000:.0f}"
            rows.append([name, path, tokens, tps, f"{r['tps'] / base:.3f}", ttft])
        for scenario in ("shared", "separate"):
            harness.log(f"{name}: three panes, {scenario}")
            args = ["--scenario", f"{name}:{scenario}", "--pane-tokens", str(a.pane_tokens)]
            r = harness.child("bench_models", *args)
            each = " ".join(f"{t:.1f}" for t in r["ttft"])
            rows.append(
                [name, f"3 panes, {scenario}", None, None, None, None, each]
                + [f"{max(r['ttft']):.1f}", f"{r['wall']:.1f}", f"{r['rss'] / 2**30:.2f}"]
            )
    harness.report(
        f"local models: greedy, {a.reps} interleaved repetitions of one stream (median);"
        f" three panes at once (No-RAG, RAG, Oracle; {a.pane_tokens} tokens each)",
        ["model", "path / engine", "tokens", "tok/s", "ratio", "ttft ms"]
        + ["pane ttft s (each)", "last s", "wall s", "RSS GB"],
        rows,
        ["ratio = median tokens/s over raw llama.cpp; shared = the app's one engine per GGUF"],
    )


if __name__ == "__main__":
    main()
