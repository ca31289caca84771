"""CLI room of `ask`: one question answered under several evidence conditions at once, streamed
side by side (rich.Live columns on a terminal, labelled lines when piped) and stored. The
workspace, index and exit-code helpers it shares with `run` live in `runs.py`."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console
from fintrade_tui.cli.runs import (
    exit_on_failed_runs,
    index_for,
    parse_conditions,
    print_runs,
    ready_workspace,
)
from fintrade_tui.errors import UserError
from fintrade_tui.safe_text import printable
from fintrade_tui.workspace.evidence import CONDITIONS, LABELS


@main.command()
@click.argument("question_id")
@click.option("--conditions", "-c", help=f"comma-separated: {', '.join(CONDITIONS)}")
@click.option("--model", "-m", help="a name from the models: registry (default runs.default_model)")
@click.option("--level", "-l", type=click.Choice([f"L{i}" for i in range(1, 7)]))
@click.option("--best-of", type=click.IntRange(1, 8), help="candidates, the model picks its best")
@click.option("--json", "as_json", is_flag=True, help="print the stored runs as JSON at the end")
@click.pass_obj
@friendly
def ask(obj: Ctx, question_id: str, conditions, model, level, best_of, as_json: bool) -> None:
    """Answer one question under several evidence conditions at once, streamed and stored."""
    from fintrade_tui.runs.runner import Runner, RunSpec
    from fintrade_tui.workspace.questions import get_question
    from fintrade_tui.workspace.run_records import RunStore

    cfg = obj.cfg
    conds = parse_conditions(conditions, cfg.runs.conditions)
    name = model or cfg.runs.default_model
    from fintrade_tui.models.resolve import resolve_all

    models = resolve_all(cfg, [name])  # fail before any work on an unknown model
    with ready_workspace(obj, as_json) as ws:
        q = get_question(ws, question_id)
        if not q.as_of or not q.tickers:
            raise UserError(
                f"question {q.id}", "is not resolved (no tickers or date)", "see questions show"
            )
        if "rag" in conds:
            index_for(obj, q.tickers, as_json)
        runs = RunStore(ws)
        runner = Runner(cfg, runs, models=models)
        specs = [
            RunSpec(q, c, name, level or cfg.runs.level, best_of or cfg.runs.best_of) for c in conds
        ]
        if not as_json:
            console.print(
                f"[bold]{escape(q.id)}[/] {escape(f'({q.category}, as of {q.as_of}): {q.text}')}"
            )
        ends = asyncio.run(_stream_side_by_side(runner, specs, quiet=as_json))
        stored = [runs.get(rid) for rid in ends]
    if as_json:
        emit_json(stored)
    else:
        print_runs(stored, f"{q.id} runs, model {name}", drop=("question", "model"))
    statuses = Counter(r["status"] for r in stored)
    exit_on_failed_runs(statuses, Counter(r["error"] for r in stored if r["error"]))


async def _stream_side_by_side(runner, specs, quiet: bool) -> list[str]:
    """All conditions at once; on a terminal a live column per condition, else labelled lines."""
    from fintrade_tui.runs.runner import drain

    view = _LiveColumns([LABELS[s.condition] for s in specs], enabled=not quiet)
    ids: list[str] = [""] * len(specs)

    def on_event(i: int):
        def handle(ev) -> None:
            ids[i] = ev.run_id
            if ev.kind == "token":
                view.add(i, ev.text)
            elif ev.kind == "ended":
                view.end(i, ev.data)

        return handle

    with view:
        await asyncio.gather(*(drain(runner.stream(s), on_event(i)) for i, s in enumerate(specs)))
    return ids


class _LiveColumns:
    """Side-by-side panels with rich.Live on a terminal; labelled lines when piped."""

    def __init__(self, labels: list[str], enabled: bool) -> None:
        self.labels, self.enabled = labels, enabled
        self.text = [""] * len(labels)
        self.status = ["streaming"] * len(labels)
        self.live: Any = None
        self.pending = [""] * len(labels)

    def __enter__(self) -> _LiveColumns:
        if self.enabled and console.is_terminal:
            from rich.live import Live

            self.live = Live(self._render(), console=console, refresh_per_second=12)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live:
            self.live.update(self._render())
            self.live.__exit__(*exc)

    def _render(self) -> Any:
        from rich.columns import Columns
        from rich.panel import Panel

        from fintrade_tui.safe_text import plain

        width = max(30, (console.width - 2) // max(1, len(self.labels)) - 1)
        return Columns(
            [
                # a model's reply is data: Text (never markup), control characters made visible
                Panel(plain(t or "…"), title=plain(f"{lab} · {st}"), width=width)
                for lab, t, st in zip(self.labels, self.text, self.status, strict=True)
            ]
        )

    def add(self, i: int, text: str) -> None:
        self.text[i] += text
        if self.live:
            self.live.update(self._render())
        elif self.enabled:
            self.pending[i] += text
            *lines, self.pending[i] = self.pending[i].split("\n")
            for line in lines:
                click.echo(f"[{self.labels[i]}] {printable(line)}")

    def end(self, i: int, data: dict) -> None:
        self.status[i] = data.get("status", "?")
        if self.live:
            self.live.update(self._render())
        elif self.enabled:
            if self.pending[i]:
                click.echo(f"[{self.labels[i]}] {printable(self.pending[i])}")
            err = f": {printable(data['error'])}" if data.get("error") else ""
            click.echo(f"[{self.labels[i]}] -- {self.status[i]}{err}")
