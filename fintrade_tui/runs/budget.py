"""Batch room: a batch's budget (`run --max-cost USD`, and a registry entry's `max_cost` for
its own runs) — the gate each run passes just before it is sent.

A run is sent only while the cost already recorded in the batch (every invocation under its
label), plus the expected cost of the runs in flight, plus its own expected cost (the plan's,
runs/plan.py), stays within the budget; the first run that would pass it stops the sending
(of the whole batch, or of that model for its own `max_cost`). So the batch ends at or under
the budget, over it only by what the runs in flight cost beyond their estimates. What is
recorded is the provider's reported usage priced (models/llm.py), never the estimate; a run
whose provider reported no usage counts at its estimate here, so the gate stays closed on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fintrade_tui.runs.runner import RunSpec


class _Amounts(dict[str, float]):
    """USD by model: a model not in it reads 0 and is not added (a Counter, but of floats)."""

    def __missing__(self, key: str) -> float:
        return 0.0


@dataclass
class Budget:
    """`total`: USD for the whole batch (None: no cap); `per_model`: a model's own cap;
    `spent`: the batch's recorded cost by model when this invocation starts; `estimate`: a
    run's expected cost."""

    total: float | None
    per_model: dict[str, float]
    spent: dict[str, float]
    estimate: Callable[[RunSpec], float]
    in_flight: _Amounts = field(default_factory=_Amounts)
    spent_now: _Amounts = field(default_factory=_Amounts)  # this invocation's recorded cost
    held: Counter[str] = field(default_factory=Counter)  # runs not sent, by model
    held_cost: _Amounts = field(default_factory=_Amounts)  # their expected cost
    stopped: set[str] = field(default_factory=set)  # models whose own cap was reached
    stopped_all: bool = False

    @property
    def active(self) -> bool:
        return self.total is not None or bool(self.per_model)

    def spent_total(self) -> float:
        return sum(self.spent.values()) + sum(self.spent_now.values())

    def spent_by(self, model: str) -> float:
        return self.spent.get(model, 0.0) + self.spent_now[model]

    def admit(self, spec: RunSpec) -> bool:
        """Whether this run may be sent now; if so its expected cost is counted in flight.
        Called with no await between the check and the count, so runs admitted at once never
        pass the budget together."""
        est = self.estimate(spec)
        m = spec.model
        flying = sum(self.in_flight.values())
        if self.total is not None and self.spent_total() + flying + est > self.total:
            self.stopped_all = True
        cap = self.per_model.get(m)
        if cap is not None and self.spent_by(m) + self.in_flight[m] + est > cap:
            self.stopped.add(m)
        if self.stopped_all or m in self.stopped:
            self.held[m] += 1
            self.held_cost[m] += est
            return False
        self.in_flight[m] += est
        return True

    def settle(self, spec: RunSpec, cost: float | None) -> None:
        """A sent run ended: its estimate leaves the flight, its recorded cost counts (the
        estimate where the provider reported no usage)."""
        est = self.estimate(spec)
        self.in_flight[spec.model] -= est
        self.spent_now[spec.model] += est if cost is None else cost

    @property
    def stopped_any(self) -> bool:
        return bool(sum(self.held.values()))

    def to_dict(self) -> dict[str, Any]:
        spent = self.spent_total()
        return {
            "max_cost": self.total,
            "max_cost_per_model": dict(self.per_model),
            "spent": round(spent, 6),
            "spent_now": round(sum(self.spent_now.values()), 6),
            "left": None if self.total is None else round(self.total - spent, 6),
            "held_by_budget": sum(self.held.values()),
            "held_cost": round(sum(self.held_cost.values()), 6),
            "stopped_models": sorted(self.stopped),
        }

    def line(self, batch: str) -> str:
        """The one line a batch the budget stopped ends with: what was spent, what is left."""
        d = self.to_dict()
        parts = [f"budget: batch {batch!r} spent {usd(d['spent'])}"]
        if self.total is not None:
            parts[0] += f" of {usd(self.total)} ({usd(max(d['left'], 0.0))} left)"
        parts[0] += f", {usd(d['spent_now'])} of it now"
        for m in sorted(self.stopped):
            parts.append(f"{m} reached its max_cost {usd(self.per_model[m])}")
        held = d["held_by_budget"]
        parts.append(f"{held} runs not sent (about {usd(d['held_cost'])} more)")
        fix = (
            "run the same command with a larger --max-cost"
            if self.stopped_all
            else "raise max_cost of the model in config.yaml"
        )
        return "; ".join(parts) + f" (fix: {fix}; completed runs are not sent again)"


def usd(v: float) -> str:
    """$0.0123; more digits under a cent, so a small budget never reads $0.0000."""
    return f"${v:,.6f}" if 0 < abs(v) < 0.01 else f"${v:,.4f}"
