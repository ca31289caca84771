"""CLI commands of judging: `judge` (LLM judge or SECQUE panel over stored runs) and `score`
(a human score, appended); `report` lives in cli/report.py."""

from __future__ import annotations

import asyncio
from typing import Any

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table, progress_bars


@main.command()
@click.option("--runs", "run_ids", help="comma-separated run ids or prefixes (default: all)")
@click.option("--batch", help="only runs of this batch")
@click.option("--panel", is_flag=True, help="the SECQUE panel (N votes 0/1/2) instead")
@click.option("--model", "-m", help="the judge (default judging.model)")
@click.option("--force", is_flag=True, help="judge again runs this judge already scored")
@click.option("--with-reference", is_flag=True, help="also the benchmarks' reference answers")
@click.option("--concurrency", type=click.IntRange(1, 32), default=2)
@click.option(
    "--protocol",
    type=click.Choice(["per_condition", "common"]),
    default="per_condition",
    show_default=True,
    help="judge against each run's own evidence, or the question's common canonical evidence",
)
@click.option(
    "--rescore",
    is_flag=True,
    help="re-apply the answer matcher and the numeric audit to stored or imported runs, "
    "without calling the answering model; appends `match` scores (old versions stay)",
)
@click.option(
    "--mode",
    type=click.Choice(["tolerance", "benchmark", "finqa", "tatqa"]),
    help="with --rescore: the matcher mode (default tolerance, read as a person reads; "
    "benchmark: each question's own rule, FinQA/ConvFinQA finqa, TAT-QA tatqa, else tolerance)",
)
@click.option("--with-llm", is_flag=True, help="with --rescore: also run the LLM judge again")
@click.option(
    "--with-extraction",
    is_flag=True,
    help="with --rescore: where the rules defer, the judge model (-m) reads the answer's"
    " conclusion and the rules decide on it",
)
@click.option(
    "--corrected",
    is_flag=True,
    help="with --rescore: score against disputed references' corrections (the published"
    " verdict kept beside each: `questions dispute`)",
)
@click.option("--source", help="with --rescore: only runs of this question set")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def judge(
    obj: Ctx, run_ids, batch, panel, model, force, with_reference, concurrency, protocol,
    as_json, **rescoring
):  # fmt: skip
    """Score completed runs with the LLM judge (after a numeric audit of each answer), or
    with --rescore re-apply the deterministic checks (answer matcher, audit) to stored or
    imported runs without calling any model (--with-llm: the judge too)."""
    from fintrade_tui.errors import UserError
    from fintrade_tui.judging.session import check_protocol, judge_runs, runs_to_judge
    from fintrade_tui.models.resolve import resolve
    from fintrade_tui.workspace.connection import open_workspace

    cfg = obj.cfg
    ids = [p.strip() for p in run_ids.split(",") if p.strip()] if run_ids else None
    rescore, with_llm = rescoring.pop("rescore"), rescoring["with_llm"]
    if not rescore and (given := [k for k, v in rescoring.items() if v]):
        raise UserError(f"--{given[0].replace('_', '-')}", "is for re-scoring", "add --rescore")
    if rescore and panel and not with_llm:
        raise UserError("--panel", "is an LLM judge", "add --with-llm, or drop --panel")
    name = model or cfg.judging.model
    judge_m = None
    if with_llm or rescoring["with_extraction"] or not rescore:  # a bad judge: one line first
        judge_m = resolve(cfg, name)  # once for the whole command
        check_protocol(protocol, panel)
    if rescore:
        llm = dict(panel=panel, judge=judge_m, concurrency=concurrency, protocol=protocol)
        _rescore(obj, ids, batch, with_reference, as_json, llm, **rescoring)
        return
    kind = "panel" if panel else "llm"
    with open_workspace(cfg.workspace) as ws:
        todo = runs_to_judge(ws, kind, name, ids, batch, force, with_reference, protocol)
        with progress_bars(as_json) as reporter:
            tick = reporter.start(f"{kind} judge {name} ({protocol})", len(todo))
            saved = asyncio.run(
                judge_runs(
                    cfg, ws, todo, panel, judge_m, concurrency, lambda row: tick(1), protocol
                )
            )
    rows = [_judged(r) | {"protocol": r["protocol"]} for r in saved]
    if as_json:
        emit_json(rows)
        return
    title = f"{len(rows)} runs judged by {name}" + (" (panel)" if panel else "")
    print_table(rows, title + f", protocol {protocol}")
    _failures(saved)


