"""CLI commands `export html` and `export markdown`: case studies and view reports to share
outside the terminal (exports/html_report.py, exports/html_view.py, exports/case_study.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.errors import UserError


@main.group()
def export() -> None:
    """Case studies and view reports as files: self-contained HTML or Markdown."""


def _case_runs(ws: Any, run_ids: tuple[str, ...], question: str | None) -> list[str]:
    from fintrade_tui.exports.case_data import runs_of_question

    if run_ids and question:
        raise UserError("RUN_ID and --question", "both name the case", "give one of them")
    if question:
        return runs_of_question(ws, question)
    if not run_ids:
        raise UserError("export", "names no case", "give RUN_ID..., --question QID or --view")
    return list(run_ids)


@export.command("html")
@click.argument("run_ids", nargs=-1)
@click.option("--question", "-q", help="the case: every run of this question")
@click.option("--view", is_flag=True, help="a view report: accuracy matrix and failure cases")
@click.option(
    "--filter",
    "filters",
    multiple=True,
    help="(--view) failure filters to list (default all); repeat for several",
)
@click.option("--source", help="(--view) one question set")
@click.option(
    "--scores",
    type=click.Choice(["llm", "human", "labels", "match"]),
    default="llm",
    show_default=True,
)
@click.option("--baseline", default="no_rag", show_default=True, help="(--view) Δ against")
@click.option("--resamples", type=int, default=10000, help="(--view) bootstrap resamples")
@click.option(
    "--screenshots/--no-screenshots",
    default=True,
    show_default=True,
    help="embed the Arena and Company screens (a case)",
)
@click.option("--out", "-o", type=click.Path(path_type=Path), help="the file to write")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def export_html(
    obj: Ctx,
    run_ids: tuple[str, ...],
    question: str | None,
    view: bool,
    filters: tuple[str, ...],
    source: str | None,
    scores: str,
    baseline: str,
    resamples: int,
    screenshots: bool,
    out: Path | None,
    as_json: bool,
) -> None:
    """Write a case study (RUN_ID... or --question) or a view report (--view) as one
    self-contained HTML file: styles and charts inline, nothing fetched when it is opened."""
    from fintrade_tui.workspace.connection import open_workspace

    cfg = obj.cfg
    with obj.connect() as store, open_workspace(cfg.workspace) as ws:
        if view:
            if run_ids or question:
                raise UserError("--view", "takes no RUN_ID or --question", "drop one of them")
            path, n = _write_view(cfg, ws, store, filters, source, scores, baseline, resamples, out)
            info = {"path": str(path), "kind": "view", "cases": n}
        else:
            from fintrade_tui.exports.html_report import write_case_html

            ids = _case_runs(ws, run_ids, question)
            shots = None
            if screenshots:
                from fintrade_tui.ui.case_shots import case_screenshots

                shots = case_screenshots(cfg, store, ws, ids)
            path = write_case_html(cfg, ws, ids, out, store_con=store, screenshots=shots)
            info = {"path": str(path), "kind": "case", "runs": len(ids)}
    if as_json:
        emit_json(info)
    else:
        click.echo(str(path))


def _write_view(
    cfg: Any,
    ws: Any,
    store: Any,
    filters: tuple[str, ...],
    source: str | None,
    scores: str,
    baseline: str,
    resamples: int,
    out: Path | None,
) -> tuple[Path, int]:
    from fintrade_tui.exports.html_view import write_view_html
    from fintrade_tui.reports.accuracy import accuracy_report
    from fintrade_tui.reports.failures import FILTERS, failure_cases

    bad = [f for f in filters if f not in FILTERS]
    if bad:
        raise UserError(f"--filter {bad[0]}", "is unknown", f"use one of {', '.join(FILTERS)}")
    _, table = accuracy_report(ws, scores, source, baseline, resamples)
    cases = failure_cases(
        ws, set(filters) if filters else None, cfg.judging.disagreement, cfg.models
    )
    if source:
        from fintrade_tui.workspace.questions import load_questions

        keep = {q.id for q in load_questions(ws) if q.source == source}
        cases = [c for c in cases if c["question_id"] in keep]
    what = f"{scores} scores" + (f", {source}" if source else "")
    what += f"; cases: {', '.join(filters) if filters else 'every filter'}"
    path = write_view_html(cfg, ws, cases, table, out, store_con=store, subtitle=what)
    return path, len(cases)


@export.command("markdown")
@click.argument("run_ids", nargs=-1)
@click.option("--question", "-q", help="the case: every run of this question")
@click.option("--out", "-o", type=click.Path(path_type=Path), help="the file to write")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def export_markdown(
    obj: Ctx, run_ids: tuple[str, ...], question: str | None, out: Path | None, as_json: bool
) -> None:
    """Write a case study (RUN_ID... or --question) as Markdown, as `x` on Results does."""
    from fintrade_tui.exports.case_study import write_case_study
    from fintrade_tui.workspace.connection import open_workspace

    with open_workspace(obj.cfg.workspace) as ws:
        ids = _case_runs(ws, run_ids, question)
        path = write_case_study(obj.cfg, ws, ids, out)
    if as_json:
        emit_json({"path": str(path), "kind": "case", "runs": len(ids)})
    else:
        click.echo(str(path))
