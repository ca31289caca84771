"""Arena responsiveness with mocked fast streams, side by side with Textual's own floor.

Three panes are each fed a chunk every 10 ms (3 x 100 chunks/s); every chunk carries a marker
whose send time is kept, and every frame is rendered to terminal text (what a terminal would
receive) and searched for markers. Two subjects, each in a fresh process, interleaved `--reps`
times:

- app: the Arena (`fintrade-tui`), the chunks coming from a litellm custom provider through the
  runner, as a real model's would;
- textual: the minimum Textual needs for the same screen - three scrolling Markdown panes fed
  by `MarkdownStream` and anchored to the end (Textual's documented streaming pattern), a header
  and a footer; no litellm, no runner, no status lines.

Printed per subject (median of the reps, and the range): launch -> first frame; the largest gap
between frames while streaming, its p99 and how many gaps exceeded 50 ms; chunk -> screen
p50 / p95 / max; how long the streams took against their nominal length (a busy event loop slows
its own sources). Then app / textual. Goals: frame gap and chunk -> screen p95 under 50 ms.

    .venv/bin/python -m benchmarks.bench_tui [--chunks 100] [--reps 3] [--size 150x45]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from fintrade_tui.config import Config, ModelConfig, load_config

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
MARK = re.compile(r"\bk(\d+)x(\d{4})\b")
SENT: dict[str, float] = {}
CALLS = [0]
LISTS = [False]  # --lists: the answers are bullet lists


def piece(marker: str, i: int) -> str:
    """Chunk `i`: paragraphs of 20 markers, or with `--lists` bullet items of 5 (lists of 8
    items), as models write them. Textual updates a paragraph in place but re-mounts a whole
    list on every append."""
    if not LISTS[0]:
        return marker + (" " if (i + 1) % 20 else "\n\n")
    lead = "\n\n- " if i % 40 == 0 and i else ("\n- " if i % 5 == 0 else " ")
    return ("- " if i == 0 else lead) + marker


def provider(chunks: int, interval: float) -> Any:
    """bench-fast/<x>: `chunks` chunks, one every `interval` s, each with a timed marker."""
    from litellm import CustomLLM

    from fintrade_tui.models.providers import stream_chunk

    class Fast(CustomLLM):
        async def astreaming(self, model: str, messages: list, **_: Any):
            CALLS[0] += 1
            call = CALLS[0]
            for i in range(chunks):
                await asyncio.sleep(interval)
                marker = f"k{call}x{i:04d}"
                SENT[marker] = time.perf_counter()
                yield stream_chunk(piece(marker, i))
            # usage at the end, as the local model and hosted providers send it (without it
            # litellm tokenizes the whole exchange in its threads at the end of each stream)
            yield stream_chunk("", True, usage={"prompt_tokens": 500, "completion_tokens": chunks})

    return Fast()


def register(chunks: int, interval: float) -> None:
    from fintrade_tui.models import llm, providers

    llm.litellm()
    providers.register_provider("bench-fast", provider(chunks, interval))


def setup(folder: Path) -> Config:
    from fintrade_tui.application.readiness import ensure_store
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import save_questions

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


async def measure(
    cfg: Config, chunks: int, interval: float, size: tuple[int, int]
) -> dict[str, Any]:
    """The Arena from before its modules are imported: it opens the bench question, then `r`
    runs No-RAG, Indicator-RAG and Oracle on the fast provider."""
    t_launch = time.perf_counter()
    from fintrade_tui.screens.arena import ArenaScreen

    from fintrade_tui.ui.app import FinTradeApp

    frames: list[float] = []
    seen: dict[str, float] = {}
    first: dict[str, float] = {}

    class BenchApp(FinTradeApp):
        def on_mount(self, event: Any) -> None:
            event.prevent_default()
            self.push_screen(ArenaScreen(question_id="BENCH-1"))

    app = capture(BenchApp, frames, seen, first)(cfg)
    async with app.run_test(size=size) as pilot:
        while "question" not in first:
            await pilot.pause(0.01)
        await app.workers.wait_for_complete()  # the workspace and litellm are ready
        await asyncio.to_thread(register, chunks, interval)
        await pilot.pause(0.2)
        await pilot.press("r")
        await pilot.pause(0.05)
        await app.workers.wait_for_complete()
        await pilot.pause(0.2)
        statuses = [p.status for p in app.screen.panes()]
    return summary(frames, seen, first["frame"] - t_launch) | {"statuses": statuses}


def bare_app(chunks: int, interval: float) -> Any:
    """Textual's documented streaming pattern, three panes wide (the floor the app sits on)."""
    from textual.app import App
    from textual.containers import Horizontal, VerticalScroll
    from textual.widgets import Footer, Header, Markdown

    class Bare(App):
        CSS = "VerticalScroll { width: 1fr; border: round $panel; } Markdown { margin: 0; }"

        def compose(self) -> Any:
            yield Header()
            with Horizontal():
                for i in range(3):
                    with VerticalScroll(id=f"p{i}"):
                        yield Markdown()
            yield Footer()

        async def feed(self, pane: int) -> None:
            scroll = self.query_one(f"#p{pane}", VerticalScroll)
            stream = Markdown.get_stream(scroll.query_one(Markdown))
            for i in range(chunks):
                await asyncio.sleep(interval)
                marker = f"k{pane + 1}x{i:04d}"
                SENT[marker] = time.perf_counter()
                await stream.write(piece(marker, i))
                if not scroll.is_anchored and scroll.max_scroll_y > 0:
                    scroll.anchor()
            await stream.stop()

    return Bare()