def _failures(saved: list[dict[str, Any]]) -> None:
    for r in saved:
        if r["status"] != "ok":
            err = r["detail"].get("error")
            console.print(
                f"[red]{r['run_id']}[/] judge failure: {escape(str(err))}", highlight=False
            )


def _rescore(
    obj: Ctx, ids, batch, with_reference, as_json, llm, mode, with_llm, source, corrected,
    with_extraction
) -> None:  # fmt: skip
    """`judge --rescore`: the matcher and the audit in one transaction, then (--with-llm) the
    judge on the same runs, each of its scores saved as it arrives (as `judge` saves them)."""
    from fintrade_tui.judging import rescore as rs
    from fintrade_tui.workspace.connection import open_workspace

    cfg, judged = obj.cfg, None
    with open_workspace(cfg.workspace) as ws:
        sel = rs.select_runs(ws, ids, batch, source, with_reference)
        with progress_bars(as_json) as reporter:
            tick = reporter.start(f"re-scoring {len(sel.runs)} runs", len(sel.runs))
            reader = llm["judge"] if with_extraction else None
            out = rs.rescore_with_store(cfg, ws, sel, mode, tick, corrected, reader)
        if with_llm:
            with progress_bars(as_json) as reporter:
                tick = reporter.start(f"LLM judge {llm['judge'].name}", len(sel.runs))
                judged = rs.rejudge(cfg, ws, sel, on_done=lambda row: tick(1), **llm)
    summary = out.summary() | {"mode": mode or "tolerance", "llm": rs.judged_summary(judged, llm)}
    if as_json:
        emit_json(summary | {"results": rs.result_rows(out, sel)})
        return
    by_model = rs.accuracy_by_model(out, sel)
    if by_model:
        print_table(by_model, rs.summary_title(summary))
    else:
        console.print(rs.summary_title(summary), highlight=False)
    if summary["no_reference"]:
        console.print(f"{summary['no_reference']} runs have no reference: audited, not scored")
    if summary["against_corrected"]:
        n = summary["against_corrected"]
        console.print(f"{n} runs scored against a corrected reference (the published verdict kept)")
    if judged is not None:
        console.print(f"LLM judge {llm['judge'].name}: {summary['llm']['judged']} runs judged")
        _failures(judged)
    console.print("the matrix: `fintrade-tui report --scores match`", highlight=False)


def _judged(r: dict[str, Any]) -> dict[str, Any]:
    d = r["detail"] or {}
    prf = d.get("golden_prf") or {}
    audit = (d.get("audit") or {}).get("summary") or {}
    return {
        "run": r["run_id"],
        "status": r["status"],
        **{k[:4]: r[k] for k in ("accuracy", "completeness", "relevance", "clarity")},
        "panel": d.get("final"),
        "golden F1": None if prf.get("f1") is None else round(prf["f1"], 2),
        "audit s/c/n": "/".join(
            str(audit.get(k, 0)) for k in ("SUPPORTED", "CONTRADICTED", "NOT_FOUND")
        )
        if audit
        else None,
    }


