"""CLI commands over the store: ingest, snapshot, signals, facts, fundamentals."""

from __future__ import annotations

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main, parse_day
from fintrade_tui.cli.output import console, fmt, print_table, progress_bars
from fintrade_tui.errors import UserError


@main.command()
@click.option("--strict", is_flag=True, help="fail (exit 2) instead of quarantining a price file")
@click.option(
    "--if-outdated", is_flag=True, help="only when the store is missing or another format"
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def ingest(obj: Ctx, strict: bool, if_outdated: bool, as_json: bool) -> None:
    """Build the store from the bundle (atomic: a failure keeps the previous store)."""
    from fintrade_tui.ingest.pipeline import run_ingest
    from fintrade_tui.store.db import STORE_VERSION, current

    cfg = obj.cfg
    if if_outdated and current(cfg.store):
        console.print(f"{cfg.store} is current (format {STORE_VERSION}): not rebuilt")
        return
    with progress_bars(as_json) as reporter:
        s = run_ingest(cfg, reporter, strict=strict)
    data = {
        "store": str(cfg.store),
        "bundle": str(cfg.bundle),
        "tickers": s.tickers,
        "price_rows": s.price_rows,
        "series_rows": s.series_rows,
        "filings": s.filings,
        "filings_from_cache": s.filings_cached,
        "facts": s.facts,
        "fundamentals_rows": s.fundamentals,
        "signal_rows": s.signals,
        "quarantined": [q.__dict__ for q in s.quarantined],
        "agreement": [
            {k: a[k] for k in ("source", "rank", "compared", "agreed", "rate")} for a in s.agreement
        ],
        "quality_findings": s.findings,
        "fundamentals_coverage": s.coverage,
        "conflicts": s.conflicts,
    }
    if as_json:
        emit_json(data)
        return
    for q in s.quarantined:
        console.print(f"[yellow]quarantined[/] {q.file}: {q.reason}")
    data["quarantined"] = len(s.quarantined)
    skip = ("agreement", "quality_findings", "fundamentals_coverage")
    rows = [{"": k, "value": v} for k, v in data.items() if k not in skip]
    rows += [{"": f"tickers with {k} fundamentals", "value": v} for k, v in s.coverage.items()]
    rows += [{"": f"quality: {k}", "value": v} for k, v in sorted(s.findings.items())]
    print_table(rows, "ingest summary")
    print_table(
        [
            {
                "source": a["source"],
                "rank": a["rank"],
                "agrees with the filings": f"{a['agreed']:.0f}/{a['compared']:.0f} "
                f"({a['rate']:.1%})",
            }
            for a in s.agreement
        ],
        "agreement with the filings (inputs and ratios of the same report)",
    )


@main.command()
@click.argument("ticker")
@click.option("--as-of", "as_of", required=True, help="YYYY-MM-DD; after that day's close")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def snapshot(obj: Ctx, ticker: str, as_of: str, as_json: bool) -> None:
    """Prices, signals and fundamentals of TICKER as known after the close of --as-of."""
    from fintrade_tui.store.queries import snapshot as snap

    day = parse_day(as_of, "--as-of")  # a bad date is named before the store is opened
    with obj.connect() as con:
        s = snap(con, ticker, day)
    if as_json:
        emit_json(s)
        return
    console.print(
        f"[bold]{s['ticker']}[/] as of {s['as_of']}: close {fmt(s['close'])} "
        f"(adj {fmt(s['adj_close'])}) on {s['price_date']} from {s['price_source']}"
    )
    print_table([{"signal": k, "value": v} for k, v in s["signals"].items()], "signals")
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
    print_table(rows, "fundamentals (filing-derived first; vendor sources fill gaps)", cols)
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

    first, last = parse_day(start, "--from"), parse_day(end, "--to")
    if first and last and first > last:
        raise UserError(
            f"--from {start} --to {end}",
            "the window ends before it starts",
            "give a --from on or before --to",
        )
    with obj.connect() as con:
        rows = signals_between(con, ticker, first, last)
    emit_json(rows) if as_json else print_table(rows, f"{ticker.upper()} signals")


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
    emit_json(rows) if as_json else print_table(rows, f"{ticker.upper()} {concept}")


@main.command()
@click.argument("ticker")
@click.option("--source", help="filing, fintradebench_precomputed, sec_pit or polygon")
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
        print_table(
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
