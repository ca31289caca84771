"""Batch room: a headless benchmark run over questions × models × conditions — concurrent with
a per-model limit, resumable (a run whose batch key already completed is skipped; attempts a
killed process left behind are marked interrupted and redone), with a closing summary."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fintrade_tui.runs.runner import RunEvent, Runner, RunSpec, drain

if TYPE_CHECKING:
    from fintrade_tui.runs.budget import Budget


@dataclass
class BatchSummary:
    batch: str
    planned: int = 0
    skipped: int = 0  # completed by an earlier invocation
    interrupted: int = 0  # attempts of killed processes found at start
    status: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0  # recorded (the providers' reported usage priced) by this invocation
    budget: Budget | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "planned": self.planned,
            "skipped_completed": self.skipped,
            "interrupted_found": self.interrupted,
            "ran": sum(self.status.values()),
            **{f"status_{k}": v for k, v in sorted(self.status.items())},
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost": round(self.cost, 6),
            "seconds": round(self.seconds, 1),
            **(self.budget.to_dict() if self.budget is not None else {}),
        }


def plan(runner: Runner, specs: list[RunSpec]) -> tuple[list[RunSpec], int]:
    """The specs still to run (not completed under their batch key) and how many are done."""
    todo, done = plan_keyed(runner, specs)
    return [s for _, s in todo], done


def plan_keyed(runner: Runner, specs: list[RunSpec]) -> tuple[list[tuple[str, RunSpec]], int]:
    """`plan` with each pending spec's run key (the Ray engine ships both to its workers)."""
    keyed = {}
    for s in specs:
        params = runner.model(s.model).params
        keyed[s.key(params)] = s
    done = runner.runs.completed_keys(list(keyed))
    return [(k, s) for k, s in keyed.items() if k not in done], len(done)


async def run_batch(
    runner: Runner,
    specs: list[RunSpec],
    concurrency: int,
    per_model: int,
    on_event: Callable[[RunEvent], None] | None = None,
    on_done: Callable[[RunSpec, dict], None] | None = None,
    budget: Budget | None = None,
    on_held: Callable[[RunSpec], None] | None = None,
) -> BatchSummary:
    """Run what is left of `specs`; one failing run never stops the others. With a `budget`,
    each run passes its gate just before it is sent (runs/budget.py); a run it holds back is
    not recorded (`on_held` is told), so the same command sends it later."""
    t0 = time.monotonic()
    summary = BatchSummary(batch=(specs[0].batch or "") if specs else "", planned=len(specs))
    summary.budget = budget if budget is not None and budget.active else None
    summary.interrupted = runner.runs.mark_interrupted()
    todo, summary.skipped = plan(runner, specs)
    everyone = asyncio.Semaphore(concurrency)
    per = {m: asyncio.Semaphore(per_model) for m in {s.model for s in todo}}

    async def one(spec: RunSpec) -> None:
        async with everyone, per[spec.model]:
            if summary.budget is not None and not summary.budget.admit(spec):
                if on_held:
                    on_held(spec)
                return
            end: dict[str, Any] = {}
            try:
                end = await drain(runner.stream(spec), on_event or (lambda ev: None))
            finally:
                if summary.budget is not None:  # a cancelled run counts at its estimate
                    summary.budget.settle(spec, end.get("cost"))
        summary.status[end.get("status", "error")] += 1
        summary.tokens_in += end.get("tokens_in") or 0
        summary.tokens_out += end.get("tokens_out") or 0
        summary.cost += end.get("cost") or 0.0
        if on_done:
            on_done(spec, end)

    await asyncio.gather(*(one(s) for s in todo))
    summary.seconds = time.monotonic() - t0
    return summary
