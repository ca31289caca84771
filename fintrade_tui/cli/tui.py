"""CLI command `tui`: the terminal explorer (Textual is imported only here, on demand)."""

from __future__ import annotations

import click

from fintrade_tui.cli import Ctx, friendly, main


@main.command()
@click.option("--model", "-m", help="the model the Arena starts with (default runs.default_model)")
@click.option(
    "--screen",
    type=click.Choice(["universe", "questions", "arena", "results"]),
    default="universe",
    show_default=True,
)
@click.option(
    "--index-in-background",
    is_flag=True,
    help="index every filing company for RAG in the background while the explorer is open"
    " (resumes where a previous session stopped)",
)
@click.pass_obj
@friendly
def tui(obj: Ctx, model: str | None, screen: str, index_in_background: bool) -> None:
    """Open the explorer: universe, company dashboard, questions, arena, results."""
    from fintrade_tui.runs.readiness import ensure_questions, ensure_store
    from fintrade_tui.store.workspace import open_workspace
    from fintrade_tui.ui.app import FinTradeApp

    cfg = obj.cfg
    say = lambda msg: click.echo(msg, err=True)  # noqa: E731
    ensure_store(cfg, say)
    with open_workspace(cfg.workspace) as ws:
        ensure_questions(cfg, ws, say)  # a fresh clone: the bundle's seed questions
    try:
        FinTradeApp(cfg, model, start=screen, index_in_background=index_in_background).run()
    finally:
        from fintrade_tui.retrieval.indexing import stop_all

        stop_all(10.0)  # the filing being embedded is dropped whole; the next start resumes
