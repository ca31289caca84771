"""CLI commands for disputed references: `questions dispute` (mark a reference wrong or
ambiguous, or withdraw that), `questions disputes` (the current ones), `questions suspects`
(references the suspect rules flag), and `questions errata export` / `import` (carry disputes
to another workspace as a JSONL or CSV file)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly
from fintrade_tui.cli.output import console, print_table
from fintrade_tui.cli.questions import questions


def _jsonable(row: dict) -> dict:
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in row.items()}


@questions.command()
@click.argument("question_id")
@click.option(
    "--kind",
    type=click.Choice(["wrong", "ambiguous", "withdrawn"]),
    required=True,
    help="wrong (optionally --corrected), ambiguous, or withdrawn (the dispute no longer holds)",
)
@click.option("--reason", required=True, help="why, in a line")
@click.option("--corrected", help="the corrected reference answer (kind wrong only)")
@click.option("--who", default="analyst", show_default=True, help="who disputes it")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def dispute(
    obj: Ctx,
    question_id: str,
    kind: str,
    reason: str,
    corrected: str | None,
    who: str,
    as_json: bool,
) -> None:
    """Dispute a question's reference answer (append-only: the newest version counts)."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.disputes import DisputeStore

    with open_workspace(obj.cfg.workspace) as ws:
        row = DisputeStore(ws).save(question_id, kind, reason, who, corrected)
    if as_json:
        emit_json(_jsonable(row))
        return
    console.print(f"{question_id}: reference disputed as {kind} (version {row['version']})")


@questions.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def disputes(obj: Ctx, as_json: bool) -> None:
    """The questions whose reference is disputed now (each question's newest dispute)."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.disputes import DisputeStore

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        rows = list(DisputeStore(ws, read_only=True).latest().values())
    if as_json:
        emit_json([_jsonable(r) for r in rows])
        return
    if not rows:
        console.print("no disputed references")
        return
    keep = ("question_id", "kind", "reason", "corrected", "who", "created_at", "origin")
    print_table([{k: r[k] for k in keep} for r in rows], "disputed references")


@questions.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def suspects(obj: Ctx, as_json: bool) -> None:
    """References that look wrong, found without being told (audits/suspects.py)."""
    from fintrade_tui.reports.suspects import workspace_suspects
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        found = workspace_suspects(ws)
    rows = [{"question_id": qid, **s} for qid, hits in found.items() for s in hits]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        console.print("no suspect references")
        return
    print_table(rows, f"{len(found)} questions with a suspect reference")


@questions.group()
def errata() -> None:
    """Disputed references as a file: export from one workspace, import into another."""


@errata.command("export")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), help="default: by suffix")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def errata_export(obj: Ctx, path: Path, fmt: str | None, as_json: bool) -> None:
    """Write every version of every dispute (docs/questions.md: Errata files)."""
    from fintrade_tui.questions.errata import write_errata
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        n = write_errata(ws, path, fmt)
    if as_json:
        emit_json({"file": str(path), "rows": n})
        return
    console.print(f"wrote {n} dispute versions to {path}")


@errata.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), help="default: by suffix")
@click.option("--dry-run", is_flag=True, help="say what it would append; write nothing")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def errata_import(obj: Ctx, path: Path, fmt: str | None, dry_run: bool, as_json: bool) -> None:
    """Append the file's disputes this workspace lacks, in one transaction; rows of questions
    not in the workspace are skipped and named."""
    from fintrade_tui.questions.errata import import_errata
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace, read_only=dry_run) as ws:
        out = import_errata(ws, path, fmt, dry_run)
    if as_json:
        emit_json(out)
        return
    verb = "would append" if dry_run else "appended"
    console.print(f"{path}: {out['rows']} rows, {verb} {out['appended']}, {out['already']} already")
    if out["skipped"]:
        console.print(f"skipped questions not in this workspace: {', '.join(out['skipped'][:10])}")
    if out["reference_differs"]:
        names = ", ".join(out["reference_differs"][:10])
        console.print(f"reference here differs from the file's: {names}")