def capture(app_class: Any, frames: list[float], seen: dict[str, float], first: dict) -> Any:
    """A subclass of `app_class` that stamps every frame and the markers it shows."""

    class Captured(app_class):
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

    return Captured


async def measure_bare(chunks: int, interval: float, size: tuple[int, int]) -> dict[str, Any]:
    t_launch = time.perf_counter()
    frames: list[float] = []
    seen: dict[str, float] = {}
    first: dict[str, float] = {}
    base = bare_app(chunks, interval)
    app = capture(type(base), frames, seen, first)()
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.3)
        await asyncio.gather(*(app.feed(i) for i in range(3)))
        await pilot.pause(0.2)
    return summary(frames, seen, first["frame"] - t_launch)


def summary(frames: list[float], seen: dict[str, float], launch: float) -> dict[str, Any]:
    """The measures of one run: "while streaming" is from the first chunk sent to the last one
    on screen."""
    s0 = min(SENT.values())
    s1 = max(seen.values(), default=s0)
    streaming = [f for f in frames if s0 <= f <= s1]
    gaps = [b - a for a, b in zip(streaming, streaming[1:], strict=False)]
    delays = [seen[m] - SENT[m] for m in SENT if m in seen]
    return {
        "launch": launch * 1000,
        "gap_max": max(gaps, default=float("nan")) * 1000,
        "gap_p99": harness.pct(gaps, 99) * 1000,
        "gaps_over_50": sum(g > 0.05 for g in gaps),
        "frames": len(streaming),
        "delay_p50": harness.pct(delays, 50) * 1000,
        "delay_p95": harness.pct(delays, 95) * 1000,
        "delay_max": max(delays, default=float("nan")) * 1000,
        "unseen": len(SENT) - len(delays),
        "span": s1 - s0,
        "slow_gaps_at": [  # when frames were over 50 ms apart (s after the first chunk)
            round(a - s0, 2) for a, b in zip(streaming, streaming[1:], strict=False) if b - a > 0.05
        ],
    }


ROWS = [
    ("launch -> first frame (ms)", "launch", None),
    ("largest frame gap while streaming (ms)", "gap_max", 50),
    ("frame gap p99 (ms)", "gap_p99", None),
    ("frame gaps over 50 ms", "gaps_over_50", None),
    ("chunk -> screen p50 (ms)", "delay_p50", None),
    ("chunk -> screen p95 (ms)", "delay_p95", 50),
    ("chunk -> screen max (ms)", "delay_max", None),
    ("streaming took (s)", "span", None),
]


def one(args: argparse.Namespace) -> dict[str, Any]:
    """One measurement in this process (a child of `main`)."""
    size = tuple(int(v) for v in args.size.lower().split("x"))
    if args.one == "textual":
        return asyncio.run(measure_bare(args.chunks, args.interval, size))
    with tempfile.TemporaryDirectory() as tmp:
        cfg = setup(Path(tmp))
        r = asyncio.run(measure(cfg, args.chunks, args.interval, size))
    if r.pop("statuses") != ["completed"] * 3:
        raise SystemExit("bench: a pane did not complete")
    return r


def main() -> None:
    ap = harness.parser(__doc__, reps=3)
    ap.add_argument("--chunks", type=int, default=100, help="chunks per pane")
    ap.add_argument("--interval", type=float, default=0.01, help="seconds between chunks")
    ap.add_argument("--size", default="150x45", help="terminal columns x rows")
    ap.add_argument("--lists", action="store_true", help="answers as bullet lists")
    ap.add_argument("--one", choices=["app", "textual"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    LISTS[0] = args.lists
    if args.one:
        harness.emit(one(args))
        return
    results: dict[str, list[dict[str, Any]]] = {"app": [], "textual": []}
    for rep in range(args.reps):
        for subject in results:
            harness.log(f"rep {rep + 1}/{args.reps}: {subject}")
            cmd = ["--one", subject, "--chunks", str(args.chunks)]
            cmd += ["--interval", str(args.interval), "--size", args.size]
            cmd += ["--lists"] * args.lists
            results[subject].append(harness.child("bench_tui", *cmd))
    rows = []
    for name, key, goal in ROWS:
        cells, medians = [], []
        for subject in results:
            t = harness.spread(r[key] for r in results[subject])
            medians.append(t.median)
            cells.append(f"{t.median:.4g} [{t.lo:.3g}-{t.hi:.3g}]")
        ratio = medians[0] / medians[1] if medians[1] else float("nan")
        mark = "" if goal is None else f"< {goal} {'ok' if medians[0] < goal else 'MISSED'}"
        rows.append([name, *cells, f"{ratio:.2f}", mark])
    nominal = args.chunks * args.interval
    harness.report(
        f"3 panes x {args.chunks} chunks{' in bullet lists' * args.lists}, "
        f"one every {args.interval * 1000:g} ms per pane "
        f"(nominal {nominal:g} s), terminal {args.size}, {args.reps} runs each, median [range]",
        ["measure", "app", "textual", "app/textual", "goal"],
        rows,
    )


if __name__ == "__main__":
    main()
