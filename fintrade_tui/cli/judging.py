"""CLI commands of judging: `judge` (LLM judge or SECQUE panel over stored runs), `score`
(a human score, appended) and `report` (the Table-2-shaped accuracy table, agreement, panel)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click
from rich.markup import escape

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table, progress_bars
from fintrade_tui.stats.breakdown import BREAKDOWNS


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
    if with_llm or not rescore:  # a bad judge is one line before anything is written
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
    obj: Ctx, ids, batch, with_reference, as_json, llm, mode, with_llm, source
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
            out = rs.rescore_with_store(cfg, ws, sel, mode, on_progress=tick)
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
@click.option(
    "--scores",
    type=click.Choice(["llm", "human", "labels", "match"]),
    default="llm",
    show_default=True,
    help="labels: share of runs the people's labels call correct; match: share the answer "
    "matcher calls correct (`judge --rescore`)",
)
@click.option("--source", help="one question set (fintradebench, secque, an imported task...)")
@click.option(
    "--by",
    type=click.Choice(BREAKDOWNS),
    default="category",
    show_default=True,
    help="the matrix's columns: the question's category, TAT-QA's answer type or scale, or"
    " cutoff (the question's as-of before the model's knowledge cutoff: may know the outcome)",
)
@click.option("--json", "as_json", is_flag=True)
@click.option("--markdown", is_flag=True)
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="write the cells as CSV")
@click.option("--parquet", "parquet_path", type=click.Path(path_type=Path), help="... as Parquet")
@click.option("--resamples", type=int, default=10000, help="bootstrap resamples")
@click.option("--baseline", default="no_rag", show_default=True, help="the condition compared with")
@click.option("--lanes-csv", type=click.Path(path_type=Path), help="write the lane tables as CSV")
@click.option("--annotators", is_flag=True, help="also inter-annotator agreement (κ, α)")
@click.pass_obj
@friendly
def report(
    obj: Ctx,
    scores: str,
    source,
    by: str,
    as_json: bool,
    markdown: bool,
    csv_path,
    parquet_path,
    resamples,
    baseline: str,
    lanes_csv,
    annotators: bool,
) -> None:
    """Accuracy (model × condition × the question set's categories, Δ vs the baseline with
    paired tests), lane tables per judging protocol, human-judge agreement, SECQUE panel
    accuracy and (--annotators) inter-annotator agreement."""
    from fintrade_tui.judging.session import agreement_pairs, llm_judges, panel_rows, score_rows
    from fintrade_tui.reports.accuracy import report_table
    from fintrade_tui.stats import lanes as ln
    from fintrade_tui.stats.agreement import agreement_table
    from fintrade_tui.stats.annotators import annotator_agreement, annotator_rows, human_scores
    from fintrade_tui.stats.tables import flatten, to_markdown
    from fintrade_tui.workspace.connection import open_workspace

    if as_json and markdown:
        from fintrade_tui.errors import UserError

        raise UserError("--json --markdown", "ask for two outputs at once", "pick one of them")
    with open_workspace(obj.cfg.workspace) as ws:
        rows = score_rows(ws, scores, source=source, by=by, models=obj.cfg.models)
        pairs = agreement_pairs(ws)
        panel = panel_rows(ws)
        judges = llm_judges(ws) if scores == "llm" else []
        by_kind = {k: ln.run_scores(ws, k, source) for k in ("llm", "human")}
        inter = annotator_agreement(human_scores(ws)) if annotators else None
    seen = {r["condition"] for r in [*rows, *by_kind["llm"], *by_kind["human"]]}
    if seen and baseline not in seen:
        from fintrade_tui.errors import UserError

        raise UserError(
            f"--baseline {baseline}", "has no scores", f"use one of {', '.join(sorted(seen))}"
        )
    table = report_table(rows, scores, baseline, resamples)  # as the HTML view report's
    agree = agreement_table(pairs) if pairs else []
    lanes = {
        k: ln.lane_tables(r, baseline, kind=k, n_resamples=resamples) for k, r in by_kind.items()
    }
    if lanes_csv:
        from fintrade_tui.exports.runs_table import _write_table

        flat = [row for k in lanes for row in ln.flatten(lanes[k])]
        _write_table(flat, [*ln.LANE_COLUMNS, "holm_m"], lanes_csv, "csv")
    for path, fmt in ((csv_path, "csv"), (parquet_path, "parquet")):
        if path:
            from fintrade_tui.exports.runs_table import write_report

            write_report(flatten(table) if table else [], path, fmt)
    if as_json:
        emit_json(
            {
                "scores": scores,
                "accuracy": flatten(table) if table else [],
                "agreement": agree,
                "panel": panel,
                "judges": judges,
                "lanes": lanes,
                **({"annotators": inter} if inter is not None else {}),
            }
        )
        return
    if not rows:
        how = "judge --rescore" if scores == "match" else "judge`, `score` or `runs import"
        console.print(f"no {scores} scores yet: run `fintrade-tui {how}`")
    if markdown:
        click.echo(_markdown(table, agree, panel, scores, lanes, inter))
        click.echo("".join(f"\n{_judge_line(j)}" for j in judges))
        return
    for j in judges:
        click.echo(_judge_line(j))
    if table:
        click.echo(to_markdown(table))
    for t in (t for k in lanes for t in lanes[k]):
        click.echo(ln.to_markdown(t))
    if agree:
        print_table(_agree_rows(agree), "human-judge agreement")
    if inter is not None:
        print_table(annotator_rows(inter), "inter-annotator agreement")
    if panel:
        print_table(panel, "SECQUE panel accuracy")


def _judge_line(j: dict) -> str:
    where = (
        "a local model on this machine: its calibration and its agreement with people are "
        "in docs/benchmarks.md"
        if j["local"]
        else "a hosted model"
    )
    return f"LLM judge {j['judge']} = {j['model']} ({where}), {j['runs']} runs"


def _agree_rows(agree: list[dict]) -> list[dict]:
    keys = ("n", "mae", "bias", "spearman_rho", "exact", "within_1", "qwk")
    return [
        {"dimension": a["dimension"]}
        | {k: (round(a[k], 3) if isinstance(a[k], float) else a[k]) for k in keys}
        for a in agree
    ]


def _markdown(
    table: dict | None,
    agree: list[dict],
    panel: list[dict],
    scores: str,
    lanes: dict[str, list[dict]] | None = None,
    inter: dict | None = None,
) -> str:
    from fintrade_tui.stats import lanes as ln
    from fintrade_tui.stats.annotators import annotator_rows
    from fintrade_tui.stats.tables import to_markdown

    def grid(rows: list[dict]) -> list[str]:
        head = list(rows[0])
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return out + [
            "| " + " | ".join("—" if r[h] is None else str(r[h]) for h in head) + " |" for r in rows
        ]

    parts = [f"## Accuracy ({scores} scores)", "", to_markdown(table) if table else "_none_"]
    tables = [t for k in lanes or {} for t in lanes[k]]
    if tables:
        parts += ["", "## Lane tables (one per score kind and judging protocol)", ""]
        parts += [ln.to_markdown(t) for t in tables]
    if agree:
        parts += ["", "## Human-judge agreement", "", *grid(_agree_rows(agree))]
    if inter is not None:
        names = ", ".join(inter["annotators"]) or "none"
        parts += ["", "## Inter-annotator agreement", "", f"Annotators: {names}.", ""]
        rows = annotator_rows(inter)
        parts += grid(rows) if rows else ["_no run scored by two annotators_"]
    if panel:
        parts += ["", "## SECQUE panel", "", "| model | condition | n | strict | normalized |"]
        parts.append("|---|---|---|---|---|")
        for p in panel:
            strict = "—" if p["strict"] is None else f"{100 * p['strict']:.1f}%"
            norm = "—" if p["normalized"] is None else f"{100 * p['normalized']:.1f}%"
            parts.append(f"| {p['model']} | {p['condition']} | {p['n']} | {strict} | {norm} |")
    return "\n".join(parts)


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
