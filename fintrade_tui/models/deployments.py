"""Deployments room: a registry entry with several endpoints of the same model (other base URLs
or keys) — each call picks the deployment free soonest, paced to its rpm / tpm, leaving out
one that just failed for its cooldown; the run records which deployment answered.

Limits are per batch: a Ray batch of N workers gives each worker 1/N of every limit
(`set_share`), so the total across workers stays under it without shared state. rpm is kept
as a steady pace (one request every 60/rpm s), stricter than a per-minute window: a burst at
the start of a minute cannot exceed it either.

litellm's Router (1.110) was tried for this and not used: under its default simple-shuffle
strategy it sent 12 calls in 0.15 s to two deployments of rpm 5 (it weights by rpm, it does
not wait), and a fallback to another model is exactly what a benchmark must refuse.
"""

from __future__ import annotations

import json
from typing import Any

from fintrade_tui.clock import SYSTEM, Clock
from fintrade_tui.config import DeploymentConfig, ModelConfig

WINDOW = 60.0  # seconds of a tpm window

_share = 1
_pools: dict[tuple, Pool] = {}


def set_share(workers: int) -> None:
    """This process is one of `workers` running a batch: each limit is divided by that."""
    global _share
    _share = max(1, int(workers))
    _pools.clear()


def share() -> int:
    return _share


def pool(name: str, spec: ModelConfig) -> Pool:
    """The one pool of this entry in this process (pacing must be shared by its runs)."""
    key = (name, _share, json.dumps(spec.model_dump(), default=repr, sort_keys=True))
    if key not in _pools:
        _pools[key] = Pool(name, spec, _share)
    return _pools[key]


class Pool:
    """The deployments of one entry, with when each may next be called (in `clock` time)."""

    def __init__(
        self, name: str, spec: ModelConfig, workers: int = 1, clock: Clock = SYSTEM
    ) -> None:
        self.clock = clock
        self.deployments = {d.name: d for d in spec.deployments}
        self.cooldown = spec.cooldown
        self.max_tokens = spec.max_tokens
        self.keys = {d.name: _key(name, d) for d in spec.deployments}
        # one worker's part of each limit: floor, never zero (a limit below the worker
        # count is honoured by the pace, at worst one request per worker per interval)
        self.interval = {
            d.name: WINDOW * workers / d.rpm if d.rpm else 0.0 for d in spec.deployments
        }
        self.tpm = {d.name: max(1, d.tpm // workers) if d.tpm else None for d in spec.deployments}
        self.next_free = dict.fromkeys(self.deployments, 0.0)
        self.cooled = dict.fromkeys(self.deployments, 0.0)
        self.sent = dict.fromkeys(self.deployments, float("-inf"))  # when each last went out
        self.spent: dict[str, list[tuple[float, int]]] = {d: [] for d in self.deployments}

    def _tpm_ready(self, name: str, now: float, tokens: int) -> float:
        limit = self.tpm[name]
        if limit is None:
            return now
        spent = [(t, n) for t, n in self.spent[name] if t > now - WINDOW]
        self.spent[name] = spent
        total = sum(n for _, n in spent)
        ready = now
        for t, n in sorted(spent):  # wait until enough of the window has passed
            if total + tokens <= limit:
                break
            total -= n
            ready = t + WINDOW
        return ready

    async def acquire(
        self, kwargs: dict[str, Any], messages: list[dict] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Choose a deployment, wait for its turn, and return its name and call arguments."""
        clock = self.clock
        now = clock.monotonic()
        tokens = self.max_tokens + len(json.dumps(messages or [], default=str)) // 4
        up = [d for d in self.deployments if self.cooled[d] <= now]
        names = up or [min(self.deployments, key=lambda d: self.cooled[d])]

        def start(d: str) -> float:
            return max(now, self.next_free[d], self.cooled[d], self._tpm_ready(d, now, tokens))

        chosen = min(names, key=start)
        at = start(chosen)
        # reserved before sleeping: the runs waiting meanwhile see this slot as taken
        self.next_free[chosen] = at + self.interval[chosen]
        self.spent[chosen].append((at, tokens))
        # the pace counts from when calls really went out: a busy loop that woke the previous
        # caller late must not let this one follow it closer than the interval
        while (wait := max(at, self.sent[chosen] + self.interval[chosen]) - clock.monotonic()) > 0:
            await clock.asleep(wait)
        self.sent[chosen] = clock.monotonic()
        self.next_free[chosen] = max(
            self.next_free[chosen], self.sent[chosen] + self.interval[chosen]
        )
        return chosen, self._kwargs(chosen, kwargs)

    def _kwargs(self, name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        d = self.deployments[name]
        kw = dict(kwargs)
        if d.api_base:
            kw["api_base"] = d.api_base
        if self.keys[name]:
            kw["api_key"] = self.keys[name]
        return kw | d.extra

    def cool_down(self, name: str) -> None:
        self.cooled[name] = self.clock.monotonic() + self.cooldown


def _key(model: str, d: DeploymentConfig) -> str | None:
    from fintrade_tui.models.keys import env_key

    return (
        env_key(f"model {model!r} deployment {d.name!r}", d.api_key_env) if d.api_key_env else None
    )
