"""CLI room of the fatal-flaw screen: `screen` runs the deterministic checks and (unless
`--no-llm`) the LLM check over stored runs, and appends one screening per run."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table, progress_bars
from fintrade_tui.judging.flaws import deterministic_flags, flag_line, llm_flags
from fintrade_tui.workspace.questions import Question
from fintrade_tui.workspace.screenings import DETERMINISTIC, FlagStore

if TYPE_CHECKING:
    from fintrade_tui.models.resolve import Model
    from fintrade_tui.workspace.connection_api import Connection


def runs_to_screen(
    ws: Connection,
    run_ids: list[str] | None = None,
    batch: str | None = None,
    question: str | None = None,
) -> list[dict[str, Any]]:
    """Runs named by id or prefix (any status), else the completed runs of this batch and
    question (a benchmark's reference answers left out); oldest first."""
    from fintrade_tui.errors import UserError
    from fintrade_tui.workspace.run_records import COMPLETED, RunStore

    store = RunStore(ws, read_only=True)
    if run_ids:
        runs = store.list(batch=batch, question=question, limit=1_000_000_000)
        for p in run_ids:
            if not any(r["id"].startswith(p) for r in runs):
                raise UserError(f"run {p!r}", "not found", "see `fintrade-tui runs list`")
        runs = [r for r in runs if any(r["id"].startswith(p) for p in run_ids)]
    else:
        runs = store.list(status=COMPLETED, batch=batch, question=question, limit=1_000_000_000)
        runs = [r for r in runs if r["condition"] != "reference"]
    return list(reversed(runs))


def _question_of(run: dict[str, Any], questions: dict[str, Question]) -> Question:
    """The run's question, or a stand-in with the run's as-of (a question no longer in the
    workspace: its dates are still checked, its companies are not)."""
    q = questions.get(run["question_id"])
    return q or Question(str(run["question_id"]), "?", "?", "", as_of=run.get("as_of"))


async def screen_runs(
    cfg: Any,
    ws: Connection,
    runs: list[dict[str, Any]],
    model: Model | None = None,
    concurrency: int = 2,
    on_done: Any = None,
) -> list[dict[str, Any]]:
    """Screen each run (the LLM check with `model`, none when None), saving each screening
    as it is done; returns them in `runs` order with the run's question, model, condition."""
    from fintrade_tui.workspace.questions import load_questions

    store = FlagStore(ws)
    questions = {q.id: q for q in load_questions(ws, ids=sorted({r["question_id"] for r in runs}))}
    con = None
    if cfg.store.exists():  # the store's company names; the alias table without one
        from fintrade_tui.store.db import connect

        con = connect(cfg.store)
    try:
        found = {r["id"]: deterministic_flags(r, _question_of(r, questions), con) for r in runs}
    finally:
        if con is not None:
            con.close()
    gate = asyncio.Semaphore(concurrency)
    saved: list[dict[str, Any]] = []

    async def one(run: dict[str, Any]) -> None:
        flags, checks, error = list(found[run["id"]]), [DETERMINISTIC], None
        if model:
            async with gate:
                more, error = await llm_flags(cfg, run, _question_of(run, questions), model)
            flags += more
            checks += [] if error else [model.name]
        name = model.name if model else None
        row = await asyncio.to_thread(store.save, run["id"], flags, checks, name, error)
        saved.append(row | {k: run.get(k) for k in ("question_id", "model", "condition")})
        if on_done:
            on_done(row)

    await asyncio.gather(*(one(r) for r in runs))
    order = {r["id"]: i for i, r in enumerate(runs)}
    return sorted(saved, key=lambda s: order[s["run_id"]])


@main.command()
@click.option("--run", "run_ids", multiple=True, help="a run id or prefix (repeatable)")
@click.option("--batch", help="only runs of this batch")
@click.option("--question", "question", help="only runs of this question id")
@click.option("--model", "-m", help="the LLM check's model (default judging.model)")
@click.option("--no-llm", is_flag=True, help="the deterministic checks only")
@click.option("--concurrency", type=click.IntRange(1, 32), default=2)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def screen(obj: Ctx, run_ids, batch, question, model, no_llm, concurrency, as_json) -> None:
    """Screen answers for fatal flaws (wrong entity or period, truncated, incomplete;
    unsupported claims and inconsistent conclusions by the LLM check); appends a screening."""
    from fintrade_tui.workspace.connection import open_workspace

    cfg = obj.cfg
    name = None if no_llm else (model or cfg.judging.model)
    judge = None
    if name:
        from fintrade_tui.models.resolve import resolve

        judge = resolve(cfg, name)  # an unknown model fails before any work
    with open_workspace(cfg.workspace) as ws:
        runs = runs_to_screen(ws, list(run_ids) or None, batch, question)
        with progress_bars(as_json) as reporter:
            tick = reporter.start(f"screen{' + ' + name if name else ''}", len(runs))
            saved = asyncio.run(screen_runs(cfg, ws, runs, judge, concurrency, lambda r: tick(1)))
    if as_json:
        emit_json(saved)
        return
    rows = [
        {
            "run": s["run_id"],
            "question": s["question_id"],
            "model": s["model"],
            "condition": s["condition"],
            "flags": ", ".join(dict.fromkeys(f["flag"] for f in s["flags"])) or "-",
        }
        for s in saved
    ]
    print_table(
        rows, f"{len(rows)} runs screened ({', '.join([DETERMINISTIC, *([name] if name else [])])})"
    )
    for s in saved:
        for f in s["flags"]:
            console.print(f"{s['run_id']} {escape(flag_line(f))}", highlight=False)
        if s["llm_error"]:
            console.print(f"[red]{s['run_id']}[/] LLM check failed: {escape(s['llm_error'])}")
