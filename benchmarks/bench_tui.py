"""Arena responsiveness with mocked fast streams, measured in one run: three panes each fed by a
litellm custom provider that yields a chunk every 10 ms (3 x 100 chunks/s). Every chunk carries
a marker whose send time is kept; every frame the app composites is rendered to terminal text
(what a real terminal would receive) and searched for markers. Prints:

- launch -> first frame, and -> the Arena showing its question (in-process, headless: from
  before the app's modules are imported; the config, the store check and the bench question
  are prepared first and not counted);
- the largest gap between frames while streaming, and the largest stall of a 10 ms heartbeat
  timer (how long the event loop was ever busy);
- chunk -> screen delay p50 / p95 / max (marker sent -> first frame that shows it).

Goals: frame gap and chunk -> screen p95 under 50 ms.

    .venv/bin/python benchmarks/bench_tui.py [--chunks 300] [--interval 0.01]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from fintrade_tui.config import Config, ModelConfig, load_config

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
MARK = re.compile(r"\bk(\d+)x(\d{4})\b")
SENT: dict[str, float] = {}
RUN_AT = [0.0]  # when the run key was pressed
CALLS = [0]


def provider(chunks: int, interval: float) -> Any:
    """bench-fast/<x>: `chunks` chunks, one every `interval` s, each with a timed marker."""
    from litellm import CustomLLM

    def part(text: str, done: bool = False) -> dict:
        return {
            "text": text,
            "tool_use": None,
            "is_finished": done,
            "finish_reason": "stop" if done else "",
            "usage": None,
            "index": 0,
        }

    class Fast(CustomLLM):
        async def astreaming(self, model: str, messages: list, **_: Any):
            CALLS[0] += 1
            call = CALLS[0]
            for i in range(chunks):
                await asyncio.sleep(interval)
                marker = f"k{call}x{i:04d}"
                SENT[marker] = time.perf_counter()
                yield part(marker + (" " if (i + 1) % 20 else "\n\n"))
            yield part("", done=True)

    return Fast()


def register(chunks: int, interval: float) -> None:
    from fintrade_tui.runs import llm

    lm = llm.litellm()
    lm.custom_provider_map = [
        *[p for p in lm.custom_provider_map if p["provider"] != "bench-fast"],
        {"provider": "bench-fast", "custom_handler": provider(chunks, interval)},
    ]


def setup(folder: Path) -> Config:
    from fintrade_tui.runs.readiness import ensure_store
    from fintrade_tui.store.workspace import open_workspace, save_questions

    base = load_config()
    ensure_store(base, print)
    models = {"fast": ModelConfig(model="bench-fast/x", timeout=600)}
    cfg = base.model_copy(update={"workspace": folder / "ws.duckdb", "models": models})
    cfg.runs = cfg.runs.model_copy(
        update={"default_model": "fast", "conditions": ["no_rag", "indicator_rag", "oracle"]}
    )
    from fintrade_tui.questions.samples import aapl_fy2024

    q = aapl_fy2024(cfg.store, "BENCH-1")
    with open_workspace(cfg.workspace) as ws:
        save_questions(ws, [q])
    return cfg


def largest_gap(stamps: list[float], t0: float) -> tuple[float, float]:
    """(largest gap between consecutive stamps, when it started after t0)."""
    gaps = [(b - a, a - t0) for a, b in zip(stamps, stamps[1:], strict=False)]
    return max(gaps, default=(float("nan"), 0.0))


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


async def measure(
    cfg: Config, chunks: int, interval: float, size: tuple[int, int]
) -> dict[str, Any]:
    t_launch = time.perf_counter()
    from fintrade_tui.screens.arena import ArenaScreen

    from fintrade_tui.ui.app import FinTradeApp

    frames: list[float] = []
    seen: dict[str, float] = {}
    beats: list[float] = []
    first: dict[str, float] = {}

    class BenchApp(FinTradeApp):
        def on_mount(self, event: Any) -> None:
            event.prevent_default()
            self.push_screen(ArenaScreen(question_id="BENCH-1"))
            self.set_interval(0.01, lambda: beats.append(time.perf_counter()))

        def _display(self, screen: Any, renderable: Any) -> None:
            super()._display(screen, renderable)
            if renderable is None:
                return
            now = time.perf_counter()
            frames.append(now)
            text = ANSI.sub("", renderable.render_segments(self.console))
            first.setdefault("frame", now)
            if "BENCH-1" in text:
                first.setdefault("question", now)
            for m in MARK.finditer(text):
                seen.setdefault(m.group(0), now)

    app = BenchApp(cfg)
    async with app.run_test(size=size) as pilot:
        while "question" not in first:
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()  # the workspace and litellm are ready
        await asyncio.to_thread(register, chunks, interval)
        await pilot.pause(0.2)
        t0 = RUN_AT[0] = time.perf_counter()
        cpu0 = time.thread_time()
        await pilot.press("r")
        await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        t1 = time.perf_counter()
        cpu = time.thread_time() - cpu0
        statuses = [p.status for p in app.screen.panes()]
    # "while streaming": from the first chunk sent to the last chunk on screen; the whole run
    # (evidence preparation before, the end of the streams after) is reported too
    s0 = min(SENT.values(), default=t0)
    s1 = max(seen.values(), default=t1)
    streaming = [f for f in frames if s0 <= f <= s1]
    beats_in = [b for b in beats if s0 <= b <= s1]
    delays = [seen[m] - SENT[m] for m in SENT if m in seen]
    return {
        "launch_first_frame": first["frame"] - t_launch,
        "launch_question": first["question"] - t_launch,
        "frame_gap": largest_gap(streaming, t0),
        "frames": len(streaming),
        "beat_gap": largest_gap(beats_in, t0),
        "run_frame_gap": largest_gap([f for f in frames if t0 <= f <= t1], t0),
        "run_beat_gap": largest_gap([b for b in beats if t0 <= b <= t1], t0),
        "stream_span": s1 - s0,
        "delays": delays,
        "missing": len(SENT) - len(delays),
        "chunks": len(SENT),
        "span": t1 - t0,
        "loop_cpu": cpu,
        "first_chunk": min(SENT.values(), default=t0) - t0,
        "statuses": statuses,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=300, help="chunks per pane")
    ap.add_argument("--interval", type=float, default=0.01, help="seconds between chunks")
    ap.add_argument("--size", default="150x45", help="terminal columns x rows")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = setup(Path(tmp))
        cols, rows = (int(v) for v in args.size.lower().split("x"))
        r = asyncio.run(measure(cfg, args.chunks, args.interval, (cols, rows)))
    ms = 1000
    d = r["delays"]
    rows = [
        ("launch -> first frame", r["launch_first_frame"] * ms, None),
        ("launch -> Arena shows the question", r["launch_question"] * ms, None),
        ("largest gap between frames while streaming", r["frame_gap"][0] * ms, 50),
        ("largest gap of the 10 ms heartbeat, streaming", r["beat_gap"][0] * ms, 50),
        ("largest frame gap, whole run (evidence, ends)", r["run_frame_gap"][0] * ms, None),
        ("largest heartbeat gap, whole run", r["run_beat_gap"][0] * ms, None),
        ("chunk -> screen p50", pct(d, 50) * ms, None),
        ("chunk -> screen p95", pct(d, 95) * ms, 50),
        ("chunk -> screen max", max(d, default=float("nan")) * ms, None),
    ]
    print(
        f"3 panes x {args.chunks} chunks, one every {args.interval * ms:g} ms per pane, "
        f"terminal {args.size}"
    )
    print(f"{'metric':<48} {'ms':>9}  goal")
    for name, value, goal in rows:
        mark = "" if goal is None else f"< {goal}  {'ok' if value < goal else 'MISSED'}"
        print(f"{name:<48} {value:>9.1f}  {mark}")
    print(
        f"after the run key: first chunk at +{r['first_chunk']:.2f} s, streaming for "
        f"{r['stream_span']:.2f} s; whole-run gaps at +{r['run_frame_gap'][1]:.2f} s (frames), "
        f"+{r['run_beat_gap'][1]:.2f} s (heartbeat)"
    )
    print(
        f"event loop thread busy {r['loop_cpu']:.2f} s of {r['span']:.2f} s; "
        f"frames while streaming: {r['frames']} in {r['span']:.2f} s; chunks seen on screen: "
        f"{r['chunks'] - r['missing']}/{r['chunks']}; panes: {', '.join(r['statuses'])}"
    )


if __name__ == "__main__":
    main()
