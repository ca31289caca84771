"""CLI helpers of `run` (runs.py): the plan `run --plan` prints before a batch (runs, tokens,
cost, time; nothing sent), and the budget `--max-cost` and the registry's `max_cost` hold a
batch to (runs/budget.py), built from that plan."""

from __future__ import annotations

import json
from typing import Any

import click

from fintrade_tui.cli.output import console, print_table
from fintrade_tui.errors import UserError


def usd(v: float | None) -> str:
    """$0.0123 (more digits under a cent, so a small plan never reads $0.0000); — for None."""
    from fintrade_tui.runs.budget import usd as dollars

    return "—" if v is None else dollars(v)


MONEY = ("cost", "max_cost", "spent", "spent_now", "left", "held_cost")  # summary keys in USD


def summary_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The batch summary as table rows, its USD figures written as money."""
    money = {k for k, v in data.items() if k in MONEY and v is not None}
    return [{"": k, "value": usd(v) if k in money else v} for k, v in data.items()]


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def make_plan(obj: Any, ws: Any, specs: list, resolved: dict, concurrency: int | None) -> Any:
    """The batch's plan (runs/plan.py) over a runner of its own: reads the workspace, sends
    nothing, records nothing."""
    from fintrade_tui.runs.plan import make_plan as plan_of
    from fintrade_tui.runs.runner import Runner
    from fintrade_tui.workspace.run_records import RunStore

    cfg = obj.cfg
    runner = Runner(cfg, RunStore(ws), models=resolved)
    return plan_of(runner, specs, concurrency or cfg.runs.concurrency, cfg.runs.per_model)


def show_plan(plan: Any, as_json: bool) -> None:
    """The plan as JSON, or a table per model with what each figure rests on."""
    if as_json:
        click.echo(json.dumps(plan.to_dict()))
        return
    d = plan.to_dict()
    rows = [
        {
            "model": m["model"],
            "runs": m["runs"],
            "calls": m["calls"],
            "tokens in": f"{m['tokens_in']:,}" + ("~" if m["tokens_in_estimated"] else ""),
            "tokens out": f"{m['tokens_out']:,} (≤ {m['tokens_out_max']:,})",
            "cost": _cost(m),
            "time": duration(m["seconds"]),
        }
        for m in d["models"]
    ]
    rows.append(
        {
            "model": "all",
            "runs": d["runs"],
            "calls": d["calls"],
            "tokens in": f"{d['tokens_in']:,}",
            "tokens out": f"{d['tokens_out']:,} (≤ {d['tokens_out_max']:,})",
            "cost": _cost(d),
            "time": duration(d["seconds"]),
        }
    )
    title = (
        f"plan of batch {d['batch']}: {d['runs']} runs to make"
        f" ({d['planned']} planned, {d['skipped_completed']} completed already); nothing sent"
    )
    print_table(rows, title)
    for m in d["models"]:
        guess = " (an estimate: litellm has no tokenizer for it)"
        lines = [
            f"prompt tokens: {m['tokenizer']}" + (guess if m["tokens_in_estimated"] else ""),
            f"tokens out: {m['tokens_out_basis'] or '—'}",
        ]
        if m["price_source"]:
            per_in, per_out = m["input_cost_per_token"], m["output_cost_per_token"]
            lines.append(
                f"price: {usd(per_in * 1e6)} / {usd(per_out * 1e6)} per million tokens in / out"
                f" ({'its entry' if m['price_source'] == 'config' else 'litellm price map'})"
            )
        lines += [*m["notes"], f"time: {m['time_basis']}"]
        console.print(f"[bold]{m['model']}[/]", highlight=False)
        for line in lines:
            console.print(f"  {line}", highlight=False, markup=False)


def _cost(d: dict[str, Any]) -> str:
    """The expected cost and its ceiling (every answer at max_tokens)."""
    return "—" if d["cost"] is None else f"{usd(d['cost'])} (≤ {usd(d['cost_max'])})"


def make_budget(
    obj: Any, ws: Any, plan: Any, names: list[str], max_cost: float | None, resolved: dict
) -> Any:
    """The budget of this invocation (None without `--max-cost` or any model's `max_cost`):
    the batch's recorded cost so far, each run's expected cost from the plan. A hosted model
    without a price cannot be held to a budget: one line naming the keys to set."""
    from fintrade_tui.runs.budget import Budget
    from fintrade_tui.workspace.run_records import RunStore

    per_model = {n: resolved[n].spec.max_cost for n in names if resolved[n].spec.max_cost}
    if max_cost is None and not per_model:
        return None
    for m in plan.models:
        capped = max_cost is not None or m.model in per_model
        if capped and m.price is None and not resolved[m.model].local:
            raise UserError(
                f"--max-cost with model {m.model!r}",
                f"has no price ({m.model_string} is not in litellm's price map)",
                f"set input_cost_per_token and output_cost_per_token in models.{m.model}",
            )
    spent = RunStore(ws).batch_cost(plan.batch)
    keys = {n: resolved[n].params for n in names}

    def estimate(spec: Any) -> float:
        est = plan.estimates.get(spec.key(keys[spec.model]))
        return (est.cost or 0.0) if est else 0.0

    return Budget(max_cost, per_model, spent, estimate)
