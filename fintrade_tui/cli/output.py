"""What the CLI prints: the shared console, tables of rows, and progress bars on stderr."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

console = Console()


def fmt(v: Any) -> str:
    """A cell: numbers to four decimals (large ones whole), None as a dash."""
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.4f}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def print_table(rows: list[dict], title: str, columns: list[str] | None = None) -> None:
    """Rows of dicts as a Rich table on stdout (`columns` picks and orders them)."""
    columns = columns or (list(rows[0]) if rows else [])
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for k, c in enumerate(columns):
        # only the last column may wrap: dates and numbers stay on one line in narrow terminals
        t.add_column(c, no_wrap=k < len(columns) - 1, overflow="fold")
    for r in rows:
        # cells hold ids, names and text from benchmark files: Text, so "[...]" is not markup
        t.add_row(*(Text(fmt(r.get(c))) for c in columns))
    console.print(t)


class _RichReporter:
    def __init__(self, progress) -> None:
        self.progress = progress

    def start(self, label: str, total: int | None):
        task = self.progress.add_task(label, total=total)
        return lambda n=1: self.progress.advance(task, n)


@contextlib.contextmanager
def progress_bars(quiet: bool) -> Iterator[_RichReporter]:
    """Rich progress bars on stderr (off for --json and when stderr is not a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    err = Console(stderr=True)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=quiet or not err.is_terminal,
    ) as progress:
        yield _RichReporter(progress)
