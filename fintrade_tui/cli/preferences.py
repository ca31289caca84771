"""CLI commands of pairwise preferences: `prefer` (a person's A/B/Tie between two runs,
appended) and `preferences` (their agreement with the LLM judge's pairwise verdicts, per
comparison; `--judge` first judges, in both orders, the pairs that judge has not seen)."""

from __future__ import annotations

import asyncio
from typing import Any

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table, progress_bars

CHOICES = {"a": "A", "b": "B", "tie": "tie"}


@main.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option(
    "--choice",
    type=click.Choice(list(CHOICES), case_sensitive=False),
    required=True,
    help="a: RUN_A is better, b: RUN_B is better, tie",
)
@click.option("--annotator", default="analyst", show_default=True)
@click.option("--note")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def prefer(obj: Ctx, run_a: str, run_b: str, choice: str, annotator, note, as_json) -> None:
    """Record which of two runs of one question is better (appended; the newest counts)."""
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.preferences import Preference, PreferenceStore
    from fintrade_tui.workspace.run_records import RunStore

    with open_workspace(obj.cfg.workspace) as ws:
        runs = RunStore(ws)
        first, second = runs.get(run_a)["id"], runs.get(run_b)["id"]  # prefixes resolved
        pref = Preference(
            first,
            second,
            CHOICES[choice.lower()],
            annotator=annotator,
            note=note,
            blind=False,  # the annotator named the runs
            source="cli",
        )
        row = PreferenceStore(ws).save(pref)
    if as_json:
        emit_json(row)
        return
    what = "tie" if row["winner"] == "tie" else f"{row['winner']} preferred"
    console.print(
        f"saved preference {row['id']} on {row['question_id']}: {what}"
        f" ({row['run_a']} vs {row['run_b']}, by {row['annotator']})",
        highlight=False,
    )


@main.command()
@click.option("--judge", "judge", help="judge the missing pairs with this model first")
@click.option("--annotator", help="only this annotator's preferences")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def preferences(obj: Ctx, judge: str | None, annotator: str | None, as_json: bool) -> None:
    """Agreement of human pairwise preferences with the LLM judge, per comparison."""
    from fintrade_tui.judging.preferences import judge_missing
    from fintrade_tui.stats.preference_agreement import agreement_table
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.preferences import PreferenceStore
    from fintrade_tui.workspace.run_records import RunStore

    cfg = obj.cfg
    name = judge or cfg.judging.model
    failures: list[dict[str, str]] = []
    judged = 0
    with open_workspace(cfg.workspace) as ws:
        store = PreferenceStore(ws)
        prefs = store.latest(annotator)
        if judge:
            from fintrade_tui.models import llm
            from fintrade_tui.models.resolve import resolve

            judge_m = resolve(cfg, name)  # an unknown judge: one line naming models:
            llm.litellm()
            with progress_bars(as_json) as reporter:
                tick = reporter.start(f"pairwise judge {name}", None)
                saved, failures = asyncio.run(
                    judge_missing(cfg, store, ws, judge_m, prefs, lambda: tick(1))
                )
            judged = len(saved)
        verdicts = {k: v["winner"] for k, v in store.verdicts(name).items()}
        runs = RunStore(ws)
        ids = sorted({r for p in prefs for r in (p["run_a"], p["run_b"])})
        info = {rid: _run_info(runs.get(rid)) for rid in ids}
    table = agreement_table(prefs, verdicts, info)
    out: dict[str, Any] = {
        "judge": name,
        "preferences": len(prefs),
        "judged_now": judged,
        "failures": failures,
        **table,
    }
    if as_json:
        emit_json(out)
        return
    shown = [_display(r) for r in [*table["rows"], table["all"]]] if prefs else []
    print_table(shown, f"{len(prefs)} preferences vs pairwise judge {name}")
    if table["all"]["unjudged"]:
        console.print(
            f"{table['all']['unjudged']} preferences have no verdict of {name}:"
            f" `fintrade-tui preferences --judge {name}` judges them",
            highlight=False,
        )
    for f in failures:
        console.print(f"[red]{escape(f['pair'])}[/] judge failure: {escape(f['error'])}")


def _run_info(run: dict[str, Any]) -> dict[str, Any]:
    return {"condition": run.get("condition") or "unspecified", "model": run.get("model") or "?"}


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f}%"


def _display(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": r["model"],
        "comparison": r["comparison"],
        "pairs": r["pairs"],
        "decisive": r["decisive"],
        "strict": _pct(r["strict"]),
        "directional": _pct(r["directional"]),
        "unjudged": r["unjudged"],
    }
