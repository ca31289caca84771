"""CLI command `tui`: the terminal explorer (Textual is imported only here, on demand)."""

from __future__ import annotations

from typing import Any

import click

from fintrade_tui.cli.base import Ctx, friendly, main
from fintrade_tui.errors import UserError


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
    from fintrade_tui.ui.app import FinTradeApp

    cfg = obj.cfg
    prepare(cfg)
    try:
        FinTradeApp(cfg, model, start=screen, index_in_background=index_in_background).run()
    finally:
        from fintrade_tui.retrieval.indexing import stop_all

        stop_all(10.0)  # the filing being embedded is dropped whole; the next start resumes


def prepare(cfg: Any) -> None:
    """What the explorer needs before it opens (`tui`, and `serve` once for every tab): a
    keymap that names real bindings, the store, and on a fresh clone the bundle's seed
    questions in the workspace; progress on stderr."""
    from fintrade_tui.application.readiness import ensure_questions, ensure_store
    from fintrade_tui.workspace.connection import open_workspace

    check_keymap(cfg.ui.keymap, cfg.source_file or "config.yaml")
    say = lambda msg: click.echo(msg, err=True)  # noqa: E731
    ensure_store(cfg, say)
    with open_workspace(cfg.workspace) as ws:
        ensure_questions(cfg, ws, say)


def check_keymap(keymap: dict[str, str], source: object = "config.yaml") -> None:
    """`ui.keymap` against the explorer's bindings: an unknown binding id, or a key another
    binding of the same screen already uses, is one line naming the entry (Textual would
    silently ignore the first and shadow a binding with the second)."""
    if not keymap:
        return
    from fintrade_tui.ui.binding_scopes import binding_scopes

    scopes = binding_scopes()
    where = {i: name for name, ids in scopes.items() for i in ids}
    for bid, keys in keymap.items():
        at = f"{source}: key `ui.keymap.{bid}`"
        if bid not in where:
            near = sorted(i for i in where if i.split(".")[0] == bid.split(".")[0])[:6]
            hint = f"use a binding id such as {', '.join(near)}" if near else "press ? for the ids"
            raise UserError(at, "is not a binding id of the explorer", hint)
        scope = scopes[where[bid]]
        for key in (k.strip() for k in str(keys).split(",")):
            if not key:
                raise UserError(at, f"{keys!r} names an empty key", "write keys like ctrl+x")
            for other, other_keys in scope.items():
                mine = {k.strip() for k in keymap.get(other, other_keys).split(",")}
                if other != bid and key in mine:
                    raise UserError(at, f"{key} is already bound to {other}", "pick a free key")
