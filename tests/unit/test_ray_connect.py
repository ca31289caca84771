"""How `run --engine ray` starts a local Ray: its workers at the driver's priority (Ray's own
default puts them 15 nice levels below, and a batch on a busy machine crawled), unless the user
set `RAY_worker_niceness`; joining a cluster leaves that cluster's settings alone."""

from __future__ import annotations

import pytest

from fintrade_tui.runs import ray_engine

ray = pytest.importorskip("ray")


@pytest.fixture
def inits(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """ray.init replaced: each call's arguments and the niceness setting it would start with."""
    seen: list[dict] = []

    def init(**kw):
        import os

        seen.append(kw | {"niceness": os.environ.get(ray_engine.WORKER_NICENESS)})

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.delenv(ray_engine.WORKER_NICENESS, raising=False)
    return seen


def test_a_local_ray_runs_its_workers_at_the_drivers_priority(inits: list[dict]) -> None:
    assert ray_engine._connect(None, 2) is True
    assert inits[0]["num_cpus"] == 2 and inits[0]["niceness"] == "0"


def test_the_users_niceness_wins(inits: list[dict], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ray_engine.WORKER_NICENESS, "10")
    ray_engine._connect(None, 2)
    assert inits[0]["niceness"] == "10"


def test_joining_a_cluster_sets_nothing(inits: list[dict]) -> None:
    assert ray_engine._connect("auto", None) is True
    assert inits[0]["address"] == "auto" and inits[0]["niceness"] is None
