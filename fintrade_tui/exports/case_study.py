"""Case-study export: one Markdown file per case for demos and write-ups — the question with its
golden indicators and oracle values (with provenance), then every run: condition, model, level,
status, timings, whether it counts as right (reports/rightness.py: a figure the audit contradicts
makes it wrong whatever the judge gave; both are shown), evidence, the answer, the latest human
and judge scores with justifications, golden-indicator P/R/F1 and the numeric audit's claims.

Only what the workspace records is written: run records never hold API keys, and the text
passes through `runs.redact` on its way out (a key that reached the workspace another way).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fintrade_tui import redact
from fintrade_tui.config import Config
from fintrade_tui.exports.case_data import load_case, resolve_runs
from fintrade_tui.exports.markdown_parts import (
    DASH,
    fmt_value,
    markdown_cell,
    markdown_table,
    quote_lines,
)
from fintrade_tui.exports.question_markdown import question_lines
from fintrade_tui.reports.causes import CAUSE_LABELS, failure_causes
from fintrade_tui.reports.rightness import Verdict
from fintrade_tui.workspace.evidence import LABELS
from fintrade_tui.workspace.scores import DIMENSIONS

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection


def _evidence(run: dict[str, Any]) -> list[str]:
    ev = run.get("evidence") or {}
    items = ev.get("items") or []
    n = len(items) or len(run.get("evidence_ids") or [])
    out = [f"#### Evidence ({n} item{'s' * (n != 1)})", ""]
    if items:
        for i in items:
            when = f", available from {i['available_from']}" if i.get("available_from") else ""
            title = i.get("title") or i.get("track") or ""
            out.append(f"- `{i.get('id')}` — {title} ({i.get('track')}{when})")
    else:
        out += [f"- `{e}`" for e in run.get("evidence_ids") or []] or ["_(none)_"]
    out += [f"- _note:_ {n}" for n in ev.get("notes") or []]
    calls = run.get("tool_calls") or []
    if calls:
        out += ["", "Tool calls:"]
        out += [f"- `{c.get('name')}({markdown_cell(str(c.get('arguments')))})`" for c in calls]
    return [*out, ""]


def _scores(scores: list[dict[str, Any]]) -> list[str]:
    if not scores:
        return ["#### Scores", "", "_(not scored yet)_", ""]
    order = {"human": 0, "llm": 1, "panel": 2}
    scores = sorted(scores, key=lambda s: (order.get(s["kind"], 9), s["annotator"]))
    out = ["#### Scores (latest versions)", ""]
    out += markdown_table(
        ["Kind", "Annotator", "Version", "Status", *[d.capitalize() for d in DIMENSIONS]],
        [
            [s["kind"], s["annotator"], s["version"], s["status"], *[s[d] for d in DIMENSIONS]]
            for s in scores
        ],
    )
    for s in scores:
        d = s["detail"] or {}
        who = f"{s['kind']} · {s['annotator']}"
        if s["kind"] == "human":
            if s.get("note"):
                out += [f"**{who} note:** {s['note']}", ""]
            if s.get("preference"):
                out += [f"**{who} preference:** {s['preference']} (vs {s['other_run']})", ""]
        if s.get("agreement"):
            out += [f"**{who}:** this judge {s['agreement']}", ""]
        if s["status"] != "ok":
            out += [f"**{who} failure:** {d.get('error') or 'no valid output'}", ""]
        just = d.get("justifications") or {}
        for dim in [*DIMENSIONS, *sorted(set(just) - set(DIMENSIONS))]:
            if just.get(dim):
                out.append(f"- **{who} — {dim}:** {just[dim]}")
        if just:
            out.append("")
        prf = d.get("golden_prf")
        if prf:
            out += [
                f"**Golden indicators ({who}):** precision {fmt_value(prf.get('precision'), 3)}, "
                f"recall {fmt_value(prf.get('recall'), 3)}, F1 {fmt_value(prf.get('f1'), 3)}; "
                f"used {', '.join(prf.get('metrics_canonical') or []) or DASH}"
                + (
                    f" (unmapped: {', '.join(prf['metrics_unmapped'])})"
                    if prf.get("metrics_unmapped")
                    else ""
                ),
                "",
            ]
        if "final" in d:
            out += [f"**Panel ({who}):** final {d['final']}, votes {d.get('votes')}", ""]
    return out


def _audit(audit: dict[str, Any] | None) -> list[str]:
    out = ["#### Numeric audit", ""]
    if not audit:
        return [*out, "_(no audit recorded: run `fintrade-tui judge`)_", ""]
    claims = audit.get("claims") or []
    if not claims:
        return [*out, "No figures to check.", ""]
    s = audit.get("summary") or {}
    out += [
        f"{len(claims)} figures: {s.get('SUPPORTED', 0)} SUPPORTED, "
        f"{s.get('CONTRADICTED', 0)} CONTRADICTED, {s.get('NOT_FOUND', 0)} NOT_FOUND "
        f"(as of {audit.get('as_of') or DASH}).",
        "",
    ]
    rows = [
        [
            c.get("verdict"),
            c.get("ticker"),
            c.get("indicator"),
            f"{fmt_value(c.get('value'), 6)}{c.get('unit') or ''}",
            fmt_value(c.get("store_value"), 6),
            c.get("source"),
            c.get("why"),
        ]
        for c in claims
    ]
    return out + markdown_table(
        ["Verdict", "Ticker", "Indicator", "Stated", "Store value", "Source", "Why"], rows
    )


def _checks(c: dict[str, Any] | None) -> list[str]:
    """The answer match's verdict and reason, then the program traces as tables."""
    if not c:
        return []
    out = [f"#### Answer match ({c['mode']})", "", f"**{c['verdict']}** — {c['reason']}", ""]
    if b := c.get("benchmark_rule"):  # the benchmark's own rule, beside the analyst's verdict
        out += [f"Benchmark rule ({b['mode']}): **{b['verdict']}** — {b['reason']}", ""]
    for who, key in (("Reference", "reference_trace"), ("Answer", "trace")):
        if c.get(key):
            out += [f"{who} program trace:", ""]
            out += markdown_table(["Step", "Operation", "Operands", "Value", ""], _trace(c[key]))
    return out


