"""CLI command `report`: the Table-2-shaped accuracy table (model × condition × category, Δ
against the baseline with paired tests), lane tables, human-judge agreement, SECQUE panel
accuracy and inter-annotator agreement."""

from __future__ import annotations

from pathlib import Path

import click

from fintrade_tui.cli.base import Ctx, emit_json, friendly, main
from fintrade_tui.cli.output import console, print_table
from fintrade_tui.stats.breakdown import BREAKDOWNS


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
    type=click.Choice([*BREAKDOWNS, "cause"]),
    default="category",
    show_default=True,
    help="the matrix's columns: the question's category, TAT-QA's answer type or scale, or"
    " cutoff (the question's as-of before the model's knowledge cutoff: may know the outcome);"
    " cause: instead of the matrix, why each failed answer failed (cause × category × condition)",
)
@click.option("--json", "as_json", is_flag=True)
@click.option("--markdown", is_flag=True)
@click.option("--csv", "csv_path", type=click.Path(path_type=Path), help="write the cells as CSV")
@click.option("--parquet", "parquet_path", type=click.Path(path_type=Path), help="... as Parquet")
@click.option("--resamples", type=int, default=10000, help="bootstrap resamples")
@click.option("--baseline", default="no_rag", show_default=True, help="the condition compared with")
@click.option("--lanes-csv", type=click.Path(path_type=Path), help="write the lane tables as CSV")
@click.option("--annotators", is_flag=True, help="also inter-annotator agreement (κ, α)")
@click.option(
    "--without-disputed",
    is_flag=True,
    help="leave questions whose reference is disputed (`questions disputes`) out of the matrix",
)
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
    without_disputed: bool,
) -> None:
    """Accuracy (model × condition × the question set's categories, Δ vs the baseline with
    paired tests), lane tables per judging protocol, human-judge agreement, SECQUE panel
    accuracy and (--annotators) inter-annotator agreement."""
    from fintrade_tui.judging.session import agreement_pairs, llm_judges, panel_rows
    from fintrade_tui.reports.accuracy import report_table, score_rows
    from fintrade_tui.reports.cost import cost_rows
    from fintrade_tui.stats import lanes as ln
    from fintrade_tui.stats.agreement import agreement_table
    from fintrade_tui.stats.annotators import annotator_agreement, annotator_rows, human_scores
    from fintrade_tui.stats.tables import flatten, to_markdown
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.disputes import DisputeStore

    if as_json and markdown:
        from fintrade_tui.errors import UserError

        raise UserError("--json --markdown", "ask for two outputs at once", "pick one of them")
    if by == "cause":
        _causes(obj, source, as_json, markdown)
        return
    with open_workspace(obj.cfg.workspace) as ws:
        disputed = set(DisputeStore(ws, read_only=True).latest())
        left_out = disputed if without_disputed else set()
        rows = score_rows(
            ws, scores, source=source, by=by, models=obj.cfg.models, leave_out=left_out
        )
        pairs = agreement_pairs(ws)
        panel = panel_rows(ws)
        judges = llm_judges(ws) if scores == "llm" else []
        by_kind = {k: ln.run_scores(ws, k, source) for k in ("llm", "human")}
        inter = annotator_agreement(human_scores(ws)) if annotators else None
        spend = cost_rows(ws, source, left_out)
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
        from fintrade_tui.exports.runs_table import write_table

        flat = [row for k in lanes for row in ln.flatten(lanes[k])]
        write_table(flat, [*ln.LANE_COLUMNS, "holm_m"], lanes_csv, "csv")
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
                "disputed": {"questions": len(disputed), "left_out": len(left_out)},
                "cost": spend,
                **({"annotators": inter} if inter is not None else {}),
            }
        )
        return
    if not rows:
        how = "judge --rescore" if scores == "match" else "judge`, `score` or `runs import"
        console.print(f"no {scores} scores yet: run `fintrade-tui {how}`")
    if markdown:
        click.echo(_markdown(table, agree, panel, scores, lanes, inter, spend))
        click.echo("".join(f"\n{_judge_line(j)}" for j in judges))
        return
    for j in judges:
        click.echo(_judge_line(j))
    if disputed:
        how = "left out" if left_out else "in the matrix (--without-disputed leaves them out)"
        click.echo(f"{len(disputed)} questions with a disputed reference: {how}")
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
    if spend:
        from fintrade_tui.reports.cost import shown

        print_table([shown(r) for r in spend], COST_TITLE)


COST_TITLE = "cost per model × condition (recorded usage priced; right: by the reports' rule)"


def _judge_line(j: dict) -> str:
    where = "a local model on this machine" if j["local"] else "a hosted model"
    return (
        f"LLM judge {j['judge']} = {j['model']} ({where}), {j['runs']} runs; this judge "
        f"{j['agreement_line']}"
        + ("" if j["agreement"] else " (measure it: `fintrade-tui calibrate-judge`)")
    )


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
    spend: list[dict] | None = None,
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
    tables = [t for ts in (lanes or {}).values() for t in ts]
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
    if spend:
        from fintrade_tui.reports.cost import shown

        parts += [
            "",
            f"## {COST_TITLE[0].upper()}{COST_TITLE[1:]}",
            "",
            *grid(list(map(shown, spend))),
        ]
    return "\n".join(parts)


def _causes(obj: Ctx, source: str | None, as_json: bool, markdown: bool) -> None:
    """`report --by cause`: each failed answer's cause (reports/causes.py) and the table."""
    from fintrade_tui.reports.causes import CAUSE_LABELS, cause_table, failure_causes
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import load_questions

    with open_workspace(obj.cfg.workspace, read_only=True) as ws:
        rows = failure_causes(ws)
        if source:
            keep = {q.id for q in load_questions(ws, source=source)}
            rows = [r for r in rows if r["question_id"] in keep]
    table = cause_table(rows)
    if as_json:
        emit_json({"by": "cause", "causes": table, "cases": rows})
        return
    shown = [{**r, "cause": CAUSE_LABELS[r["cause"]]} for r in table]
    if markdown:
        click.echo("| cause | category | condition | n |\n|---|---|---|---:|")
        click.echo(
            "\n".join(
                f"| {r['cause']} | {r['category']} | {r['condition']} | {r['n']} |" for r in shown
            )
        )
        return
    if not rows:
        console.print("no failed answers with a verdict: judge, score or re-score runs first")
        return
    print_table(shown, f"why {len(rows)} failed answers failed (cause × category × condition)")
