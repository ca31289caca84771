"""CLI commands of the question bank: import, list, show, export, scale, finar, refresh."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from pathlib import Path

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table
from fintrade_tui.workspace.questions import Question

IMPORTED = ("fintradebench", "jsonl", "secque", "finar")  # sources resolved from their text


@main.group()
def questions() -> None:
    """The question bank: import benchmark files, resolve, scale, export."""


def resolver(obj: Ctx, con):
    from fintrade_tui.questions.resolve import Resolver

    return Resolver(con, obj.cfg.questions.reference_date, obj.cfg.fundamentals.estimated_lag_days)


def _resolve_all(obj: Ctx, items: list[Question]) -> list[Question]:
    with obj.connect() as con:
        r = resolver(obj, con)
        return [r.evidence(r.resolve(q)) for q in items]


def _report(items: list[Question]) -> dict:
    status = Counter(q.status for q in items)
    coverage = Counter(q.coverage for q in items if q.status == "resolved")
    unmapped = sorted({r for q in items for r in q.reasons if r.startswith("indicator ")})
    return {
        "questions": len(items),
        "resolved": status.get("resolved", 0),
        "unresolved": [{"id": q.id, "reasons": q.reasons} for q in items if q.status != "resolved"],
        "coverage": dict(coverage),
        "unmapped_indicators": unmapped,
    }


def _print_report(rep: dict, title: str) -> None:
    print_table(
        [
            {"": "questions", "value": rep["questions"]},
            {"": "resolved (tickers + as_of)", "value": rep["resolved"]},
            *({"": f"coverage {k}", "value": v} for k, v in sorted(rep["coverage"].items())),
            *(
                [{"": "reference runs added", "value": rep["reference_runs"]}]
                if "reference_runs" in rep
                else []
            ),
        ],
        title,
    )
    for u in rep["unresolved"]:
        console.print(
            f"[yellow]unresolved[/] {escape(u['id'])}: {escape('; '.join(u['reasons']))}",
            soft_wrap=True,
        )
    for u in rep["unmapped_indicators"]:
        console.print(f"[yellow]unmapped[/] {escape(u)}")


@questions.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["fintradebench", "jsonl", "secque", "finar", "finqa", "convfinqa", "tatqa"]),
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def import_(obj: Ctx, path: Path, fmt: str | None, as_json: bool) -> None:
    """Import a question file (format detected unless --format), resolve it, store it."""
    from fintrade_tui.imports.reference import save_questions_with_references
    from fintrade_tui.questions.importers import read_questions
    from fintrade_tui.workspace.connection import open_workspace

    items = _resolve_all(obj, read_questions(path, fmt))  # all parsed before anything is written
    with open_workspace(obj.cfg.workspace) as ws:
        refs = save_questions_with_references(ws, items, path)
    rep = _report(items) | {"reference_runs": refs.added if refs else 0}
    emit_json(rep) if as_json else _print_report(rep, f"imported {path.name}")


@questions.command("list")
@click.option("--category")
@click.option("--ticker")
@click.option(
    "--status",
    type=click.Choice(["resolved", "unresolved", "full", "partial", "none"]),
    help="resolution status, or coverage (full, partial, none)",
)
@click.option("--source")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def list_(obj: Ctx, category, ticker, status, source, as_json: bool) -> None:
    """Questions in the workspace, filtered."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import load_questions

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        items = load_questions(ws, category, ticker and ticker.upper(), status, source)
    rows = [
        {
            "id": q.id,
            "cat": q.category[:8],
            "tickers": ",".join(q.tickers[:4]) + ("…" if len(q.tickers) > 4 else ""),
            "as_of": q.as_of,
            "status": "ok" if q.status == "resolved" else "open",
            "coverage": q.coverage,
            "text": q.text[:70],
        }
        for q in items
    ]
    if as_json:
        emit_json([asdict(q) | {"oracle": None} for q in items])
    else:
        print_table(rows, f"{len(rows)} questions")


