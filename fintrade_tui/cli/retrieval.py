"""CLI commands of retrieval: `index` (build or refresh) and `retrieve` (one query)."""

from __future__ import annotations

from dataclasses import asdict

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main, parse_day
from fintrade_tui.cli.output import console, print_table, progress_bars


@main.command()
@click.option("--ticker", "-t", "tickers", multiple=True, help="only these tickers (repeatable)")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def index(obj: Ctx, tickers: tuple[str, ...], as_json: bool) -> None:
    """Build or refresh the retrieval index (only new or changed chunks are embedded)."""
    from fintrade_tui.retrieval.index import Index

    with obj.connect() as con, progress_bars(as_json) as reporter:
        s = Index(obj.cfg).build(
            con, lambda label, total: reporter.start(label, total), [t.upper() for t in tickers]
        )
    data = asdict(s) | {"index": str(obj.cfg.retrieval.index)}
    if s.chunks_embedded and s.seconds_embedding:
        data["chunks_per_second"] = round(s.chunks_embedded / s.seconds_embedding, 1)
    if as_json:
        emit_json(data)
    else:
        print_table([{"": k, "value": v} for k, v in data.items()], "index summary")


@main.command()
@click.argument("text")
@click.option("--ticker", "-t", "tickers", multiple=True, required=True)
@click.option("--as-of", "as_of", required=True, help="YYYY-MM-DD; after that day's close")
@click.option("--from", "start", help="window start for market data (default: 90 days before)")
@click.option("--k", type=click.IntRange(1, 100), help="passages (default retrieval.k)")
@click.option(
    "--mode", type=click.Choice(["dense", "text", "hybrid", "hybrid_rerank"]), default="hybrid"
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def retrieve(obj: Ctx, text: str, tickers, as_of: str, start, k, mode: str, as_json: bool) -> None:
    """Evidence for TEXT about --ticker, as visible after the close of --as-of."""
    from fintrade_tui.retrieval.search import retrieve as run
    from fintrade_tui.store.queries import check_ticker

    day = parse_day(as_of, "--as-of")
    with obj.connect() as con:
        names = [check_ticker(con, t) for t in tickers]
    first = parse_day(start, "--from")
    items = run(obj.cfg, text, names, day, (first, day) if first else None, k, mode=mode)
    if as_json:
        emit_json(items)
        return
    if not items:
        console.print(f"no evidence for {', '.join(names)} is visible as of {day}")
        return
    for i, r in enumerate(items, 1):
        where = (
            f"{r['form']} filed {r['filed']}, {r['section']}"
            if r["track"] == "filing"
            else f"{r['form']} {r['period']} ({r['start']} to {r['end']})"
        )
        scores = ", ".join(f"{k} {v:.4f}" for k, v in r["scores"].items() if v is not None)
        console.print(f"[bold]#{i}[/] {r['ticker']} {r['track']}: {where} [dim]({scores})[/]")
        console.print("   " + " ".join(r["text"].split())[:400], soft_wrap=True, highlight=False)
