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
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb

from fintrade_tui import redact
from fintrade_tui.config import Config
from fintrade_tui.exports.case_data import load_case, resolve_runs
from fintrade_tui.reports.causes import CAUSE_LABELS, failure_causes
from fintrade_tui.reports.rightness import Verdict
from fintrade_tui.workspace.evidence import LABELS
from fintrade_tui.workspace.scores import DIMENSIONS

DASH = "—"


def _num(v: Any, digits: int = 4) -> str:
    if v is None:
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}" if abs(v) >= 10_000 else str(v)
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 1e6 else f"{v:.{digits}g}"
    if isinstance(v, datetime):
        return v.isoformat(sep=" ", timespec="seconds")
    if isinstance(v, date):
        return v.isoformat()
    return str(v)


fmt_value = _num  # how the HTML report writes a value, as the Markdown one does


def _cell(v: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    text = v if isinstance(v, str) else _num(v)
    return re.sub(r"\s+", " ", text).replace("|", "\\|").strip() or DASH


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in r) + " |" for r in rows]
    return [*lines, ""]


def _quote(text: str | None) -> list[str]:
    if not text or not text.strip():
        return ["_(empty)_", ""]
    return [f"> {line}".rstrip() for line in text.strip().splitlines()] + [""]


def _question(q: Any, qid: str, oracle_as_list: bool = False) -> list[str]:
    if q is None:
        return [f"## Question {qid}", "", "_(not in the workspace's question bank)_", ""]
    window = DASH
    if q.window_start and q.window_end:
        window = _num(q.window_start)
        if q.window_end != q.window_start:
            window += f" to {_num(q.window_end)}"
    out = [f"## Question {q.id}", "", *_quote(q.text)]
    out += [
        f"- **Category:** {q.category} · **Source:** {q.source}"
        + (f" · **{_seed_word(q)}:** {q.parent_id}" if q.parent_id else ""),
        f"- **As of:** {_num(q.as_of)} (after the close) · **Window:** {window}",
        *_as_of_basis(q),
        f"- **Tickers:** {', '.join(q.tickers) or DASH} · **Scope:** {q.scope or DASH}",
        f"- **Resolution:** {q.status} · **Coverage:** {q.coverage}",
        f"- **Kind:** {_kind(q)}",
        f"- **Golden indicators:** {', '.join(q.golden) or DASH}"
        + (f" (as written: {', '.join(q.golden_raw)})" if q.golden_raw else ""),
        "",
    ]
    rows = []
    rank = {name: i for i, name in enumerate(q.golden)}
    for ticker in sorted(q.oracle):
        if ticker == "supplied":
            continue
        items = (q.oracle[ticker] or {}).items()
        for name, o in sorted(items, key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])):
            period = " ".join(
                str(o[k]) for k in ("fiscal_year", "fiscal_period") if o.get(k) is not None
            )
            rows.append(
                [
                    ticker,
                    name,
                    _num(o.get("value"), 6),
                    o.get("source"),
                    period or o.get("date"),
                    o.get("available_from"),
                    o.get("accession"),
                ]
            )
    if rows and oracle_as_list:
        out += ["### Oracle values", ""]
        for t, name, value, source, period, avail, acc in rows:
            where = ", ".join(
                str(x)
                for x in (source, period, avail and f"available from {avail}", acc and f"{acc}")
                if x
            )
            out.append(f"- **{t} {name}** = {value} — {where}")
        out.append("")
    elif rows:
        out += ["### Oracle values", ""]
        out += _table(
            ["Ticker", "Indicator", "Value", "Source", "Period", "Available from", "Accession"],
            rows,
        )
    supplied = (q.oracle or {}).get("supplied") or {}
    if supplied:
        out += ["### Context supplied with the question", ""]
        for k, v in sorted(supplied.items()):
            out += [f"**{k}** ({v.get('source')}):", "", *_quote(str(v.get("value")))]
    if q.reasons:
        out += ["### Resolution notes", "", *[f"- {r}" for r in q.reasons], ""]
    if q.coverage_missing:
        out += ["### Coverage gaps", "", *[f"- {m}" for m in q.coverage_missing], ""]
    out += ["### Reference answer", "", *_quote(q.reference_answer)]
    return out


