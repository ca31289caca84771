"""Resolution room: a question's tickers, `as_of`, window and canonical indicators; then its
coverage (does the store hold what the golden indicators need at `as_of`?) and oracle evidence
(the golden indicators' values at `as_of`, through the same code as `snapshot`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from typing import Any

import duckdb

from fintrade_tui.questions.companies import CompanyIndex, index_members, scan_filter
from fintrade_tui.questions.document_filing import document_filing
from fintrade_tui.questions.fiscal import FiscalCalendar
from fintrade_tui.questions.indicators import KIND, map_indicators
from fintrade_tui.questions.kind import question_kind
from fintrade_tui.questions.knowable import knowable
from fintrade_tui.questions.supplied import supplied_evidence
from fintrade_tui.questions.timephrases import resolve_time
from fintrade_tui.store.queries import snapshots
from fintrade_tui.workspace.questions import FULL, NONE, PARTIAL, RESOLVED, UNRESOLVED, Question

LAG_DAYS = 90  # the config's default fundamentals.estimated_lag_days
STALE_DAYS = 7  # a signal older than this at `as_of` (no trading since) does not cover it


class Resolver:
    """Resolves questions against one store connection (company index built once)."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, reference: date, lag_days: int = LAG_DAYS
    ) -> None:
        self.con = con
        self.reference = reference
        self.lag_days = lag_days  # fundamentals.estimated_lag_days: period end -> estimated as_of
        self.companies = CompanyIndex(con)
        self.calendar = FiscalCalendar(con)
        self._snapshots: dict[tuple[str, date], dict[str, Any]] = {}

    def resolve(self, q: Question) -> Question:
        """Tickers, dates and indicators from the text; never drops a question, says why."""
        reasons: list[str] = []
        golden, unmapped = map_indicators(q.golden_raw)
        reasons += [f"indicator {u!r} is not computed by the store" for u in unmapped]
        mentions = self.companies.mentions(q.text)
        tickers = [m.ticker for m in mentions if m.ticker in self.companies.known]
        given = str(q.extra.get("ticker") or "").upper()
        if not tickers and given in self.companies.known:
            tickers = [given]  # SECQUE and similar sets name the company in a field
        absent = [m for m in mentions if m.ticker not in self.companies.known]
        if not tickers and absent:
            # a named company the store has no data for: still the question's company
            tickers = [m.ticker for m in absent]
        reasons += [
            f"{m.phrase} ({m.ticker}" + (f", CIK {m.cik}" if m.cik else "") + "): no data in store"
            for m in absent
        ]
        ref = resolve_time(q.text, self.reference)
        when = knowable(q, ref, tickers, self.calendar, self.lag_days, question_kind(q))
        document = document_filing(q, self.companies.known, self.calendar, self.lag_days)
        if document is not None:  # a table-QA item: the report it comes from decides
            tickers, when = document
        as_of = when.as_of
        reasons += when.reasons
        if as_of is None and document is None:
            reasons.append("no time reference in the text")
        scope = "compare" if len(tickers) > 1 else "company" if tickers else None
        if not tickers and not mentions and document is None:  # a scan names no company
            is_scan, filt = scan_filter(q.text)
            if is_scan and as_of:
                tickers = index_members(self.con, as_of, filt)
                scope = "market_scan"
                reasons.append(
                    f"market scan: {len(tickers)} index members on {as_of}"
                    + (f" ({filt[0]} {filt[1]})" if filt else "")
                )
            elif not mentions:
                reasons.append("no company named and not a market scan")
        status = RESOLVED if tickers and as_of else UNRESOLVED
        extra = dict(q.extra)
        extra["as_of_basis"] = when.basis
        extra.pop("fiscal_periods", None)
        if when.periods:
            extra["fiscal_periods"] = [p.as_dict() for p in when.periods]
        if ref:
            extra["time_phrase"] = {
                "phrase": ref.phrase,
                "span": list(ref.span),
                "kind": ref.kind,
                "phrase_kind": ref.anchor_kind or ref.kind,  # what the phrase itself names
            }
        extra["company_mentions"] = [
            {"ticker": m.ticker, "phrase": m.phrase, "span": list(m.span)}
            | ({"cik": m.cik, "sec_title": m.name} if m.cik else {})
            | ({} if m.ticker in self.companies.known else {"in_store": False})
            for m in mentions
        ]
        return replace(
            q,
            tickers=tickers,
            scope=scope,
            as_of=as_of,
            window_start=when.start or as_of,
            window_end=as_of,
            golden=golden,
            status=status,
            reasons=reasons,
            extra=extra,
        )

    def snaps(self, tickers: list[str], as_of: date) -> dict[str, dict[str, Any]]:
        """Snapshots of the store's `tickers` on `as_of`, those not read yet in one batch."""
        todo = [t for t in tickers if (t, as_of) not in self._snapshots]
        if todo:
            for t, s in snapshots(self.con, todo, as_of).items():
                self._snapshots[(t, as_of)] = s
        return {t: self._snapshots[(t, as_of)] for t in tickers}

    def evidence(self, q: Question) -> Question:
        """Coverage status and oracle evidence at `as_of` for a resolved question.

        Context a benchmark supplies with the question (SECQUE's filing excerpts, FinAR's table)
        is oracle evidence as given, under the key `supplied`.
        """
        supplied = supplied_evidence(q)  # each excerpt once, with its document and date
        if supplied and not q.golden:
            return replace(q, oracle={"supplied": supplied}, coverage=FULL, coverage_missing=[])
        if q.status != RESOLVED or not q.as_of:
            return replace(q, oracle={"supplied": supplied}) if supplied else q
        oracle: dict[str, dict[str, Any]] = {}
        missing: list[str] = []
        found = 0
        snaps = self.snaps([t for t in q.tickers if t in self.companies.known], q.as_of)
        for t in q.tickers:
            if t not in self.companies.known:
                missing += [
                    f"{t}:{name}: no data for this ticker in the store" for name in q.golden
                ]
                continue
            s = snaps[t]
            for name in q.golden:
                item, why = _value(s, name, q.as_of)
                if item is None:
                    missing.append(f"{t}:{name}: {why}")
                else:
                    oracle.setdefault(t, {})[name] = item
                    found += 1
        total = len(q.tickers) * len(q.golden)
        coverage = FULL if found == total and total else PARTIAL if found else NONE
        if supplied:
            oracle["supplied"] = supplied
        return replace(q, oracle=oracle, coverage=coverage, coverage_missing=missing)


