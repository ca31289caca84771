"""CLI commands of model runs: `run` (a headless, resumable benchmark batch) and `runs
list|show`, with what `ask` (ask.py) shares: conditions parsed, the workspace and index made
ready, the runs table, and the exit code when runs did not complete."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table, progress_bars
from fintrade_tui.errors import UserError
from fintrade_tui.safe_text import printable
from fintrade_tui.workspace.evidence import CONDITIONS, LABELS


def parse_conditions(value: str | None, default: list[str]) -> list[str]:
    names = [c.strip() for c in value.split(",") if c.strip()] if value else list(default)
    for c in names:
        if c not in CONDITIONS:
            raise UserError(f"condition {c!r}", "is unknown", f"use {', '.join(CONDITIONS)}")
    return names


def _say(quiet: bool):
    return (lambda msg: None) if quiet else (lambda msg: console.print(f"[dim]{msg}[/]"))


# `ask` and `run` exit with this when runs ended in error or time-out (2: bad input)
RUNS_FAILED = 3
# `run` exits with this when its budget stopped it: runs were left unsent (--max-cost, max_cost)
BUDGET_STOPPED = 4


def exit_on_failed_runs(statuses: Counter, reasons: Counter, budget: str | None = None) -> None:
    """One line on stderr and exit code RUNS_FAILED when any run did not complete: how many,
    by status, and the most common error. The table or JSON before it is printed as always.
    `budget`: the line of a batch its budget stopped, printed last; the exit code is then
    BUDGET_STOPPED (running again sends nothing until the budget is raised)."""
    from fintrade_tui.ui.faults import tidy  # no Textual: litellm's wrapping taken off

    failed = sum(n for status, n in statuses.items() if status != "completed")
    if failed:
        _failed_line(statuses, reasons, failed, tidy)
    if budget:
        click.echo(budget, err=True)
        sys.exit(BUDGET_STOPPED)
    if failed:
        sys.exit(RUNS_FAILED)


def _failed_line(statuses: Counter, reasons: Counter, failed: int, tidy: Any) -> None:
    by = ", ".join(
        f"{status} {n}" for status, n in sorted(statuses.items()) if status != "completed"
    )
    line = f"error: {failed} of {sum(statuses.values())} runs did not complete ({by})"
    if reasons:
        reason, n = reasons.most_common(1)[0]
        line += f"; most often ({n}x): {printable(tidy(reason))[:160]}"
    click.echo(line, err=True)


@contextmanager
def ready_workspace(obj: Ctx, quiet: bool, tickers_for_rag: list[str] | None = None) -> Iterator:
    """Store, question bank and (for RAG) index made ready; yields the workspace connection."""
    from fintrade_tui.application.readiness import ensure_questions, ensure_store
    from fintrade_tui.workspace.connection import open_workspace

    cfg = obj.cfg
    with progress_bars(quiet) as reporter:
        ensure_store(cfg, _say(quiet), reporter)
    with open_workspace(cfg.workspace) as ws:
        ensure_questions(cfg, ws, _say(quiet))
        yield ws


def index_for(obj: Ctx, tickers: list[str], quiet: bool) -> None:
    from fintrade_tui.retrieval.indexing import ensure_index

    with progress_bars(quiet) as reporter:
        ensure_index(obj.cfg, sorted(set(tickers)), _say(quiet), reporter)


def _summary(r: dict[str, Any]) -> dict[str, Any]:
    rate = (
        (r["tokens_out"] or 0) / (r["duration"] - (r["ttft"] or 0))
        if r["duration"] and r["tokens_out"] and r["duration"] > (r["ttft"] or 0)
        else None
    )
    return {
        "run": r["id"],
        "question": r["question_id"],
        "condition": LABELS.get(r["condition"], r["condition"]),
        "model": r["model"],
        "status": r["status"],
        "evidence": len(r["evidence_ids"]),
        "ttft s": round(r["ttft"], 2) if r["ttft"] is not None else None,
        "tok/s": round(rate, 1) if rate else None,
        "in/out": f"{r['tokens_in'] or '-'}/{r['tokens_out'] or '-'}",
        "s": round(r["duration"], 1) if r["duration"] else None,
    }


def print_runs(rows: list[dict[str, Any]], title: str, drop: tuple[str, ...] = ()) -> None:
    """The table, then each failed run's error on its own line (errors are long)."""
    print_table([{k: v for k, v in _summary(r).items() if k not in drop} for r in rows], title)
    for r in rows:
        if r["error"]:
            console.print(f"[red]{r['id']}[/] {r['status']}: {escape(r['error'])}", highlight=False)