def _seed_word(q: Any) -> str:
    """An analyst's variant names the question it was asked from; a scaled one its seed."""
    return "Variant of" if (getattr(q, "extra", None) or {}).get("variant_of") else "Seed"


def _as_of_basis(q: Any) -> list[str]:
    """Why `as_of` is that day, and the fiscal periods the question names on their calendars."""
    extra = getattr(q, "extra", None) or {}
    basis = extra.get("as_of_basis") or {}
    out = [f"- **As of from:** {basis['kind']} — {basis.get('detail', '')}"] if basis else []
    for p in extra.get("fiscal_periods") or []:
        label = (f"Q{p['quarter']} " if p.get("quarter") else "") + f"fiscal {p['fiscal_year']}"
        rep = p.get("report") or {}
        filed = f"filed {rep['filed']} ({rep['source']})" if rep else "no filing date in the store"
        cal = " · calendar assumed (December)" if p.get("calendar") == "assumed" else ""
        out.append(f"- **{p['ticker']} {label}:** {p['start']} to {p['end']}, {filed}{cal}")
    return out


def _kind(q: Any) -> str:
    """The question kind the prompts use, and what decided it."""
    from fintrade_tui.questions.kind import LABEL, classify

    kind, why = classify(q)
    return f"{LABEL[kind]} ({why})"


def question_markdown(q: Any, oracle_as_list: bool = False) -> str:
    """A question as Markdown: text, category, as_of, window, tickers, golden indicators,
    oracle values with provenance (a table, or a list for narrow panels), resolution notes,
    coverage gaps, the reference answer."""
    lines = _question(q, getattr(q, "id", "?"), oracle_as_list)
    return "\n".join(lines).rstrip() + "\n"


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
        out += [f"- `{c.get('name')}({_cell(str(c.get('arguments')))})`" for c in calls]
    return [*out, ""]


def _scores(scores: list[dict[str, Any]]) -> list[str]:
    if not scores:
        return ["#### Scores", "", "_(not scored yet)_", ""]
    order = {"human": 0, "llm": 1, "panel": 2}
    scores = sorted(scores, key=lambda s: (order.get(s["kind"], 9), s["annotator"]))
    out = ["#### Scores (latest versions)", ""]
    out += _table(
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
                f"**Golden indicators ({who}):** precision {_num(prf.get('precision'), 3)}, "
                f"recall {_num(prf.get('recall'), 3)}, F1 {_num(prf.get('f1'), 3)}; "
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
            f"{_num(c.get('value'), 6)}{c.get('unit') or ''}",
            _num(c.get("store_value"), 6),
            c.get("source"),
            c.get("why"),
        ]
        for c in claims
    ]
    return out + _table(
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
            out += _table(["Step", "Operation", "Operands", "Value", ""], _trace(c[key]))
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
            s.get("error") or _num(s.get("value"), 5),
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
        f"- **Started:** {_num(run.get('started_at'))} · **as of** {_num(run.get('as_of'))}",
        *([f"- **Look-ahead:** {look_ahead}"] if look_ahead else []),
        *(
            [f"- **Why it failed:** {CAUSE_LABELS[cause['cause']]} — {cause['rule']}"]
            if cause
            else []
        ),
        *([f"- **Verdict:** {verdict.line()}"] if verdict is not None else []),
        f"- **Timings:** first token {_num(run.get('ttft'), 3)} s, "
        f"total {_num(run.get('duration'), 3)} s · **Tokens:** {_num(run.get('tokens_in'))} in, "
        f"{_num(run.get('tokens_out'))} out · **Cost:** {_num(run.get('cost'))} · "
        f"**Retries:** {_num(run.get('retries'))}",
        f"- **Batch:** {run.get('batch') or DASH} · **Prompt hash:** "
        f"{run.get('prompt_hash') or DASH}",
        "",
    ]
    out += _evidence(run)
    out += ["#### Answer", "", *_quote(run.get("answer"))]
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
    ws_con: duckdb.DuckDBPyConnection,
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
        lines += _question(questions.get(qid), qid)
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
