"""Indicator-RAG room: the store's precomputed tables for a question — per ticker its
fundamentals at as_of and its Table-6 signals sampled over the window, or one cross-section for
market scans — the same standard set for every question (never chosen from the golden list),
shrunk to the evidence token budget least useful first, every cut noted."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.fundamentals.concepts import RATIOS
from fintrade_tui.runs.tools import cross_section
from fintrade_tui.store.queries import fundamentals_as_of, signals_between
from fintrade_tui.workspace.evidence import EvidenceItem, approx_tokens
from fintrade_tui.workspace.questions import Question

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
        notes.append(f"no close in the week to {as_of}, left out: {some_names(missing)}")
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


def some_names(names: list[str], n: int = 20) -> str:
    """The first n names, and how many more (notes stay one line)."""
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def indicator_items(
    q: Question,
    con: duckdb.DuckDBPyConnection,
    start: date | None,
    end: date,
    budget: int,
    notes: list[str],
) -> list[EvidenceItem]:
    """The tables for `q` as evidence items (q.as_of set; the window already clipped to it)."""
    assert q.as_of is not None
    tables: list[_Table | None] = []
    if q.scope == "market_scan":
        tables.append(_cross_table(con, list(q.tickers), q.as_of, notes))
    else:
        for t in dict.fromkeys(q.tickers):
            try:
                tables.append(_ratios_table(con, t, q.as_of))
                tables.append(_signals_table(con, t, start, end))
            except UserError:
                notes.append(f"{t} is not in the store: no tables")
    kept = _fit([t for t in tables if t], budget, notes)
    return [t.item() for t in kept]
