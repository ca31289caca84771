"""CLI command `pull` (needs internet): SEC EDGAR filings and Yahoo prices into a bundle folder."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main, parse_day
from fintrade_tui.cli.output import console
from fintrade_tui.config import Config
from fintrade_tui.ingest.http import Fetcher, HttpFetcher
from fintrade_tui.ingest.pull import PullResult, pull


def make_fetcher(cfg: Config) -> Fetcher:
    """The network client; tests replace this function with one returning a fake."""
    return HttpFetcher(cfg.pull.user_agent, cfg.pull.requests_per_second)


def _summary(result: PullResult) -> None:
    t = Table(title=f"pull into {result.out}")
    for c in ("ticker", "kind", "written", "skipped"):
        t.add_column(c)
    counts: dict[tuple[str, str], list[int]] = {}
    for f in result.files:
        n = counts.setdefault((f.ticker, f.kind), [0, 0])
        n[0 if f.status == "written" else 1] += 1
    for (ticker, kind), (w, s) in counts.items():
        t.add_row(ticker, kind, str(w), str(s))
    console.print(t)
    for f in result.written:
        console.print(f"[green]wrote[/] {f.path}", soft_wrap=True)
    for note in result.notes:
        console.print(f"[yellow]note[/] {note}", soft_wrap=True)
    console.print(
        f"{len(result.written)} file(s) written, {len(result.skipped)} skipped (already there; "
        f"--force fetches again). Next: `fintrade-tui --bundle {result.out} ingest` (sector and "
        "index-membership tables come from a full bundle's reference/ folder)",
        soft_wrap=True,
    )


@main.command(name="pull")
@click.option("--ticker", "-t", "tickers", multiple=True, required=True, help="repeatable")
@click.option("--out", "out", type=click.Path(path_type=Path), help="bundle folder to write")
@click.option("--since", help="YYYY-MM-DD: filings filed and prices from that day on")
@click.option("--no-prices", is_flag=True, help="filings only")
@click.option("--no-filings", is_flag=True, help="prices only")
@click.option("--force", is_flag=True, help="fetch again and overwrite existing files")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def pull_cmd(
    obj: Ctx,
    tickers: tuple[str, ...],
    out: Path | None,
    since: str | None,
    no_prices: bool,
    no_filings: bool,
    force: bool,
    as_json: bool,
) -> None:
    """(internet) Fetch 10-K/10-Q filings from SEC EDGAR and daily prices into a bundle."""
    since_day = parse_day(since, "--since")
    cfg = obj.cfg
    # never the configured bundle: that one may be the shared read-only sample
    target = (out or cfg.store.parent / "bundle").expanduser().resolve()

    def run(progress):
        return pull(
            make_fetcher(cfg),
            target,
            list(tickers),
            since=since_day,
            filings=not no_filings,
            prices=not no_prices,
            force=force,
            progress=progress,
        )

    if as_json:
        result = run(None)
    else:
        with Console(stderr=True).status("pulling") as status:
            result = run(lambda msg: status.update(f"pulling {msg}"))
    if as_json:
        emit_json(
            {
                "out": str(result.out),
                "written": [str(f.path) for f in result.written],
                "skipped": [str(f.path) for f in result.skipped],
                "files": [f.__dict__ | {"path": str(f.path)} for f in result.files],
                "notes": result.notes,
            }
        )
    else:
        _summary(result)
