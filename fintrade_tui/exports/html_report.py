"""HTML report room: self-contained `.html` case studies and view reports, for sharing a case
outside the terminal. One file each: CSS inlined, charts as inline SVG, the app's screenshots as
data-URI images, no script and nothing fetched at view time.

Rendered with jinja2 templates (templates/*.html.j2) under autoescaping: every answer, passage,
question and reason from outside is text on the page (its control characters made visible by
`safe_text.printable`), never markup; answers and reference answers are Markdown drawn as HTML
with raw HTML escaped (markdown_html.py). Numbers come from the same rooms the TUI reads: the case
data (case_data.py), the accuracy table (stats.tables), the company quarter and chart series
(store.company). The file is written atomically and passes through `runs.redact`.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fintrade_tui import redact
from fintrade_tui.config import Config
from fintrade_tui.exports.case_data import CaseData, add_companies, load_case, resolve_runs
from fintrade_tui.exports.markdown_html import markdown_html, marked_markdown_html
from fintrade_tui.exports.markdown_parts import fmt_value
from fintrade_tui.reports.rightness import Verdict
from fintrade_tui.safe_text import printable
from fintrade_tui.workspace.evidence import LABELS
from fintrade_tui.workspace.scores import DIMENSIONS

if TYPE_CHECKING:
    import duckdb

    from fintrade_tui.workspace.connection_api import Connection

TEMPLATES = Path(__file__).parent / "templates"
ITEM_FIELDS = ("id", "track", "title", "text", "ticker", "available_from", "meta")
CLAIM_FIELDS = ("verdict", "ticker", "indicator", "value", "unit", "store_value", "source", "why")
PRF_FIELDS = ("precision", "recall", "f1", "metrics_canonical")
EVIDENCE_META = ("source", "form", "accession", "section", "filed", "period_end", "score", "url")
VERDICT_CLASS = {"SUPPORTED": "ok", "CONTRADICTED": "bad", "NOT_FOUND": "unknown"}
# Textual's screenshot SVG loads Fira Code from a CDN: dropped (a local monospace font stands in)
_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}", re.S)
# ...and has a viewBox but no size: an <img> of it would have no natural size to scale from
_SVG_ROOT = re.compile(r'<svg ([^>]*?)viewBox="0 0 ([\d.]+) ([\d.]+)"')


@cache
def _env() -> Any:
    import jinja2  # lazy: only the exports that write HTML need it

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # all .j2 files are HTML or SVG
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["v"] = fmt_value
    env.filters["md"] = markdown_html  # Markdown as safe HTML: references
    env.filters["text"] = lambda s: printable("" if s is None else str(s))
    env.filters["pct"] = lambda x: "—" if x is None else f"{x:.1f}"
    env.filters["label"] = lambda c: LABELS.get(c, c)
    return env


def answer_parts(answer: str | None, audit: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The answer cut at the numeric audit's claim spans: [{text, claim}] where claim is the
    audit's claim (verdict, store value, why) for the figure, None for the text around it."""
    text = answer or ""
    claims = sorted(
        (c for c in (audit or {}).get("claims") or [] if c.get("span")),
        key=lambda c: c["span"][0],
    )
    parts, at = [], 0
    for c in claims:
        a, b = c["span"]
        if a < at or b > len(text) or a >= b:
            continue  # a span that does not fit this text (an edited answer) marks nothing
        if a > at:
            parts.append({"text": text[at:a], "claim": None})
        parts.append({"text": text[a:b], "claim": c, "cls": VERDICT_CLASS.get(c.get("verdict"))})
        at = b
    if at < len(text) or not parts:
        parts.append({"text": text[at:], "claim": None})
    return parts


def _evidence(run: dict[str, Any]) -> dict[str, Any]:
    ev = run.get("evidence") or {}
    items = []
    for i in ev.get("items") or []:
        meta = i.get("meta") or {}
        where = [(k, meta[k]) for k in EVIDENCE_META if meta.get(k) not in (None, "")]
        items.append({**dict.fromkeys(ITEM_FIELDS), **i, "where": where})
    known = {i["id"] for i in items}
    ids_only = [e for e in run.get("evidence_ids") or [] if e not in known]
    return {
        "items": items,
        "ids_only": ids_only,
        "notes": ev.get("notes") or [],
        "tool_calls": run.get("tool_calls") or [],
    }


def _scores(scores: list[dict[str, Any]]) -> list[dict[str, Any]]:
    order = {"human": 0, "llm": 1, "panel": 2}
    out = []
    for s in sorted(scores, key=lambda s: (order.get(s["kind"], 9), s["annotator"])):
        d = s.get("detail") or {}
        just = d.get("justifications") or {}
        names = [*DIMENSIONS, *sorted(set(just) - set(DIMENSIONS))]
        out.append(
            {
                **s,
                "dims": [(dim, s.get(dim)) for dim in DIMENSIONS],
                "reasons": [(k, just[k]) for k in names if just.get(k)],
                "prf": _filled(d.get("golden_prf"), PRF_FIELDS),
                "agreement": s.get("agreement"),  # a judge's measured agreement with people
                "failure": (d.get("error") or "no valid output") if s["status"] != "ok" else None,
            }
        )  # fmt: skip
    return out