@questions.command()
@click.argument("qid")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def show(obj: Ctx, qid: str, as_json: bool) -> None:
    """One question: resolution, golden indicators, oracle evidence, reference answer."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import get_question

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        q = get_question(ws, qid)
    if as_json:
        emit_json(asdict(q))
        return
    console.print(
        f"[bold]{escape(q.id)}[/] {escape(f'({q.category}, {q.source}) {q.text}')}", soft_wrap=True
    )
    console.print(
        f"tickers {', '.join(q.tickers) or '—'} | as of {q.as_of} | window {q.window_start} → "
        f"{q.window_end} | {q.status}, coverage {q.coverage}"
    )
    basis = q.extra.get("as_of_basis")
    if basis:
        console.print(
            f"as of from {basis['kind']}: {escape(basis.get('detail', ''))}", soft_wrap=True
        )
    for r in q.reasons + q.coverage_missing:
        console.print(f"  - {escape(r)}", soft_wrap=True)
    rows = [
        {
            "ticker": t,
            "indicator": n,
            "value": ev["value"],
            "source": ev["source"],
            "period/date": ev.get("fiscal_period")
            and f"FY{ev['fiscal_year']} {ev['fiscal_period']}"
            or ev.get("date"),
            "available": ev.get("available_from"),
            "accession": ev.get("accession"),
        }
        for t, items in q.oracle.items()
        for n, ev in items.items()
    ]
    if rows:
        print_table(rows, "oracle evidence")
    if q.reference_answer:
        console.print(q.reference_answer[:1500], soft_wrap=True)


@questions.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--source")
@click.pass_obj
@friendly
def export(obj: Ctx, path: Path, source: str | None) -> None:
    """Write the workspace's questions as JSONL (the format `questions import` reads back)."""
    from fintrade_tui.questions.importers import write_jsonl
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import load_questions

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        items = load_questions(ws, source=source)
    write_jsonl(items, path)
    console.print(f"wrote {len(items)} questions to {path}")


@questions.command()
@click.option("--per-seed", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option("--seed", "rng_seed", type=int, help="random seed (default: questions.scale_seed)")
@click.option("--source", default="fintradebench", show_default=True, help="which seeds")
@click.option("--from", "first", default="2024-03-31", show_default=True, help="earliest as_of")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def scale(
    obj: Ctx, per_seed: int, rng_seed: int | None, source: str, first: str, as_json: bool
) -> None:
    """Deterministic variants of each seed over other companies and quarters, screened."""
    from fintrade_tui.cli.base import parse_day
    from fintrade_tui.questions.scale import Screened, scale_seed
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import load_questions, save_questions

    seed = obj.cfg.questions.scale_seed if rng_seed is None else rng_seed
    with open_workspace(obj.cfg.workspace) as ws:
        seeds = load_questions(ws, source=source)
        with obj.connect() as con:
            r = resolver(obj, con)
            made: list[Question] = []
            screened: list[Screened] = []
            for s in seeds:
                v, x = scale_seed(r, s, per_seed, seed, parse_day(first, "--from"))
                made += v
                screened += x
        ws.execute("DELETE FROM questions WHERE source = 'scaled'")  # deterministic: replace
        save_questions(ws, made)
    data = {
        "seeds": len(seeds),
        "variants": len(made),
        "screened_out": [asdict(s) for s in screened],
    }
    if as_json:
        emit_json(data)
        return
    for out in screened:
        console.print(
            f"[yellow]screened[/] {out.seed_id} {','.join(out.tickers)} {out.as_of or ''}:"
            f" {out.reason}",
            soft_wrap=True,
        )
    console.print(f"{len(made)} variants from {len(seeds)} seeds; {len(screened)} screened out")


@questions.command()
@click.argument("ticker")
@click.option("--fiscal-year", type=int, required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def finar(obj: Ctx, ticker: str, fiscal_year: int, as_json: bool) -> None:
    """FinAR-style tasks (extraction, indicators, reasoning) from a company's 10-K facts."""
    from fintrade_tui.questions.finar import finar_tasks
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import save_questions

    with obj.connect() as con:
        items = finar_tasks(con, ticker.upper(), fiscal_year)
    with open_workspace(obj.cfg.workspace) as ws:
        save_questions(ws, items)
    if as_json:
        emit_json([asdict(q) for q in items])
    else:
        print_table(
            [
                {"id": q.id, "task": q.text[:60], "truth": (q.reference_answer or "")[:40]}
                for q in items
            ],
            "FinAR tasks",
        )


@questions.command()
@click.pass_obj
@friendly
def refresh(obj: Ctx) -> None:
    """Resolve every stored question again (after a new ingest or a new reference date)."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import load_questions, save_questions

    with open_workspace(obj.cfg.workspace) as ws:
        imported = [q for q in load_questions(ws) if q.source in IMPORTED]
        items = _resolve_all(obj, imported)
        save_questions(ws, items)
    _print_report(_report(items), "re-resolved")
