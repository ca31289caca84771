"""CLI room of the analyst's own questions: `questions add` (a question typed by the analyst,
tickers and as-of given) and `questions variant` (a stored question asked of another ticker
and/or quarter). Each prints the new id (or its record with --json); `ask` and `run` then take
that id like any other. Checked and resolved before anything is written; one transaction."""

from __future__ import annotations

from dataclasses import asdict
from datetime import date

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, parse_day
from fintrade_tui.cli.output import console
from fintrade_tui.cli.questions import questions, resolver
from fintrade_tui.workspace.questions import Question


def _print(q: Question, version: int, as_json: bool) -> None:
    if as_json:
        emit_json(asdict(q) | {"version": version})
        return
    click.echo(q.id)
    seed = f", a variant of {q.parent_id}" if q.parent_id else ""
    console.print(
        escape(
            f"{q.text} ({', '.join(q.tickers)} as of {q.as_of}; golden "
            f"{', '.join(q.golden) or '—'}; coverage {q.coverage}{seed}; version {version})"
        ),
        soft_wrap=True,
        style="dim",
    )


@questions.command()
@click.argument("text")
@click.option("--ticker", "tickers", required=True, help="ticker(s), comma-separated or repeated",
              multiple=True)  # fmt: skip
@click.option("--as-of", "as_of", help="YYYY-MM-DD (default: the latest quarter's filing day)")
@click.option("--indicators", help="golden indicators, comma-separated (default: read from TEXT)")
@click.option("--reference", help="a reference answer (optional)")
@click.option("--id", "qid", help="an existing own question's id: append a new version of it")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def add(
    obj: Ctx,
    text: str,
    tickers: tuple[str, ...],
    as_of: str | None,
    indicators: str | None,
    reference: str | None,
    qid: str | None,
    as_json: bool,
) -> None:
    """The analyst's own question about TICKER(s) at an as-of, resolved and stored (own)."""
    from fintrade_tui.cli.runs import ready_workspace
    from fintrade_tui.errors import UserError
    from fintrade_tui.questions.own import (
        PREFIX,
        default_as_of,
        next_id,
        own_question,
        split_indicators,
        split_list,
        suggest_indicators,
    )
    from fintrade_tui.workspace.question_versions import save_version
    from fintrade_tui.workspace.questions import get_question, question_ids

    names = split_list(",".join(tickers))
    day = parse_day(as_of, "--as-of")
    golden = split_indicators(indicators) if indicators is not None else suggest_indicators(text)
    with ready_workspace(obj, as_json) as ws:
        if qid and (not qid.startswith(PREFIX) or qid not in question_ids(ws)):
            raise UserError(f"--id {qid}", "is not one of the analyst's questions", "omit --id")
        if qid and get_question(ws, qid).parent_id:
            raise UserError(f"--id {qid}", "is a variant", "ask `questions variant` again")
        with obj.connect() as con:
            r = resolver(obj, con)
            if day is None and names:
                day = default_as_of(con, names[0], obj.cfg.fundamentals.estimated_lag_days)
            q = own_question(
                r, qid or next_id(ws), text, names, day, golden, reference, date.today()
            )
        version = save_version(ws, q)
    _print(q, version, as_json)


@questions.command()
@click.argument("question_id")
@click.option("--ticker", "tickers", help="the other ticker(s), comma-separated (default: same)")
@click.option("--as-of", "as_of", help="YYYY-MM-DD, the other quarter's day (default: same)")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def variant(
    obj: Ctx, question_id: str, tickers: str | None, as_of: str | None, as_json: bool
) -> None:
    """QUESTION_ID asked of another ticker and/or quarter: a variant of it, no reference."""
    from fintrade_tui.cli.runs import ready_workspace
    from fintrade_tui.errors import UserError
    from fintrade_tui.questions.own import next_id, split_list, variant_of
    from fintrade_tui.workspace.question_versions import save_version
    from fintrade_tui.workspace.questions import get_question

    if not tickers and not as_of:
        raise UserError("questions variant", "needs --ticker or --as-of", "give one or both")
    day = parse_day(as_of, "--as-of")
    with ready_workspace(obj, as_json) as ws:
        seed = get_question(ws, question_id)
        with obj.connect() as con:
            q = variant_of(
                resolver(obj, con), seed, next_id(ws), split_list(tickers), day, date.today()
            )
        version = save_version(ws, q)
    _print(q, version, as_json)
