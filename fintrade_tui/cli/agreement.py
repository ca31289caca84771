"""CLI commands of inter-annotator agreement: `disagreements` (runs two annotators scored 2+
points apart on a dimension, for adjudication) and `adjudicate` (the settled scores, saved as a
new human score version)."""

from __future__ import annotations

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table


@main.command()
@click.option("--gap", type=click.IntRange(1, 4), default=2, show_default=True)
@click.option("--open", "only_open", is_flag=True, help="only the ones not yet adjudicated")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def disagreements(obj: Ctx, gap: int, only_open: bool, as_json: bool) -> None:
    """Runs where two annotators differ by --gap or more on a dimension, widest first."""
    from fintrade_tui.stats.annotators import disagreement_view
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace) as ws:
        items = disagreement_view(ws, gap)
    if only_open:
        items = [i for i in items if i["adjudicated"] is None]
    if as_json:
        emit_json(items)
        return
    if not items:
        console.print(f"no disagreements of {gap}+ points between annotators")
        return
    print_table(
        [
            {
                "run": i["run_id"],
                "question": i["question_id"],
                "model": i["model"],
                "condition": i["condition"],
                "dimension": i["dimension"],
                "scores": ", ".join(f"{a} {v}" for a, v in i["scores"].items()),
                "spread": i["spread"],
                "adjudicated": i["adjudicated"],
            }
            for i in items
        ],
        f"{len(items)} disagreements of {gap}+ points",
    )


@main.command()
@click.argument("run_id")
@click.option("--accuracy", type=click.IntRange(1, 5))
@click.option("--completeness", type=click.IntRange(1, 5))
@click.option("--relevance", type=click.IntRange(1, 5))
@click.option("--clarity", type=click.IntRange(1, 5))
@click.option("--reason", required=True, help="why: saved as the score's note")
@click.option("--adjudicator", default="adjudicated", show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def adjudicate(obj: Ctx, run_id: str, reason: str, adjudicator: str, as_json: bool, **dims) -> None:
    """Settle a disagreement: the agreed scores of a run, as a new human score version."""
    from fintrade_tui.stats.annotators import adjudicate as save
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.run_records import RunStore

    values = {d: v for d, v in dims.items() if v is not None}
    with open_workspace(obj.cfg.workspace) as ws:
        run = RunStore(ws).get(run_id)
        row = save(ws, run["id"], values, reason, adjudicator)
    out = {k: row[k] for k in ("id", "run_id", "annotator", "version", "created_at", "note")}
    if as_json:
        emit_json(out)
    else:
        console.print(
            f"saved adjudication v{row['version']} of run {row['run_id']} by {row['annotator']}",
            highlight=False,
        )