def _value(s: dict[str, Any], name: str, as_of: date) -> tuple[dict[str, Any] | None, str]:
    """One indicator's value with provenance from a snapshot, or why it is missing."""
    if KIND.get(name) == "ratio":
        f = s["fundamentals"].get(name)
        if not f:
            gap = (s.get("fundamentals_gaps") or {}).get(name)
            return None, gap or "no filing or vendor value available by as_of"
        return {
            "value": f["value"],
            "kind": "ratio",
            "source": f["source"],
            "fiscal_year": f["fiscal_year"],
            "fiscal_period": f["fiscal_period"],
            "period_end": f["period_end"],
            "available_from": f["filed"],
            "accession": f["accession"],
            "estimated": f["estimated"],
            # other sources that disagreed, and checks an input failed (reconciled at ingest)
            "contested": f.get("contested"),
            "flags": f.get("flags"),
        }, ""
    if s["price_date"] is None:
        return None, "no prices on or before as_of"
    if s["price_date"] < as_of - timedelta(days=STALE_DAYS):
        return None, f"last price {s['price_date']} is stale at as_of"
    v = s["signals"].get(name)
    if v is None:
        return None, "not enough price history for this signal"
    return {
        "value": v,
        "kind": "signal",
        "source": f"signals ({s['price_source']} prices)",
        "date": s["price_date"],
        "available_from": s["price_date"],
    }, ""