def _trace(steps: list[dict[str, Any]]) -> list[list[Any]]:
    def operand(o: dict[str, Any]) -> str:
        where = o.get("where")
        said = where.get("label") if isinstance(where, dict) else where
        return f"{o.get('text')}" + (f" ({said})" if said else "")

    return [
        [
            s["step"],
            s["op"],
            "; ".join(operand(o) for o in s.get("operands") or []),
            s.get("error") or fmt_value(s.get("value"), 5),
            "leaves the reference here" if s.get("departs") else s.get("note") or "",
        ]
        for s in steps
    ]


def _run(
    run: dict[str, Any],
    scores: list[dict[str, Any]],
    audit: Any,
    checks: Any = None,
    look_ahead: str = "",
    cause: dict[str, Any] | None = None,
    verdict: Verdict | None = None,
) -> list[str]:
    cond = LABELS.get(run["condition"], run["condition"])
    out = [f"### Run {run['id']} — {cond} · {run['model']} · {run['level'] or DASH}", ""]
    out += [
        f"- **Status:** {run['status']}"
        + (f" ({run['error'].strip().splitlines()[0]})" if run.get("error") else ""),
        f"- **Model:** {run['model']} (`{run.get('model_string') or DASH}`)"
        + (f", best of {run['best_of']}" if (run.get("best_of") or 1) > 1 else ""),
        f"- **Started:** {fmt_value(run.get('started_at'))} · "
        f"**as of** {fmt_value(run.get('as_of'))}",
        *([f"- **Look-ahead:** {look_ahead}"] if look_ahead else []),
        *(
            [f"- **Why it failed:** {CAUSE_LABELS[cause['cause']]} — {cause['rule']}"]
            if cause
            else []
        ),
        *([f"- **Verdict:** {verdict.line()}"] if verdict is not None else []),
        f"- **Timings:** first token {fmt_value(run.get('ttft'), 3)} s, "
        f"total {fmt_value(run.get('duration'), 3)} s · "
        f"**Tokens:** {fmt_value(run.get('tokens_in'))} in, "
        f"{fmt_value(run.get('tokens_out'))} out · **Cost:** {fmt_value(run.get('cost'))} · "
        f"**Retries:** {fmt_value(run.get('retries'))}",
        f"- **Batch:** {run.get('batch') or DASH} · **Prompt hash:** "
        f"{run.get('prompt_hash') or DASH}",
        "",
    ]
    out += _evidence(run)
    out += ["#### Answer", "", *quote_lines(run.get("answer"))]
    out += _checks(checks)
    out += _scores(scores)
    out += _audit(audit)
    return out


def _look_ahead(cfg: Config, q: Any, run: dict[str, Any]) -> str:
    """Whether the run's model may know the outcome (models/cutoffs.py), as one line."""
    from fintrade_tui.models.cutoffs import describe, run_mark

    if run["model"] == "reference":  # the benchmark's own answer, not a model's
        return ""
    return describe(run_mark(cfg.models, run, q), run["model"])


def default_path(cfg: Config, runs: list[dict[str, Any]]) -> Path:
    """data/exports/case-<question>-<first run>[-<n>runs].md beside the store."""
    qid = re.sub(r"[^A-Za-z0-9_.-]+", "_", runs[0]["question_id"] or "question")
    more = f"-{len(runs)}runs" if len(runs) > 1 else ""
    return cfg.store.parent / "exports" / f"case-{qid}-{runs[0]['id']}{more}.md"


def write_case_study(
    cfg: Config,
    ws_con: Connection,
    run_ids: list[str],
    path: Path | None = None,
) -> Path:
    """Write the case study of these runs (ids or unique prefixes) as Markdown; returns the
    path (default: `cfg.store.parent / "exports" / case-<question>-<run>.md`)."""
    runs = resolve_runs(ws_con, run_ids)
    data = load_case(ws_con, runs, preferences=False)
    ids = {r["id"] for r in runs}
    causes = {c["run_id"]: c for c in failure_causes(ws_con) if c["run_id"] in ids}
    qids, questions = data.question_ids, data.questions

    title = ", ".join(qids)
    lines = [
        f"# Case study: {title}",
        "",
        f"{len(runs)} run{'s' * (len(runs) != 1)}: "
        + ", ".join(
            f"`{r['id']}` ({LABELS.get(r['condition'], r['condition'])}, {r['model']})"
            for r in runs
        )
        + ". Written by fintrade-tui from the workspace records.",
        "",
    ]
    for qid in qids:
        lines += question_lines(questions.get(qid), qid)
        lines += ["## Runs", ""]
        for run in (r for r in runs if r["question_id"] == qid):
            rid = run["id"]
            look = _look_ahead(cfg, questions.get(qid), run)
            lines += _run(
                run, data.scores[rid], data.audits.get(rid), data.checks.get(rid), look,
                causes.get(rid), data.verdicts.get(rid),
            )  # fmt: skip
    out = Path(path) if path else default_path(cfg, runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(redact.text("\n".join(lines).rstrip() + "\n"), encoding="utf-8")
    return out
