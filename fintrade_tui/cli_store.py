"""CLI commands over the store: ingest, snapshot, signals, facts, fundamentals."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.table import Table

from fintrade_tui.cli import Ctx, emit_json, friendly, main, parse_day

console = Console()


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:,.4f}" if abs(v) < 1e6 else f"{v:,.0f}"
    return str(v)


def _table(rows: list[dict], title: str, columns: list[str] | None = None) -> None:
    columns = columns or (list(rows[0]) if rows else [])
    t = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for k, c in enumerate(columns):
        # only the last column may wrap: dates and numbers stay on one line in narrow terminals
        t.add_column(c, no_wrap=k < len(columns) - 1, overflow="fold")
    for r in rows:
        t.add_row(*(_fmt(r.get(c)) for c in columns))
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


@main.command()
@click.option("--strict", is_flag=True, help="fail (exit 2) instead of quarantining a price file")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def ingest(obj: Ctx, strict: bool, as_json: bool) -> None:
    """Build the store from the bundle (atomic: a failure keeps the previous store)."""
    from fintrade_tui.ingest.pipeline import run_ingest

    cfg = obj.cfg
    with progress_bars(as_json) as reporter:
        s = run_ingest(cfg, reporter, strict=strict)
    data = {
        "store": str(cfg.store),
        "bundle": str(cfg.bundle),
        "tickers": s.tickers,
        "price_rows": s.price_rows,
        "series_rows": s.series_rows,
        "filings": s.filings,
        "facts": s.facts,
        "fundamentals_rows": s.fundamentals,
        "signal_rows": s.signals,
        "quarantined": [q.__dict__ for q in s.quarantined],
    }
    if as_json:
        emit_json(data)
        return
    for q in s.quarantined:
        console.print(f"[yellow]quarantined[/] {q.file}: {q.reason}")
    data["quarantined"] = len(s.quarantined)
    _table([{"": k, "value": v} for k, v in data.items()], "ingest summary")


@main.command()
@click.argument("ticker")
@click.option("--as-of", "as_of", required=True, help="YYYY-MM-DD; after that day's close")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def snapshot(obj: Ctx, ticker: str, as_of: str, as_json: bool) -> None:
    """Prices, signals and fundamentals of TICKER as known after the close of --as-of."""
    from fintrade_tui.store.queries import snapshot as snap

    with obj.connect() as con:
        s = snap(con, ticker, parse_day(as_of, "--as-of"))
    if as_json:
        emit_json(s)
        return
    console.print(
        f"[bold]{s['ticker']}[/] as of {s['as_of']}: close {_fmt(s['close'])} "
        f"(adj {_fmt(s['adj_close'])}) on {s['price_date']} from {s['price_source']}"
    )
    _table([{"signal": k, "value": v} for k, v in s["signals"].items()], "signals")
    rows = [
        {
            "ratio": k,
            "period": f"FY{v['fiscal_year']} {v['fiscal_period']}" if v["fiscal_year"] else None,
        }
        | v
        for k, v in s["fundamentals"].items()
        if v
    ]
    missing = [k for k, v in s["fundamentals"].items() if not v]
    cols = ["ratio", "value", "period", "filed", "source", "accession"]
    _table(rows, "fundamentals (filing-derived first; vendor sources fill gaps)", cols)
    if missing:
        console.print(f"no source has: {', '.join(missing)}")


@main.command()
@click.argument("ticker")
@click.option("--from", "start", help="YYYY-MM-DD")
@click.option("--to", "end", help="YYYY-MM-DD")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def signals(obj: Ctx, ticker: str, start: str | None, end: str | None, as_json: bool) -> None:
    """Daily trading signals of TICKER."""
    from fintrade_tui.store.queries import signals_between

    with obj.connect() as con:
        rows = signals_between(con, ticker, parse_day(start, "--from"), parse_day(end, "--to"))
    emit_json(rows) if as_json else _table(rows, f"{ticker.upper()} signals")


@main.command()
@click.argument("ticker")
@click.option("--concept", required=True, help="XBRL concept, e.g. NetIncomeLoss or us-gaap:Assets")
@click.option("--dimensional", is_flag=True, help="include dimensional (segment) facts")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def facts(obj: Ctx, ticker: str, concept: str, dimensional: bool, as_json: bool) -> None:
    """XBRL facts of TICKER for one concept, with their filing."""
    from fintrade_tui.store.queries import facts_for

    with obj.connect() as con:
        rows = facts_for(con, ticker, concept, dimensional)
    emit_json(rows) if as_json else _table(rows, f"{ticker.upper()} {concept}")


@main.command()
@click.argument("ticker")
@click.option("--source", help="filing, fintradebench_precomputed or polygon")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def fundamentals(obj: Ctx, ticker: str, source: str | None, as_json: bool) -> None:
    """Fundamental ratios of TICKER per fiscal period and source, with provenance."""
    from fintrade_tui.store.queries import fundamentals_for

    with obj.connect() as con:
        rows = fundamentals_for(con, ticker, source)
    if as_json:
        emit_json(rows)
    else:
        _table(
            rows,
            f"{ticker.upper()} fundamentals",
            [
                "fiscal_year",
                "fiscal_period",
                "period_end",
                "ratio",
                "value",
                "source",
                "available_from",
                "estimated",
                "accession",
            ],
        )
