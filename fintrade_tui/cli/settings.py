"""CLI room of `config`: `config init` writes the annotated default config to the user's config
folder (for an install as a tool), `config path` says which config file a command reads."""

from __future__ import annotations

from pathlib import Path

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main


@main.group("config")
def config_group() -> None:
    """The configuration file: write the user's, or show which one is read."""


@config_group.command("init")
@click.option(
    "--bundle",
    "bundle",
    type=click.Path(file_okay=False, path_type=Path),
    help="the data bundle to write into it (default: $FINTRADE_BUNDLE, else set it later)",
)
@click.option("--force", is_flag=True, help="replace an existing user config")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def config_init(obj: Ctx, bundle: Path | None, force: bool, as_json: bool) -> None:
    """Write the annotated default config to the user's config folder, its data (store,
    workspace, models, index) in the user's data folder."""
    import os

    from fintrade_tui.config_files import user_data, write_user_config

    given = bundle or obj.given_bundle or os.environ.get("FINTRADE_BUNDLE")
    target = write_user_config(Path(given).expanduser().resolve() if given else None, force)
    out = {"config": str(target), "data": str(user_data()), "bundle": str(given) if given else None}
    if as_json:
        emit_json(out)
        return
    click.echo(f"wrote {target}; data goes to {out['data']}")
    if not given:
        click.echo("set `bundle:` in it (or pass --bundle / FINTRADE_BUNDLE) before `ingest`")


@config_group.command("path")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def config_path(obj: Ctx, as_json: bool) -> None:
    """The config file commands read (and where its data paths point)."""
    from fintrade_tui.config_files import locate

    path, base = locate(obj.given_config)
    config = str(path.resolve())
    out: dict[str, str | bool] = {"config": config, "packaged_default": base is not None}
    out["data_base"] = str(base or path.resolve().parent)
    if as_json:
        emit_json(out)
    else:
        click.echo(config + (f" (packaged default; data under {base})" if base else ""))