def _select_questions(ws, pattern: str, category: str | None, limit: int | None) -> list:
    from fintrade_tui.workspace.questions import load_questions

    pats = [p.strip() for p in pattern.split(",") if p.strip()]
    items = [
        q
        for q in load_questions(ws, category=category)
        if q.as_of and q.tickers and any(fnmatch.fnmatchcase(q.id, p) for p in pats)
    ]
    if not items:
        raise UserError(
            f"--questions {pattern!r}", "selects no resolved question", "try F1,T* or '*'"
        )
    return items[:limit] if limit else items


@main.command("run")
@click.option(
    "--questions", "-q", "pattern", default="*", help="ids or globs: 'F1,T*' (default all)"
)
@click.option("--category", type=click.Choice(["F", "T", "FT"]))
@click.option("--limit", type=int, help="at most this many questions")
@click.option("--models", "-m", help="comma-separated registry names (default runs.default_model)")
@click.option("--conditions", "-c", help=f"comma-separated: {', '.join(CONDITIONS)}")
@click.option("--level", "-l", type=click.Choice([f"L{i}" for i in range(1, 7)]))
@click.option("--concurrency", type=click.IntRange(1, 64), help="runs at once (all models)")
@click.option("--batch", default="default", help="a label; re-running skips completed runs")
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    help="local: one asyncio loop here; ray: Ray actors (pip install 'fintrade-tui[ray]')",
)
@click.option("--ray-address", help="join this Ray cluster ('auto': the one `ray start` made)")
@click.option("--shards", type=click.IntRange(1, 100_000), help="ray: spec shards (default n/8)")
@click.option(
    "--plan",
    "plan_only",
    is_flag=True,
    help="print the runs, tokens, cost and time the batch would take; send nothing",
)
@click.option(
    "--max-cost",
    type=click.FloatRange(0, min_open=True),
    metavar="USD",
    help="stop sending once the batch's recorded cost plus what is in flight would pass this"
    f" (exit code {BUDGET_STOPPED}; the same command with a larger budget resumes)",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def run_batch(
    obj: Ctx,
    pattern,
    category,
    limit,
    models,
    conditions,
    level,
    concurrency,
    batch,
    engine,
    ray_address,
    shards,
    plan_only,
    max_cost,
    as_json,
):
    """Run a benchmark headless: questions × models × conditions, resumable; --plan shows what
    it would take first, --max-cost holds it to a budget."""
    from fintrade_tui.cli import run_plan
    from fintrade_tui.models.resolve import resolve_all
    from fintrade_tui.runs.runner import Runner, RunSpec
    from fintrade_tui.workspace.run_records import RunStore

    cfg = obj.cfg
    conds = parse_conditions(conditions, cfg.runs.conditions)
    names = [m.strip() for m in (models or cfg.runs.default_model).split(",") if m.strip()]
    resolved = resolve_all(cfg, names)  # each model once, checked before any work
    capped = max_cost is not None or any(m.spec.max_cost for m in resolved.values())
    if engine == "ray" and capped and not plan_only:
        raise UserError(
            "--engine ray", "does not hold a batch to a budget", "use --engine local for it"
        )
    with ready_workspace(obj, as_json) as ws:
        qs = _select_questions(ws, pattern, category, limit)
        if "rag" in conds:
            index_for(obj, [t for q in qs for t in q.tickers], as_json)
        specs = [
            RunSpec(q, c, n, level or cfg.runs.level, cfg.runs.best_of, batch)
            for q in qs
            for n in names
            for c in conds
        ]
        budget = None
        if plan_only or capped:
            plan = run_plan.make_plan(obj, ws, specs, resolved, concurrency)
            if plan_only:
                run_plan.show_plan(plan, as_json)
                return
            budget = run_plan.make_budget(obj, ws, plan, names, max_cost, resolved)
        reasons: Counter = Counter()  # the errors of runs that did not complete
        if engine == "ray":  # its workers' rows land from Parquet shards, in bulk already
            from fintrade_tui.cli.run_ray import run_on_ray

            data = run_on_ray(
                Runner(cfg, RunStore(ws), models=resolved), specs, ray_address, shards, as_json
            )
        else:  # records grouped: the workspace stays free for the explorer between groups
            data = _run_here(ws, cfg, specs, batch, concurrency, as_json, resolved, reasons, budget)
    if as_json:
        click.echo(json.dumps(data))
    else:
        print_table(run_plan.summary_rows(data), "batch")
    statuses = Counter(
        {k.removeprefix("status_"): v for k, v in data.items() if k[:7] == "status_"}
    )
    stopped = budget.line(batch) if budget is not None and budget.stopped_any else None
    exit_on_failed_runs(statuses, reasons, stopped)


def _run_here(
    ws,
    cfg,
    specs,
    batch: str,
    concurrency: int | None,
    as_json: bool,
    models,
    reasons: Counter,
    budget=None,
) -> dict:
    """The batch on the local engine, its records grouped (`BufferedRunStore`), a progress bar
    (or a JSON line per finished run) that counts a run once its record is stored."""
    from fintrade_tui.runs import batch as batches
    from fintrade_tui.runs.runner import Runner
    from fintrade_tui.workspace.write_behind import BufferedRunStore

    lock = threading.Lock()
    ended: dict[str, tuple] = {}  # run id -> (spec, end), waiting for its group
    stored: set[str] = set()

    def report(spec, end: dict) -> None:
        tick(1)
        if as_json:  # one JSON line per finished run, then the summary
            line = {"question": spec.question.id, "condition": spec.condition}
            line |= {"model": spec.model, "status": end.get("status"), "cost": end.get("cost")}
            click.echo(json.dumps(line), nl=True)

    def on_event(ev) -> None:
        if ev.kind == "ended":
            if ev.data.get("error"):
                reasons[ev.data["error"]] += 1
            with lock:
                if ev.run_id not in stored:
                    ended[ev.run_id] = (ev.spec, ev.data)
                    return
            report(ev.spec, ev.data)

    def on_written(ids: list[str]) -> None:
        with lock:
            stored.update(ids)
            done = [ended.pop(i) for i in ids if i in ended]
        for spec, end in done:
            report(spec, end)

    # the store closes first: its last group is written, and counted, before the bar ends
    with progress_bars(as_json) as reporter, BufferedRunStore(ws, on_written=on_written) as store:
        runner = Runner(cfg, store, models=models)
        todo, _ = batches.plan(runner, specs)
        tick = reporter.start(f"batch {batch}", len(todo))
        summary = asyncio.run(
            batches.run_batch(
                runner,
                specs,
                concurrency or cfg.runs.concurrency,
                cfg.runs.per_model,
                on_event=on_event,
                budget=budget,
                on_held=lambda spec: tick(1),
            )
        )
    return summary.to_dict()


@main.group()
def runs() -> None:
    """Stored model runs: list and show."""


@runs.command("list")
@click.option("--question", "-q")
@click.option("--model", "-m")
@click.option("--condition", "-c", help="ours (no_rag, rag, ...) or an imported file's label")
@click.option("--status")
@click.option("--batch", help="a batch label, or import:<file name> for an import")
@click.option("--origin", type=click.Choice(["local", "external"]))
@click.option("--limit", type=int, default=50)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def runs_list(obj: Ctx, question, model, condition, status, batch, origin, limit, as_json) -> None:
    """Recent runs, newest first."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.run_records import RunStore

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        store = RunStore(ws, read_only=True)
        rows = store.list(question, model, condition, status, batch, limit, origin)
    if as_json:
        emit_json([{k: v for k, v in r.items() if k not in ("prompt", "evidence")} for r in rows])
    else:
        print_runs(rows, f"{len(rows)} runs")


@runs.command("show")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def runs_show(obj: Ctx, run_id: str, as_json: bool) -> None:
    """One run: prompt, evidence, answer and measurements (an id prefix is enough)."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.run_records import RunStore

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        r = RunStore(ws, read_only=True).get(run_id)
    if as_json:
        emit_json(r)
        return
    print_runs([r], f"run {r['id']}")
    if r.get("origin") == "external":
        label = f", condition {r['condition_label']!r}" if r.get("condition_label") else ""
        variant = f", variant {r['variant']!r}" if r.get("variant") else ""
        console.print(
            "[dim]"
            + escape(f"imported ({r['source_format']}) from {r['source_file']} ")
            + escape(f"{r['source_locator']}{label}{variant}")
            + "[/]",
            highlight=False,
        )
    for item in (r["evidence"] or {}).get("items", []):
        console.print(f"[cyan]{escape(item['id'])}[/] {escape(item['title'])}", highlight=False)
    for call in r["tool_calls"] or []:
        console.print(f"[magenta]tool[/] {call['name']}({call['arguments']})", highlight=False)
    console.rule("prompt")
    console.print(r["prompt"] or "", highlight=False, markup=False)
    console.rule("answer")
    console.print(r["answer"] or "", highlight=False, markup=False)