@main.command()
@click.argument("run_id")
@click.option("--accuracy", type=click.IntRange(1, 5))
@click.option("--completeness", type=click.IntRange(1, 5))
@click.option("--relevance", type=click.IntRange(1, 5))
@click.option("--clarity", type=click.IntRange(1, 5))
@click.option("--prefer", help="another run id this one is compared with, or 'tie'")
@click.option("--worse", is_flag=True, help="with --prefer RUN: that other run is better")
@click.option("--note")
@click.option("--annotator", default="analyst", show_default=True)
@click.option("--blind", is_flag=True, help="the conditions were hidden when scoring")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def score(obj: Ctx, run_id: str, prefer, worse, note, annotator, blind, as_json, **dims) -> None:
    """Record a human score for a run (an edit appends a new version; history is kept)."""
    from fintrade_tui.errors import UserError
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.run_records import RunStore
    from fintrade_tui.workspace.scores import Score, ScoreStore

    if not any(dims.values()) and not prefer:
        raise UserError("score", "nothing to record", "give --accuracy ... or --prefer")
    with open_workspace(obj.cfg.workspace) as ws:
        runs = RunStore(ws)
        run = runs.get(run_id)
        other, preference = None, None
        if prefer:
            if prefer.lower() == "tie":
                preference = "tie"
            else:
                other = runs.get(prefer)["id"]
                preference = "other" if worse else "this"
        row = ScoreStore(ws).save(
            Score(
                run["id"],
                "human",
                annotator,
                **dims,
                other_run=other,
                preference=preference,
                note=note,
                blind=blind,
            )
        )
    out = {k: row[k] for k in ("id", "run_id", "annotator", "version", "created_at")}
    if as_json:
        emit_json(out)
    else:
        console.print(
            f"saved score v{row['version']} of run {row['run_id']} by {row['annotator']}",
            highlight=False,
        )


@main.command()
@click.argument("question_id")
@click.option("--model", "-m", help="the judge (default judging.model)")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def tournament(obj: Ctx, question_id: str, model: str | None, as_json: bool) -> None:
    """Round-robin pairwise tournament of a question's completed runs (both orders judged)."""
    from fintrade_tui.errors import UserError
    from fintrade_tui.judging.judge import pair_judge
    from fintrade_tui.judging.tournament import round_robin
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import get_question
    from fintrade_tui.workspace.run_records import COMPLETED, RunStore

    with open_workspace(obj.cfg.workspace) as ws:
        q = get_question(ws, question_id)
        runs = RunStore(ws).list(question=q.id, status=COMPLETED)
    if len(runs) < 2:
        raise UserError(f"question {q.id}", "has fewer than 2 completed runs", "run `ask` first")
    answers = {r["id"]: r["answer"] for r in runs}
    result = asyncio.run(round_robin(sorted(answers), pair_judge(obj.cfg, q, answers, model)))
    if as_json:
        emit_json(result)
        return
    by = {r["id"]: r for r in runs}
    print_table(
        [
            {
                "rank": i,
                "run": rid,
                "condition": by[rid]["condition"],
                "model": by[rid]["model"],
                "points": result["points"][rid],
            }
            for i, rid in enumerate(result["ranking"], 1)
        ],
        f"tournament {q.id}: {result['n_calls']} judged pairs, "
        f"order consistency {result['consistency']}",
    )


@main.command("calibrate-judge")
@click.option("--model", "-m", help="the judge to measure (default judging.model)")
@click.option(
    "--labelled",
    type=click.Path(dir_okay=False),
    help="a run JSONL with people's labels (default: the bundle's financebench-labelled)",
)
@click.option("-n", "count", type=click.IntRange(1), default=200, show_default=True,
              help="answers people called correct or incorrect, spread over the file")  # fmt: skip
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
@friendly
def calibrate_judge(
    obj: Ctx, model: str | None, labelled: str | None, count: int, as_json: bool
) -> None:
    """Measure how well the LLM judge agrees with people's verdicts, and keep the figures in
    the workspace: every score this judge gives is then shown with them."""
    from pathlib import Path

    from fintrade_tui.judging.calibration import DEFAULT_SET, load, measure_judge, sample
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.judge_agreement import AgreementStore, describe

    cfg = obj.cfg
    path = Path(labelled) if labelled else cfg.check_bundle() / DEFAULT_SET
    name = "FinanceBench" if labelled is None else path.name
    items = sample(load(path), count)

    def tick(i: int, n: int, line: str) -> None:
        if not as_json:
            click.echo(f"[{i}/{n}] {line}", err=True)

    found = measure_judge(cfg, items, model, name, tick)
    with open_workspace(cfg.workspace) as ws:
        row = AgreementStore(ws).save(found)
    if as_json:
        emit_json(row)
        return
    console.print(f"judge {found.judge} ({found.judge_model}): {describe(found)}; "
                  f"{found.decided} of {found.n} scored, "
                  f"{found.seconds_per_answer or 0:.1f} s an answer", highlight=False)  # fmt: skip
