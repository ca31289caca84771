"""CLI command over the store's data-quality findings and source agreement: `quality`."""

from __future__ import annotations

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table


@main.command()
@click.argument("ticker", required=False)
@click.option("--check", "check", help="only this check (stale_carry_forward, scale_error, ...)")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def quality(obj: Ctx, ticker: str | None, check: str | None, as_json: bool) -> None:
    """Every data-quality finding on the vendor series (or one TICKER's), with the rows they
    hit and why, and how often each source agrees with the filings."""
    from fintrade_tui.errors import UserError
    from fintrade_tui.fundamentals.quality import CHECKS
    from fintrade_tui.store.queries import check_ticker, row_dicts

    if check and check not in CHECKS:
        raise UserError(f"--check {check!r}", "is not a check", "use one of " + ", ".join(CHECKS))
    with obj.connect() as con:
        t = check_ticker(con, ticker) if ticker else None
        findings = row_dicts(
            con.execute(
                """SELECT "check", ticker, source, item, period_end, available_date, value,
                       other_source, other_value, reason, file, line
                FROM quality_findings WHERE (? IS NULL OR ticker = ?) AND (? IS NULL OR "check" = ?)
                ORDER BY "check", ticker, period_end, item""",
                [t, t, check, check],
            )
        )
        agreement = row_dicts(
            con.execute(
                "SELECT source, rank, compared, agreed, rate FROM source_rank ORDER BY rank"
            )
        )
    counts = {c: sum(f["check"] == c for f in findings) for c in CHECKS}
    if as_json:
        emit_json({"ticker": t, "counts": counts, "findings": findings, "agreement": agreement})
        return
    print_table(
        [{"check": c, "findings": n} for c, n in counts.items() if not check or c == check],
        f"data-quality findings{' for ' + t if t else ''}",
    )
    for f in findings:
        where = f" ({f['file'].rsplit('/', 1)[-1]} line {f['line']})" if f["file"] else ""
        console.print(
            f"[bold]{f['check']}[/] {f['ticker']} {f['item']} {f['period_end']}: "
            f"{escape(str(f['reason']))}{escape(where)}",
            soft_wrap=True,
        )
    print_table(
        [
            {
                "source": a["source"],
                "rank": a["rank"],
                "agrees with the filings": "—"
                if a["compared"] is None
                else f"{a['agreed']:.0f}/{a['compared']:.0f} ({a['rate']:.1%})",
            }
            for a in agreement
        ],
        "source precedence (snapshots use the lowest rank that has a value)",
    )
