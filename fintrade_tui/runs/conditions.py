"""Conditions room: the evidence each of the seven conditions gives a model for one question.

Every builder is point-in-time at `q.as_of`: nothing dated after it is ever shown. No-RAG and
Tool-Use give no items up front (Tool-Use tools run during the model call, see runs.tools);
RAG retrieves filing passages and market chunks; Indicator-RAG shows the same standard store
tables for every question (never chosen from the golden list); Oracle shows exactly the golden
indicators' values with their provenance; Long-context shows whole filing sections, newest
filing first, without retrieval (runs.long_context); Forecast-summary shows each ticker's ETS
forecast from its prices up to as_of, labelled a model forecast (runs.forecast_summary).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

import duckdb

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.fundamentals.concepts import RATIOS
from fintrade_tui.questions.indicators import KIND
from fintrade_tui.runs.indicator_rag import indicator_items, some_names
from fintrade_tui.runs.tools import long_label
from fintrade_tui.workspace.evidence import CONDITIONS, Evidence, EvidenceItem, approx_tokens
from fintrade_tui.workspace.questions import Question

# retrieval's one-line errors for "nothing indexed" (the only ones that become notes)
NOT_INDEXED = "has nothing in the retrieval index"
NOT_BUILT = "the retrieval index was never built"
ISO_DATE = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


@dataclass
class ConditionContext:
    cfg: Config
    con: duckdb.DuckDBPyConnection  # the store, read-only
    budget_tokens: int | None = None  # the model's evidence budget; None = runs.context_tokens

    @property
    def budget(self) -> int:
        return self.budget_tokens or self.cfg.runs.context_tokens


def build_evidence(condition: str, q: Question, ctx: ConditionContext) -> Evidence:
    """The evidence `condition` gives for `q`, as visible after the close of `q.as_of`."""
    builder = _BUILDERS.get(condition)
    if builder is None:
        raise UserError(
            f"condition {condition!r}", "is unknown", f"use one of {', '.join(CONDITIONS)}"
        )
    return builder(q, ctx)


def _ready(q: Question, ev: Evidence) -> bool:
    """Whether `q` has what a point-in-time builder needs; says why not in the notes."""
    if q.as_of is None:
        ev.notes.append(f"question {q.id} has no as-of date: no evidence given")
        return False
    if not q.tickers:
        ev.notes.append(f"question {q.id} names no company in the store: no evidence given")
        return False
    return True


def _window(q: Question) -> tuple[date | None, date]:
    assert q.as_of is not None
    end = min(q.window_end or q.as_of, q.as_of)
    start = q.window_start if q.window_start and q.window_start < end else None
    return start, end


# --- No-RAG, Tool-Use -------------------------------------------------------------------------


def _no_rag(q: Question, ctx: ConditionContext) -> Evidence:
    return Evidence("no_rag")


def _tool_use(q: Question, ctx: ConditionContext) -> Evidence:
    ev = Evidence("tool_use")
    if q.as_of is None:
        ev.notes.append(f"question {q.id} has no as-of date: tools cannot run point-in-time")
    return ev


# --- RAG ---------------------------------------------------------------------------------------


def _rag(q: Question, ctx: ConditionContext) -> Evidence:
    from fintrade_tui.retrieval.search import retrieve  # lazy: pulls in LanceDB and numpy

    ev = Evidence("rag")
    if not _ready(q, ev):
        return ev
    assert q.as_of is not None
    start, end = _window(q)
    # a one-day window would leave the market track empty: retrieval's default lookback instead
    window = (start, end) if start else None
    from fintrade_tui.retrieval.index import Index

    index = Index(ctx.cfg)
    if not index.manifest_path.is_file():
        ev.notes.append(f"the retrieval index at {index.path} was never built: no passages")
        return ev
    # the tickers the index lacks left out at once (a question over the universe names ~100;
    # asking retrieval with each in turn cost a search per missing ticker)
    held, asked = index.tickers(), list(dict.fromkeys(q.tickers))
    tickers = [t for t in asked if t in held]
    dropped = [t for t in asked if t not in held]
    rows: list[dict[str, Any]] = []
    while tickers:
        try:
            budget = ctx.cfg.runs.context_tokens
            rows = retrieve(
                ctx.cfg, q.text, tickers, q.as_of, window, token_budget=budget, mode="hybrid"
            )
            break
        except UserError as e:
            if e.problem == NOT_BUILT:
                ev.notes.append(f"the retrieval index at {e.where} was never built: no passages")
                return ev
            gone = [t for t in tickers if e.where == f"ticker {t!r}"]
            if e.problem != NOT_INDEXED or not gone:
                raise
            tickers.remove(gone[0])  # held by the manifest, yet no chunk in the tables
            dropped.append(gone[0])
    if dropped:
        ev.notes.append(f"not in the retrieval index, left out: {some_names(dropped)}")
    if tickers:
        from fintrade_tui.retrieval.indexing import coverage

        if note := coverage(ctx.cfg, ctx.con, tickers, q.as_of):
            ev.notes.append(note)
    for r in rows:
        item = _rag_item(r, q.as_of, ev.notes)
        if item.available_from is None or item.available_from > q.as_of:
            ev.notes.append(f"{item.id} left out: not dated on or before {q.as_of}")
            continue
        ev.items.append(item)
    return ev


def _later(text: str, as_of: date) -> bool:
    return any(d > as_of.isoformat() for d in ISO_DATE.findall(text))


def _rag_item(r: dict[str, Any], as_of: date, notes: list[str]) -> EvidenceItem:
    t = r["ticker"]
    if r["track"] == "filing":
        title = f"{t} {r['form']} filed {r['filed']}" + (
            f" · {r['section']}" if r.get("section") else ""
        )
        available = r["filed"]
    else:
        title = f"{t} market {r['period']} ({r['start']} to {r['end']})"
        available = r["end"]
    parent = r.get("parent_text") or ""
    if r["track"] == "market" and _later(parent, as_of):
        # a month's parent is its quarter summary, which may run past as_of: never pass it on
        parent = ""
        notes.append(f"{r['id']}: its quarter summary runs past {as_of} and is withheld")
    keep = ("scores", "form", "section", "accession", "parent_id", "period", "source_path")
    meta = {k: r.get(k) for k in keep} | {"parent_text": parent}
    return EvidenceItem(r["id"], r["track"], r["text"], title, t, available, meta)


# --- Indicator-RAG -----------------------------------------------------------------------------


def _indicator_rag(q: Question, ctx: ConditionContext) -> Evidence:
    ev = Evidence("indicator_rag")
    if not _ready(q, ev):
        return ev
    assert q.as_of is not None
    start, end = _window(q)
    ev.items = indicator_items(q, ctx.con, start, end, ctx.cfg.runs.context_tokens, ev.notes)
    return ev


# --- Long-context, Forecast-summary ------------------------------------------------------------


def _long_context(q: Question, ctx: ConditionContext) -> Evidence:
    from fintrade_tui.runs.long_context import long_context_items

    ev = Evidence("long_context")
    if _ready(q, ev):
        assert q.as_of is not None
        ev.items = long_context_items(ctx.con, q.tickers, q.as_of, ctx.budget, ev.notes)
    return ev


def _forecast_summary(q: Question, ctx: ConditionContext) -> Evidence:
    from fintrade_tui.runs.forecast_summary import forecast_items  # lazy: statsforecast

    ev = Evidence("forecast_summary")
    if _ready(q, ev):
        assert q.as_of is not None
        ev.items = forecast_items(ctx.con, q.tickers, q.as_of, ctx.budget, ev.notes)
    return ev


# --- Oracle ------------------------------------------------------------------------------------


def _num(v: Any) -> str:
    """Enough digits to check against the store: 6 significant; volumes in full."""
    if not isinstance(v, int | float):
        return str(v)
    return f"{v:,.0f}" if abs(v) >= 1e6 else f"{v:.6g}"


_SPANS = {"FY": "fiscal year", "Q1": "quarter", "Q2": "quarter", "Q3": "quarter", "Q4": "quarter"}


def _oracle_text(con, t: str, name: str, o: dict[str, Any]) -> str:
    """One statement per figure, its period and the day it became known in one phrase: "AAPL
    return on equity 1.6059 for the fiscal year ended 2024-09-28, from the 10-K filed
    2024-11-01 (FY2024 FY; accession ...)". Said once: a small model read the figure stated
    twice, with two dates, as two periods."""
    head = f"{t} {long_label(name)} {_num(o.get('value'))}"
    if KIND.get(name) == "signal" or o.get("kind") == "signal":
        return f"{head} at the close of {_day(o.get('date'))} (source: {o.get('source')})"
    acc = o.get("accession")
    form = None
    if acc:
        hit = con.execute("SELECT form FROM filings WHERE accession = ?", [acc]).fetchone()
        form = hit[0] if hit else None
    fiscal = f"FY{o.get('fiscal_year')} {o.get('fiscal_period')}"
    span = _SPANS.get(str(o.get("fiscal_period")), "period")
    text = head + (f" for the {span} ended {_day(o['period_end'])}" if o.get("period_end") else "")
    known = _day(o.get("available_from"))
    if form:
        return f"{text}, from the {form} filed {known} ({fiscal}; accession {acc})"
    estimated = ", date estimated" if o.get("estimated") else ""
    return f"{text}, known from {known} ({fiscal}; source: {o.get('source')}{estimated})"


# a question about a direction over time: the golden value alone cannot show one
TREND = re.compile(
    r"\b(sustain\w*|improv\w*|trend\w*|declin\w*|deteriorat\w*|trajector\w*|consisten\w*"
    r"|over time|widen\w*|narrow\w*|strengthen\w*|weaken\w*)\b",
    re.IGNORECASE,
)


def _priors(
    con, as_of: date, t: str, name: str, o: dict[str, Any], meta: dict[str, Any]
) -> list[EvidenceItem]:
    """The two periods before the golden one, as known on `as_of` (a trend question's
    Oracle: "improving" needs the figures it improved from); same span, annual or quarterly."""
    from fintrade_tui.store.queries import prior_values

    end = _day(o["period_end"])
    if end is None:  # not a date: no period ends before it (as the query with NULL found)
        return []
    annual = str(o.get("fiscal_period")) == "FY"
    items = []
    for p in prior_values(con, t, name, as_of, end, annual):
        text = _oracle_text(con, t, name, p)
        title = (
            f"{t} {long_label(name)} = {_num(p['value'])} (period ended {_day(p['period_end'])})"
        )
        info = meta | {
            k: _day(v) if k in ("period_end", "available_from") else v for k, v in p.items()
        }
        info["prior"] = True
        pid = f"oracle:{t}:{name}:{_day(p['period_end'])}"
        items.append(EvidenceItem(pid, "oracle", text, title, t, _day(p["available_from"]), info))
    return items


def _oracle(q: Question, ctx: ConditionContext) -> Evidence:
    ev = Evidence("oracle")
    for t in q.tickers:
        for name in q.golden:
            o = (q.oracle.get(t) or {}).get(name)
            if not o:
                continue
            when = _day(o.get("available_from") or o.get("date"))
            if q.as_of is None or when is None or when > q.as_of:
                ev.notes.append(f"{t}:{name} left out: not dated on or before {q.as_of}")
                continue
            meta = {
                k: _day(v) if k in ("date", "period_end", "available_from") else v
                for k, v in o.items()
            }
            meta["indicator"] = name
            if name in RATIOS:
                meta["definition"] = RATIOS[name]
            text = _oracle_text(ctx.con, t, name, o)
            # the panel's line; the prompt shows the text alone, which says all of it
            title = f"{t} {long_label(name)} = {_num(o.get('value'))}"
            ev.items.append(
                EvidenceItem(f"oracle:{t}:{name}", "oracle", text, title, t, when, meta)
            )
            if name in RATIOS and o.get("period_end") and TREND.search(q.text):
                ev.items += _priors(ctx.con, q.as_of, t, name, o, meta)
    ev.notes += [f"missing: {m}" for m in q.coverage_missing]
    size = sum(approx_tokens(i.text) for i in ev.items)
    if size > ctx.cfg.runs.context_tokens:  # exact by design: never cut, only said
        ev.notes.append(f"oracle evidence is {size} tokens, over the evidence budget")
    for key, s in (q.oracle.get("supplied") or {}).items():
        value = s.get("value") if isinstance(s, dict) else s
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        s = s if isinstance(s, dict) else {"value": s}
        meta = {"source": s.get("source") or q.source, "document": s.get("document") or {}}
        # a table keeps its cells (drawn as a table), a benchmark's gold facts their mark
        meta |= {k: s[k] for k in ("kind", "rows", "gold", "label") if s.get(k) is not None}
        title = f"{key} (supplied with the question)"
        # dated by its document's filing when known; else given with the question, so known
        # when it is asked (as_of)
        when = _day(s.get("available_from")) or q.as_of
        ticker = (s.get("document") or {}).get("ticker")
        ev.items.append(EvidenceItem(f"context:{key}", "context", text, title, ticker, when, meta))
    return ev


_BUILDERS: dict[str, Callable[[Question, ConditionContext], Evidence]] = {
    "no_rag": _no_rag,
    "rag": _rag,
    "indicator_rag": _indicator_rag,
    "tool_use": _tool_use,
    "oracle": _oracle,
    "long_context": _long_context,
    "forecast_summary": _forecast_summary,
}


def _day(v: Any) -> date | None:
    try:
        return date.fromisoformat(str(v)[:10]) if v else None
    except ValueError:
        return None
