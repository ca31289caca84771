"""Conditions room: the evidence each of the five conditions gives a model for one question.

Every builder is point-in-time at `q.as_of`: nothing dated after it is ever shown. No-RAG and
Tool-Use give no items up front (Tool-Use tools run during the model call, see runs.tools);
RAG retrieves filing passages and market chunks; Indicator-RAG shows the same standard store
tables for every question (never chosen from the golden list); Oracle shows exactly the golden
indicators' values with their provenance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import duckdb

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.fundamentals.concepts import RATIOS
from fintrade_tui.questions.indicators import KIND
from fintrade_tui.questions.model import Question
from fintrade_tui.retrieval.chunks import approx_tokens
from fintrade_tui.runs.evidence import CONDITIONS, Evidence, EvidenceItem
from fintrade_tui.runs.tools import cross_section, long_label
from fintrade_tui.store.queries import fundamentals_as_of, signals_between

# Indicator-RAG's standard set: the paper's Table 6 signals (plus adj_close, the price under them)
# fmt: off
TABLE6 = ["ma_20", "ema_20", "macd", "macd_signal", "rsi_14", "obv", "one_day_reversal",
          "max_return_20d", "momentum_5d", "momentum_20d", "mean_reversal_60d",
          "short_term_reversal_1m"]
# market scans: one cross-sectional table of signals comparable across stocks, and a few ratios
SCAN_SIGNALS = ["momentum_20d", "rsi_14", "mean_reversal_60d", "momentum_5d", "max_return_20d",
                "short_term_reversal_1m"]
SCAN_RATIOS = ["roe", "earnings_price", "debt_equity"]
# what goes first when the tables are over the token budget (least useful first)
DROP_ORDER = ["forecast_earnings_price", "obv", "one_day_reversal", "dividend_yield", "ema_20",
              "macd_signal", "max_return_20d", "book_price", "short_term_reversal_1m",
              "momentum_5d", "sales_assets", "cashflow_assets", "debt_assets", "mean_reversal_60d",
              "ma_20", "macd", "filed"]
# fmt: on
RATIO_COLUMNS = ("ratio", "value", "fiscal period", "period end", "available", "source")
# retrieval's one-line errors for "nothing indexed" (the only ones that become notes)
NOT_INDEXED = "has nothing in the retrieval index"
NOT_BUILT = "the retrieval index was never built"
ISO_DATE = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


@dataclass
class ConditionContext:
    cfg: Config
    con: duckdb.DuckDBPyConnection  # the store, read-only


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
    tickers, dropped, rows = list(dict.fromkeys(q.tickers)), [], []
    budget = ctx.cfg.runs.context_tokens
    while tickers:
        try:
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
            tickers.remove(gone[0])  # retrieval names one missing ticker at a time
            dropped.append(gone[0])
    if dropped:
        ev.notes.append(f"not in the retrieval index, left out: {_some(dropped)}")
    for r in rows:
        item = _rag_item(r, q.as_of, ev.notes)
        if item.available_from is None or item.available_from > q.as_of:
            ev.notes.append(f"{item.id} left out: not dated on or before {q.as_of}")
            continue
        ev.items.append(item)
    return ev


def _some(names: list[str], n: int = 20) -> str:
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


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


def _cell(v: Any) -> str:
    """Compact rounded numbers for the tables (4 significant digits; B/M for volumes)."""
    if v is None or isinstance(v, str | date):
        return "" if v is None else str(v)
    for scale, unit in ((1e9, "B"), (1e6, "M")):
        if abs(v) >= scale:
            return f"{v / scale:.4g}{unit}"
    return f"{v:.4g}"


@dataclass
class _Table:
    """A markdown table that the budget fitter can shrink by rows and by indicator."""

    id: str
    track: str
    ticker: str | None
    head: str
    kind: str  # series (rows = days) | ratios (rows = ratios) | cross (rows = tickers)
    columns: list[str]
    rows: list[dict[str, str]]
    available_from: date | None = None  # the latest date among the values shown
    meta: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        lines = [
            self.head,
            "| " + " | ".join(self.columns) + " |",
            "|---" * len(self.columns) + "|",
        ]
        lines += ["| " + " | ".join(r.get(c, "") for c in self.columns) + " |" for r in self.rows]
        return "\n".join(lines)

    def drop(self, name: str) -> bool:
        """Remove one indicator: a ratio's row, or a signal's column."""
        n = len(self.rows) + len(self.columns)
        if self.kind == "ratios":
            self.rows = [r for r in self.rows if r["ratio"] != name]
        elif name in self.columns and len(self.columns) > 2:
            self.columns.remove(name)
        return len(self.rows) + len(self.columns) < n

    def item(self) -> EvidenceItem:
        title = self.head.split(":")[0]
        return EvidenceItem(
            self.id, self.track, self.render(), title, self.ticker, self.available_from, self.meta
        )


def _ratios_table(con, t: str, as_of: date) -> _Table | None:
    found = {k: v for k, v in fundamentals_as_of(con, t, as_of).items() if v}
    if not found:
        return None
    forms = dict(
        con.execute("SELECT accession, form FROM filings WHERE ticker = ?", [t]).fetchall()
    )
    rows = []
    for name, f in found.items():
        src = f["source"]
        if f["accession"]:
            src = f"{forms.get(f['accession'], src)} {f['accession']}"
        period = f"FY{f['fiscal_year']} {f['fiscal_period']}"
        src += " (estimated date)" if f["estimated"] else ""
        cells = [name, f["value"], period, f["period_end"], f["filed"], src]
        rows.append(dict(zip(RATIO_COLUMNS, map(_cell, cells), strict=True)))
    head = (
        f"{t} fundamentals available on {as_of}: latest value of each ratio filed on or before "
        "that day (filing-derived first; vendor values fill gaps)"
    )
    cols = list(RATIO_COLUMNS)
    meta = {"kind": "fundamentals", "values": found, "definitions": {k: RATIOS[k] for k in found}}
    latest = max(f["filed"] for f in found.values())
    ident = f"store:{t}:fundamentals:{as_of}"
    return _Table(ident, "fundamental", t, head, "ratios", cols, rows, latest, meta)


def _sample(rows: list[dict]) -> tuple[list[dict], str]:
    """The first day, the last day of each week / month / quarter, and the last day."""
    if len(rows) <= 10:
        return rows, "every trading day"
    if len(rows) <= 45:
        key, how = (lambda d: d.isocalendar()[:2]), "week-ends"
    elif len(rows) <= 520:
        key, how = (lambda d: (d.year, d.month)), "month-ends"
    else:
        key, how = (lambda d: (d.year, (d.month - 1) // 3)), "quarter-ends"
    last: dict[Any, dict] = {}
    for r in rows:
        last[key(r["date"])] = r
    picked = {id(r): r for r in [rows[0], *last.values()]}
    return list(picked.values()), f"first day, {how} and last day"


def _signals_table(con, t: str, start: date | None, end: date) -> _Table | None:
    rows = signals_between(con, t, start, end) if start else []
    if len(rows) < 2:  # a one-day window: the last few trading days instead
        rows = signals_between(con, t, end - timedelta(days=14), end)[-5:]
        how, start = "last 5 trading days", None
    else:
        rows, how = _sample(rows)
    if not rows:
        return None
    src = con.execute(
        "SELECT source FROM prices WHERE ticker = ? AND date = ?", [t, rows[-1]["date"]]
    ).fetchone()
    first = start or rows[0]["date"]
    head = (
        f"{t} trading signals on the adjusted close ({src[0] if src else 'store'} prices), "
        f"{how}, {first} to {rows[-1]['date']}"
    )
    cols = ["date", "adj_close", *TABLE6]
    shown = [{c: _cell(r[c]) for c in cols} for r in rows]
    meta = {"kind": "signals", "sampling": how, "rows": rows}
    ident = f"store:{t}:signals:{first}..{end}"
    return _Table(ident, "signal", t, head, "series", cols, shown, rows[-1]["date"], meta)


def _cross_table(con, tickers: list[str], as_of: date, notes: list[str]) -> _Table | None:
    rows, missing = cross_section(con, tickers, as_of, SCAN_SIGNALS + SCAN_RATIOS)
    if missing:
        notes.append(f"no close in the week to {as_of}, left out: {_some(missing)}")
    if not rows:
        return None
    days = {r["date"] for r in rows}
    cols = ["ticker", *(["date"] if len(days) > 1 else []), *SCAN_SIGNALS, *SCAN_RATIOS, "filed"]
    shown = []
    for r in rows:
        f = r["fundamentals"]
        filed = max((v["filed"] for v in f.values()), default=None)
        cells = {n: _cell(r[n]) for n in SCAN_SIGNALS} | {
            n: _cell(f[n]["value"]) if n in f else "" for n in SCAN_RATIOS
        }
        shown.append(
            {"ticker": r["ticker"], "date": _cell(r["date"]), "filed": _cell(filed)} | cells
        )
    head = (
        f"Cross-section of {len(rows)} stocks as of {as_of}: signals on each one's last close on "
        f"or before {as_of} (adjusted close); ratios = latest filed by then (filed = the latest "
        "filing date among them)"
    )
    meta = {"kind": "cross_section", "rows": rows}
    latest = max(
        [r["date"] for r in rows] + [v["filed"] for r in rows for v in r["fundamentals"].values()]
    )
    return _Table(f"store:scan:{as_of}", "signal", None, head, "cross", cols, shown, latest, meta)


def _fit(tables: list[_Table], budget: int, notes: list[str]) -> list[_Table]:
    """Shrink the tables to `budget` tokens: oldest signal rows, then the least useful
    indicators, then rows, then whole tables; each step noted."""

    def size() -> int:
        return sum(approx_tokens(t.render()) for t in tables)

    steps: list[str] = []
    n = 0
    while size() > budget:
        series = [t for t in tables if t.kind == "series" and len(t.rows) > 2]
        if not series:
            break
        max(series, key=lambda t: len(t.rows)).rows.pop(0)
        n += 1
    if n:
        steps.append(f"{n} oldest signal rows")
    for name in DROP_ORDER:
        if size() <= budget:
            break
        if any([t.drop(name) for t in tables]):
            steps.append(name)
    n = 0
    while size() > budget:
        shrink = [t for t in tables if len(t.rows) > 1 and t.kind != "ratios"]
        if not shrink:
            break
        t = max(shrink, key=lambda t: len(t.rows))
        # a cross-section loses its emptiest row; a series its oldest day
        worst = max(t.rows[::-1], key=lambda r: sum(not r.get(c) for c in t.columns))
        t.rows.remove(worst if t.kind == "cross" else t.rows[0])
        n += 1
    if n:
        steps.append(f"{n} more rows")
    while len(tables) > 1 and size() > budget:
        steps.append(f"table {tables.pop().id}")
    if steps:
        notes.append(f"indicator tables cut to fit {budget} tokens: dropped {', '.join(steps)}")
    return tables


def _indicator_rag(q: Question, ctx: ConditionContext) -> Evidence:
    ev = Evidence("indicator_rag")
    if not _ready(q, ev):
        return ev
    assert q.as_of is not None
    start, end = _window(q)
    tables: list[_Table | None] = []
    if q.scope == "market_scan":
        tables.append(_cross_table(ctx.con, list(q.tickers), q.as_of, ev.notes))
    else:
        for t in dict.fromkeys(q.tickers):
            try:
                tables.append(_ratios_table(ctx.con, t, q.as_of))
                tables.append(_signals_table(ctx.con, t, start, end))
            except UserError:
                ev.notes.append(f"{t} is not in the store: no tables")
    kept = _fit([t for t in tables if t], ctx.cfg.runs.context_tokens, ev.notes)
    ev.items = [t.item() for t in kept]
    return ev


# --- Oracle ------------------------------------------------------------------------------------


def _day(v: Any) -> date | None:
    if v is None or isinstance(v, date):
        return v
    try:
        return date.fromisoformat(str(v)[:10])
    except ValueError:
        return None


def _num(v: Any) -> str:
    """Enough digits to check against the store: 6 significant; volumes in full."""
    if not isinstance(v, int | float):
        return str(v)
    return f"{v:,.0f}" if abs(v) >= 1e6 else f"{v:.6g}"


def _oracle_text(con, t: str, name: str, o: dict[str, Any]) -> str:
    head = f"{t} {long_label(name)} = {_num(o.get('value'))}"
    if KIND.get(name) == "signal" or o.get("kind") == "signal":
        return f"{head} — on the close of {_day(o.get('date'))}; source: {o.get('source')}"
    acc = o.get("accession")
    form = None
    if acc:
        hit = con.execute("SELECT form FROM filings WHERE accession = ?", [acc]).fetchone()
        form = hit[0] if hit else None
    parts = [f"{form or o.get('source')} FY{o.get('fiscal_year')} {o.get('fiscal_period')}"]
    if o.get("period_end"):
        parts.append(f"period ended {_day(o['period_end'])}")
    verb = "filed" if acc else "available from"
    parts.append(f"{verb} {_day(o.get('available_from'))}")
    text = f"{head} — {', '.join(parts)}"
    if acc:
        text += f" (accession {acc})"
    if form is None:
        text += f"; source: {o.get('source')}" + (" (date estimated)" if o.get("estimated") else "")
    return text


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
            title = f"{t} {long_label(name)} = {_num(o.get('value'))}"
            ev.items.append(
                EvidenceItem(f"oracle:{t}:{name}", "oracle", text, title, t, when, meta)
            )
    ev.notes += [f"missing: {m}" for m in q.coverage_missing]
    size = sum(approx_tokens(i.text) for i in ev.items)
    if size > ctx.cfg.runs.context_tokens:  # exact by design: never cut, only said
        ev.notes.append(f"oracle evidence is {size} tokens, over the evidence budget")
    for key, s in (q.oracle.get("supplied") or {}).items():
        value = s.get("value") if isinstance(s, dict) else s
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        meta = {"source": s.get("source") if isinstance(s, dict) else q.source}
        title = f"{key} (supplied with the question)"
        # given with the question, so known when it is asked: available on as_of
        ev.items.append(EvidenceItem(f"context:{key}", "context", text, title, None, q.as_of, meta))
    return ev


_BUILDERS: dict[str, Callable[[Question, ConditionContext], Evidence]] = {
    "no_rag": _no_rag,
    "rag": _rag,
    "indicator_rag": _indicator_rag,
    "tool_use": _tool_use,
    "oracle": _oracle,
}
