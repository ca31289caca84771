"""CLI command `screenshot`: one screen of the explorer drawn headlessly to an SVG file
(Textual's own export, `fintrade_tui.ui.screenshots`; Textual is imported only when it runs)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.errors import UserError


def parse_size(value: str) -> tuple[int, int]:
    """`140x44` -> (140, 44): columns and rows."""
    m = re.fullmatch(r"\s*(\d{1,4})\s*[xX×]\s*(\d{1,4})\s*", value)
    if not m:
        raise UserError(f"--size {value!r}", "is not COLUMNSxROWS", "write it like 140x44")
    return int(m.group(1)), int(m.group(2))


def default_path(store: Path, screen: str, ticker: str | None) -> Path:
    """`<store folder>/exports/screenshot-<screen>[-<ticker>].svg`."""
    tail = f"-{re.sub(r'[^A-Za-z0-9.]+', '_', ticker.strip().upper())}" if ticker else ""
    return store.parent / "exports" / f"screenshot-{screen}{tail}.svg"


@main.command()
@click.argument("screen", metavar="SCREEN")
@click.option("--ticker", "-t", help="the company (company, own_question; a filter on questions)")
@click.option(
    "--quarter",
    help="company, own_question: a quarter key (FY2024 Q4), a period end or 'latest';"
    " questions: a quarter end date. Default: where the screen opens",
)
@click.option("--run", "run_ids", multiple=True, help="arena: a stored run to replay (repeat)")
@click.option("--question", "question_id", help="arena: the question to open; questions: the row")
@click.option("--size", default="140x44", show_default=True, help="COLUMNSxROWS of the screen")
@click.option("--out", "-o", "out", type=click.Path(path_type=Path), help="the SVG file to write")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def screenshot(
    obj: Ctx,
    screen: str,
    ticker: str | None,
    quarter: str | None,
    run_ids: tuple[str, ...],
    question_id: str | None,
    size: str,
    out: Path | None,
    as_json: bool,
) -> None:
    """Draw SCREEN (universe, company, questions, arena, results, own_question) headlessly to
    an SVG. own_question: the form `o` opens on the Company screen of --ticker / --quarter.

    Default file: <store folder>/exports/screenshot-SCREEN[-TICKER].svg."""
    from fintrade_tui.application.readiness import ensure_questions, ensure_store
    from fintrade_tui.ingest.http import write_atomic
    from fintrade_tui.ui.screenshots import screen_args, shoot
    from fintrade_tui.workspace.connection import open_workspace

    cfg = obj.cfg
    # bad options fail before the store is built or the workspace touched
    screen_args(screen, ticker, quarter, list(run_ids), question_id)
    cols_rows = parse_size(size)
    say = lambda msg: click.echo(msg, err=True)  # noqa: E731
    ensure_store(cfg, say)
    with open_workspace(cfg.workspace) as ws:
        ensure_questions(cfg, ws, say)  # a fresh clone: the bundle's seed questions
        svg = shoot(
            cfg,
            screen,
            size=cols_rows,
            ticker=ticker,
            quarter=quarter,
            run_ids=list(run_ids) or None,
            question_id=question_id,
            workspace=ws,  # held open here: DuckDB lets one process write the workspace
        )
    path = out or default_path(cfg.store, screen, ticker)
    write_atomic(path, svg.encode("utf-8"))
    if as_json:
        emit_json({"path": str(path), "screen": screen})
    else:
        click.echo(str(path))
