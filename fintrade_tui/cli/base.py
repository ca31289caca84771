"""CLI room: the `fintrade-tui` click group (`main`) and the helpers its commands share
(`friendly`, `emit_json`, `parse_day`, `Ctx`). The command modules import these from here and
the package's __init__ imports the command modules, so nothing imports round a cycle."""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, overload

import click

from fintrade_tui.config import Config, load_config
from fintrade_tui.errors import UserError


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def friendly(fn: Callable) -> Callable:
    """Turn UserError (and a bad config) into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except UserError as exc:
            _fail(str(exc))

    return wrapper


def _jsonable(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, date | datetime):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(_jsonable(obj), indent=2))


@overload
def parse_day(value: str, name: str) -> date: ...
@overload
def parse_day(value: str | None, name: str) -> date | None: ...
def parse_day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise UserError(f"{name} {value!r}", "is not a date", "use YYYY-MM-DD") from None


class Ctx:
    def __init__(self, config: str | None, bundle: str | None) -> None:
        # --config and --bundle as given (None when not): the config is loaded on first use
        self.given_config, self.given_bundle = config, bundle
        self._cfg: Config | None = None

    @property
    def cfg(self) -> Config:
        if self._cfg is None:
            from fintrade_tui.workspace.sharing import set_wait

            self._cfg = load_config(self.given_config, self.given_bundle)
            set_wait(self._cfg.workspace_wait)
        return self._cfg

    def connect(self):
        from fintrade_tui.store.db import connect

        return connect(self.cfg.store, read_only=True)


class OneLineGroup(click.Group):
    """The top-level group: a usage error (unknown option, a value out of range, a missing
    argument) is one line naming the flag and the fix, like every other bad input, instead of
    click's usage block. Subcommands parse inside `invoke`, so one wrapper covers them all."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            _usage_fail(exc)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            _usage_fail(exc)
            raise


def _usage_fail(exc: click.UsageError) -> None:
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        return  # a bare group prints its help, as before
    path = exc.ctx.command_path if exc.ctx else "fintrade-tui"
    problem = " ".join(exc.format_message().split()).rstrip(".")
    _fail(f"{path}: {problem} (fix: see `{path} --help`)")


@click.group(cls=OneLineGroup, invoke_without_command=True)
@click.option("--config", "config", envvar="FINTRADE_CONFIG", help="config.yaml to use")
@click.option(
    "--bundle", "bundle", help="data bundle folder (overrides config and FINTRADE_BUNDLE)"
)
@click.pass_context
def main(ctx: click.Context, config: str | None, bundle: str | None) -> None:
    """fintrade-tui: explore financial-reasoning benchmarks on a point-in-time store.

    Without a command it opens the explorer, as `fintrade-tui tui` does."""
    ctx.obj = Ctx(config, bundle)
    if ctx.invoked_subcommand is None:
        tui = main.get_command(ctx, "tui")  # registered by cli/tui.py
        assert tui is not None  # the package's __init__ imports cli/tui.py
        ctx.invoke(tui)  # the options' defaults, as `tui` alone gets them
