"""CLI commands that bring results in and take them out: `runs import` (inspect, promptfoo,
lm-eval, generic JSONL), `runs export`, and `scores export`."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table
from fintrade_tui.cli.runs import runs
from fintrade_tui.imports.formats import FORMATS

EXPORT_FORMATS = ("jsonl", "csv", "parquet")


def _resolver(obj: Ctx, stack: ExitStack) -> Any:
    """A resolver over the store when there is one (imports never build the store)."""
    from fintrade_tui.questions.resolve import Resolver
    from fintrade_tui.store.db import connect

    if not obj.cfg.store.exists():
        return None
    con = stack.enter_context(connect(obj.cfg.store))
    return Resolver(con, obj.cfg.questions.reference_date, obj.cfg.fundamentals.estimated_lag_days)


def _print_import(files: list[dict[str, Any]], dry_run: bool) -> None:
    heads = {"runs": "runs", "added": "new", "existing": "known", "duplicates_n": "dup"}
    heads |= {"questions_created": "q new", "questions_resolved": "q ok", "scores_added": "scores"}
    # the file name last: the only column allowed to wrap in a narrow terminal
    rows = [
        {"format": f["format"]} | {h: f[k] for k, h in heads.items()} | {"file": f["file"]}
        for f in files
    ]
    title = "dry run: nothing written" if dry_run else "imported"
    print_table(rows, title)
    for f in files:
        name = escape(Path(f["file"]).name)  # names and labels come from the file: not markup
        for label in ("models", "conditions", "labels"):
            if f[label]:
                parts = escape(", ".join(f"{k} {v}" for k, v in f[label].items()))
                console.print(f"[dim]{name} {label}:[/] {parts}", highlight=False)
        for d in f["duplicates"][:5]:
            console.print(f"[yellow]{name} duplicate[/] {escape(d)} (stored once)", highlight=False)
        if len(f["duplicates"]) > 5:
            console.print(f"[yellow]{name}[/] {len(f['duplicates']) - 5} more duplicates (--json)")
        for w in f["warnings"][:5]:
            console.print(f"[yellow]{name} warning[/] {escape(w)}", highlight=False)
        more = len(f["warnings"]) - 5
        if more > 0:
            console.print(f"[yellow]{name}[/] {more} more warnings (see --json)")


@runs.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="default: detected")
@click.option("--model", "-m", help="the model of every run in the files (the file's is kept)")
@click.option("--condition", "-c", help="the condition of every run in the files")
@click.option("--dry-run", is_flag=True, help="read and count, write nothing")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def runs_import(obj: Ctx, paths, fmt, model, condition, dry_run, as_json) -> None:
    """Import answers produced elsewhere: inspect_ai logs, promptfoo output, lm-eval samples or
    the generic run JSONL. All files in one transaction; importing again adds nothing."""
    from fintrade_tui.imports.formats import read_runs
    from fintrade_tui.imports.load import Planner, write
    from fintrade_tui.workspace.connection import open_workspace

    with ExitStack() as stack:
        ws = stack.enter_context(open_workspace(obj.cfg.workspace))
        planner = Planner(ws, _resolver(obj, stack))
        for path in paths:
            found, stream = read_runs(path, fmt)
            planner.add_file(path, found, stream, model, condition)
        if not dry_run:
            write(ws, planner.plan)
    files = [f.to_dict() for f in planner.plan.files]
    if as_json:
        emit_json({"dry_run": dry_run, "files": files, "totals": _totals(files)})
    else:
        _print_import(files, dry_run)


def _totals(files: list[dict[str, Any]]) -> dict[str, int]:
    keys = ("runs", "added", "existing", "duplicates_n", "questions_created")
    return {k: sum(f[k] for f in files) for k in (*keys, "questions_resolved", "scores_added")}


def _export_filters(fn):
    for opt in reversed(
        [
            click.option("--question", "-q", help="question id or glob (F1, 'SECQUE-*')"),
            click.option("--model", "-m"),
            click.option("--condition", "-c"),
            click.option("--origin", type=click.Choice(["local", "external"])),
            click.option("--status"),
            click.option("--batch"),
            click.option("--source", help="the question set (fintradebench, secque, a task...)"),
        ]
    ):
        fn = opt(fn)
    return fn


@runs.command("export")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), help="default: from PATH")
@_export_filters
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def runs_export(obj: Ctx, path: Path, fmt, as_json, **filters) -> None:
    """Every selected run with its scores, audit summary and provenance (JSONL re-imports)."""
    from fintrade_tui.exports.runs_table import export_runs
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace) as ws:
        n = export_runs(ws, path, _format(path, fmt), filters)
    out = {"path": str(path), "format": _format(path, fmt), "runs": n}
    emit_json(out) if as_json else console.print(f"wrote {n} runs to {path}", highlight=False)


def _format(path: Path, fmt: str | None) -> str:
    from fintrade_tui.errors import UserError

    fmt = fmt or path.suffix.lower().lstrip(".")
    if fmt not in EXPORT_FORMATS:
        raise UserError(str(path), "has no export format", "pass --format jsonl|csv|parquet")
    return fmt


@main.group()
def scores() -> None:
    """Stored human and LLM scores: export."""


@scores.command("export")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(EXPORT_FORMATS), help="default: from PATH")
@click.option("--kind", type=click.Choice(["human", "llm", "panel"]))
@click.option("--history", is_flag=True, help="every version, not only the latest")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def scores_export(obj: Ctx, path: Path, fmt, kind, history, as_json) -> None:
    """Scores with their run's question, model and condition (latest versions by default)."""
    from fintrade_tui.exports.runs_table import export_scores
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace) as ws:
        n = export_scores(ws, path, _format(path, fmt), kind, history)
    out = {"path": str(path), "format": _format(path, fmt), "scores": n}
    emit_json(out) if as_json else console.print(f"wrote {n} scores to {path}", highlight=False)
