"""CLI commands of the item audit (Core403 -> Core400): `questions audit`, `audit-report`,
`audit-export`, added to the `questions` group."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly
from fintrade_tui.cli.output import console, print_table
from fintrade_tui.cli.questions import questions
from fintrade_tui.workspace.audits import CRITERIA


def _criterion_options(fn):
    for c in reversed(CRITERIA):
        fn = click.option(
            f"--{c}",
            c,
            help=f"{' | '.join(CRITERIA[c])} (default: your previous value)",
        )(fn)
    return fn


def _pct(p: float | None) -> str | None:
    return None if p is None else f"{p:.1f}%"


@questions.command("audit")
@click.argument("qid")
@_criterion_options
@click.option("--annotator", default="analyst", show_default=True)
@click.option("--note", help="free text; omitted keeps your previous note, '' clears it")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def audit(obj: Ctx, qid: str, annotator: str, note: str | None, as_json: bool, **values) -> None:
    """Audit one benchmark item on five criteria (a new version; the old ones stay)."""
    from fintrade_tui.questions.item_audit import audit_record
    from fintrade_tui.workspace.audits import ItemAuditStore
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace) as ws:
        row = ItemAuditStore(ws).save(qid, annotator, note, **values)
    rec = {"question_id": qid} | audit_record(row)
    if as_json:
        emit_json(rec)
        return
    verdict = (
        "[green]Core[/]"
        if rec["core"]
        else "[red]fails[/] " + escape(", ".join(f"{c}={v}" for c, v in rec["failed"].items()))
    )
    console.print(
        f"audited {escape(qid)} v{rec['version']} by {escape(annotator)}: {verdict}",
        soft_wrap=True,
    )


@questions.command("audit-report")
@click.option("--failing", "only_failing", is_flag=True, help="the items failing any criterion")
@click.option("--annotator", help="only this annotator's latest audits")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def audit_report(obj: Ctx, only_failing: bool, annotator: str | None, as_json: bool) -> None:
    """Pass rates of the item audit per criterion and overall (Core = passes all five)."""
    from fintrade_tui.questions.item_audit import failing, pass_rates
    from fintrade_tui.workspace.audits import ItemAuditStore
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import question_ids

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        audits = ItemAuditStore(ws, read_only=True).latest(annotator)
        n_questions = len(question_ids(ws))
    if only_failing:
        rows = failing(audits)
        if as_json:
            emit_json(rows)
            return
        print_table(
            [
                {
                    "question": r["question_id"],
                    "annotator": r["annotator"],
                    "version": r["version"],
                    "fails": ", ".join(f"{c}={v}" for c, v in r["failed"].items()),
                }
                for r in rows
            ],
            f"{len(rows)} items failing the audit",
            ["question", "annotator", "version", "fails"],
        )
        return
    rep = pass_rates(audits, n_questions) | {"annotator": annotator}
    if as_json:
        emit_json(rep)
        return
    rows = [
        {
            "criterion": c,
            "audited": r["audited"],
            "passing": r["passing"],
            "%": _pct(r["pct"]),
            "counts": "  ".join(f"{v} {n}" for v, n in r["counts"].items()),
        }
        for c, r in rep["criteria"].items()
    ]
    rows.append(
        {
            "criterion": "all five (Core)",
            "audited": rep["audited"],
            "passing": rep["passing"],
            "%": _pct(rep["pct"]),
        }
    )
    print_table(rows, f"item audit: {rep['audited']} of {n_questions} questions audited")


@questions.command("audit-export")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--core-only/--all", default=True, help="Core items only (default) or all audited")
@click.option("--annotator", help="only this annotator's latest audits")
@click.pass_obj
@friendly
def audit_export(obj: Ctx, path: Path, core_only: bool, annotator: str | None) -> None:
    """Write the audited Core set (or every audited item) as JSONL with each item's audit."""
    from fintrade_tui.questions.item_audit import export_jsonl
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        n = export_jsonl(ws, path, core_only, annotator)
    console.print(f"wrote {n} {'Core' if core_only else 'audited'} questions to {path}")
