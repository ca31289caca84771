"""CLI room: `run --engine ray`, the batch on Ray actors (runs/ray_engine.py) with a progress
bar on stderr — planned, done, errors, tokens and the time left."""

from __future__ import annotations

from typing import Any

from fintrade_tui.errors import UserError


def run_on_ray(runner, specs, address, shards, quiet: bool) -> dict[str, Any]:
    """The batch on Ray with a progress bar on stderr: planned, done, errors, tokens, ETA."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UserError("--engine ray", "needs Ray", "pip install 'fintrade-tui[ray]'") from None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TimeRemainingColumn,
    )

    from fintrade_tui.runs.ray_engine import run_ray

    err = Console(stderr=True)
    columns: list[str | ProgressColumn] = ["{task.description}", BarColumn(), MofNCompleteColumn()]
    columns += ["errors {task.fields[errors]}", "tokens {task.fields[tokens]}"]
    with Progress(
        *columns, TimeRemainingColumn(), console=err, disable=quiet or not err.is_terminal
    ) as bar:
        task = bar.add_task(f"batch {specs[0].batch} on ray", total=None, errors=0, tokens=0)

        def planned(n: int) -> None:
            bar.update(task, total=n)

        def progress(p: dict[str, int]) -> None:
            bar.update(task, completed=p["done"], errors=p["errors"], tokens=p["tokens"])

        return run_ray(runner, specs, address, shards, on_progress=progress, on_plan=planned)