def _filled(d: Mapping[str, Any] | None, fields: tuple[str, ...]) -> dict[str, Any] | None:
    """A record from the workspace with every field the templates read (older or imported
    records may lack some)."""
    return None if d is None else {**dict.fromkeys(fields), **d}


def _run(run: dict[str, Any], data: CaseData) -> dict[str, Any]:
    audit = data.audits.get(run["id"])
    if audit:
        claims = [_filled(c, CLAIM_FIELDS) for c in audit.get("claims") or []]
        audit = {"summary": {}, "as_of": None, **audit, "claims": claims}
    error = (run.get("error") or "").strip()
    return {
        **run,
        "label": LABELS.get(run["condition"], run["condition"]),
        "error_line": error.splitlines()[0] if error else None,
        "answer_html": marked_markdown_html(answer_parts(run.get("answer"), audit)),
        "audit": audit,
        "ev": _evidence(run),
        "checks": data.checks.get(run["id"]),
        "scored": _scores(data.scores.get(run["id"], [])),
        "verdict": _verdict(data.verdicts.get(run["id"])),
    }


def _verdict(v: Verdict | None) -> dict[str, Any] | None:
    """Whether the run counts as right, as the pane shows it (reports/rightness.py)."""
    if v is None:
        return None
    return {"verdict": v.verdict, "by": v.by, "line": v.line(), "judge_audit": v.judge_audit}


def _company(data: CaseData, q: Any) -> dict[str, Any] | None:
    from fintrade_tui.exports.svg_charts import panels
    from fintrade_tui.store.company_text import COLUMNS, display_rows, quarter_label

    if q is None or not q.tickers or q.as_of is None:
        return None
    found = data.companies.get((q.tickers[0], q.as_of))
    if not found:
        return None
    view = found["view"]
    return {
        "view": view,
        "label": quarter_label(view),
        "columns": COLUMNS,
        "rows": display_rows(view),
        "panels": panels(found["series"]),
    }


def case_sections(data: CaseData) -> list[dict[str, Any]]:
    return [
        {
            "id": qid,
            "anchor": "q-" + re.sub(r"[^A-Za-z0-9_-]+", "_", qid),
            "q": data.questions.get(qid),
            "runs": [_run(r, data) for r in data.runs_of(qid)],
            "company": _company(data, data.questions.get(qid)),
        }
        for qid in data.question_ids
    ]


def screenshot_src(svg: str) -> str:
    """A Textual screenshot as an <img> data URI: an image document loads nothing and runs
    nothing, and the CDN font its style names is removed."""
    clean = printable(_FONT_FACE.sub("", svg))  # a control character is not XML: no image
    if not re.search(r"<svg [^>]*\bwidth=", clean):
        clean = _SVG_ROOT.sub(r'<svg \1width="\2" height="\3" viewBox="0 0 \2 \3"', clean, count=1)
    return "data:image/svg+xml;base64," + base64.b64encode(clean.encode("utf-8")).decode("ascii")


def render(template: str, **context: Any) -> str:
    """One template rendered with the report's filters; the text passes through redaction."""
    html = (
        _env()
        .get_template(template)
        .render(generated=datetime.now().isoformat(sep=" ", timespec="seconds"), **context)
    )
    return redact.text(html)


def render_case(data: CaseData, screenshots: Mapping[str, str] | None = None) -> str:
    """The case study of `data` as one HTML document."""
    shots = [(name, screenshot_src(svg)) for name, svg in (screenshots or {}).items()]
    return render(
        "case.html.j2",
        title="Case study: " + ", ".join(data.question_ids),
        runs=data.runs,
        sections=case_sections(data),
        preferences=data.preferences,
        screenshots=shots,
    )


def default_html_path(cfg: Config, runs: list[dict[str, Any]]) -> Path:
    """data/exports/case-<question>-<first run>[-<n>runs].html beside the store."""
    from fintrade_tui.exports.case_study import default_path

    return default_path(cfg, runs).with_suffix(".html")


def write_html(path: Path, html: str) -> Path:
    """Write atomically: a reader (or a killed export) never sees half a report."""
    import os

    from fintrade_tui.ingest.http import write_atomic

    write_atomic(path, html.encode("utf-8"))
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)  # a file to share: readable as any file the user writes
    return path


def write_case_html(
    cfg: Config,
    ws_con: Connection,
    run_ids: list[str],
    path: Path | None = None,
    *,
    store_con: duckdb.DuckDBPyConnection | None = None,
    screenshots: Mapping[str, str] | None = None,
) -> Path:
    """The HTML case study of these runs (ids or unique prefixes); returns its path. With
    `store_con`, the company's quarter and charts at the question's as_of are included."""
    runs = resolve_runs(ws_con, run_ids)
    data = load_case(ws_con, runs)
    if store_con is not None:
        add_companies(data, store_con, cfg.fundamentals.estimated_lag_days)
    out = Path(path) if path else default_html_path(cfg, runs)
    return write_html(out, render_case(data, screenshots))
