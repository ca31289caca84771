"""Company room: the queries behind the Universe and Company screens (no Textual here).

- `universe`: every ticker with data in the store (prices or filings), its reference name,
  sector and industry, price range, number of filings and of questions (counted in the
  workspace by `question_counts`, passed in: the workspace is a separate database).
- `quarters`: the quarters a ticker can be looked at, oldest first. Tickers with filings get
  their fiscal quarters, one per filing (a 10-K is the fourth quarter), available from the
  filing date. Tickers without filings get the quarters the vendor rows (sec_pit, polygon)
  report, on the company's fiscal calendar, available from their filing date; tickers with
  neither get the calendar quarter ends their prices cover, available `lag_days` after the
  quarter end and flagged `estimated`.
- `quarter_view`: the nine Table 6 fundamentals visible at the quarter's `as_of` (exactly what
  `snapshot(con, ticker, as_of)` returns), next to the previous quarter's values, with each
  value's source and filing, and a point-in-time badge.
- the charts' daily series around a quarter: company_chart.py.

All SQL is parameterized. Dates are `date` objects; "as of D" is after the close of D.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, timedelta
from typing import Any

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.store.company_text import display_rows, provenance, quarter_label
from fintrade_tui.store.queries import check_ticker, fundamentals_as_of, row_dicts, snapshot

# The nine fundamentals of Table 6, in display order, with their labels.
RATIO_LABELS: dict[str, str] = {
    "roa": "ROA",
    "roe": "ROE",
    "earnings_price": "Earnings/Price",
    "book_price": "Book/Price",
    "sales_assets": "Sales/Assets",
    "debt_assets": "Debt/Assets",
    "debt_equity": "Debt/Equity",
    "cashflow_assets": "Cash-flow/Assets",
    "dividend_yield": "Dividend yield",
}
DEFAULT_LAG = 90  # config `fundamentals.estimated_lag_days`
__all__ = ["display_rows", "provenance", "quarter_label"]  # the text forms, kept importable here


# -- universe ------------------------------------------------------------------------------


def question_counts(ws: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Questions per ticker in the workspace (a question naming several tickers counts for
    each). An empty or schema-less workspace gives {}."""
    try:
        cur = ws.execute(
            "SELECT t, count(*) FROM (SELECT unnest(tickers) AS t FROM questions) GROUP BY t"
        )
    except duckdb.CatalogException:
        return {}
    return {t: int(n) for t, n in cur.fetchall()}


def universe(
    con: duckdb.DuckDBPyConnection, question_counts: dict[str, int] | None = None
) -> list[dict[str, Any]]:
    """Every ticker with prices or filings, sorted: ticker, name, sector, industry,
    first_price, last_price, filings, questions (None when no counts are given), and its
    fundamentals coverage: coverage (filings | vendor | none), periods (quarters with a
    value), first_period, last_period."""
    rows = row_dicts(
        con.execute(
            """WITH t AS (SELECT DISTINCT ticker FROM prices
                          UNION SELECT DISTINCT ticker FROM filings),
                 px AS (SELECT ticker, min(date) AS first_price, max(date) AS last_price
                        FROM prices GROUP BY ticker),
                 fl AS (SELECT ticker, count(*) AS filings FROM filings GROUP BY ticker),
                 fu AS (SELECT ticker, count(DISTINCT coalesce(period_end, available_from))
                               AS periods, min(coalesce(period_end, available_from))
                               AS first_period, max(coalesce(period_end, available_from))
                               AS last_period
                        FROM fundamentals WHERE value IS NOT NULL GROUP BY ticker)
            SELECT t.ticker, c.name, c.sector, c.industry, px.first_price, px.last_price,
                   coalesce(fl.filings, 0) AS filings,
                   CASE WHEN fl.filings > 0 THEN 'filings' WHEN fu.periods > 0 THEN 'vendor'
                        ELSE 'none' END AS coverage,
                   coalesce(fu.periods, 0) AS periods, fu.first_period, fu.last_period
            FROM t LEFT JOIN companies c USING (ticker) LEFT JOIN px USING (ticker)
                   LEFT JOIN fl USING (ticker) LEFT JOIN fu USING (ticker)
            ORDER BY t.ticker"""
        )
    )
    for r in rows:
        r["questions"] = None if question_counts is None else question_counts.get(r["ticker"], 0)
    return rows


def filter_universe(rows: Iterable[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    """Rows whose ticker, name, sector or industry contains `text` (case-insensitive): the
    exact ticker first, then ticker prefixes, then the other matches, each in input order."""
    needle = text.strip().lower()
    if not needle:
        return list(rows)
    ranked: list[tuple[int, int, dict[str, Any]]] = []
    for i, r in enumerate(rows):
        ticker = r["ticker"].lower()
        hay = " ".join(str(r.get(k) or "") for k in ("ticker", "name", "sector", "industry"))
        if ticker == needle:
            ranked.append((0, i, r))
        elif ticker.startswith(needle):
            ranked.append((1, i, r))
        elif needle in hay.lower():
            ranked.append((2, i, r))
    return [r for _, _, r in sorted(ranked, key=lambda x: x[:2])]


def company_info(con: duckdb.DuckDBPyConnection, ticker: str) -> dict[str, Any]:
    """Reference data of a ticker (name, sector, industry, cik); None fields when unknown."""
    t = check_ticker(con, ticker)
    row = con.execute(
        "SELECT name, sector, industry, cik FROM companies WHERE ticker = ?", [t]
    ).fetchone()
    name, sector, industry, cik = row or (None, None, None, None)
    return {"ticker": t, "name": name, "sector": sector, "industry": industry, "cik": cik}


# -- quarters ------------------------------------------------------------------------------


_NO_FILING = dict(basis="calendar", form=None, filed=None, accession=None, estimated=True)


def _quarter_end(d: date) -> date:
    q_end_month = (d.month - 1) // 3 * 3 + 3
    nxt = date(d.year + (q_end_month == 12), q_end_month % 12 + 1, 1)
    return nxt - timedelta(days=1)


def _calendar_quarters(first: date, last: date, lag_days: int) -> list[dict[str, Any]]:
    out = []
    q = _quarter_end(first)
    while q <= last:
        period = f"Q{(q.month - 1) // 3 + 1}"
        row = {"key": f"CY{q.year} {period}", "fiscal_year": q.year, "fiscal_period": period}
        out.append({**row, **_NO_FILING, "period_end": q, "as_of": q + timedelta(days=lag_days)})
        q = _quarter_end(q + timedelta(days=1))
    return out


def quarters(
    con: duckdb.DuckDBPyConnection, ticker: str, lag_days: int = DEFAULT_LAG
) -> list[dict[str, Any]]:
    """The quarters with data, oldest first. Each: key ("FY2024 Q4" / "CY2024 Q4"), basis
    (fiscal | calendar), fiscal_year, fiscal_period (Q1..Q4), period_end, form, filed,
    accession (None without a filing), as_of and estimated (as_of = period end + lag)."""
    t = check_ticker(con, ticker)
    filings = row_dicts(
        con.execute(
            """SELECT fiscal_year, CASE WHEN fiscal_period = 'FY' THEN 'Q4'
                                       ELSE fiscal_period END AS fiscal_period,
                   period_end, form, filed, accession
            FROM filings WHERE ticker = ? AND period_end IS NOT NULL
            -- an amendment never replaces the first filing of a period (point in time)
            QUALIFY row_number() OVER (PARTITION BY period_end ORDER BY filed, accession) = 1
            ORDER BY period_end""",
            [t],
        )
    )
    if filings:
        out = []
        for f in filings:
            key = (
                f"FY{f['fiscal_year']} {f['fiscal_period']}"
                if f["fiscal_year"] and f["fiscal_period"]
                else f"PE {f['period_end']}"
            )
            out.append(
                {"key": key, "basis": "fiscal", **f, "as_of": f["filed"], "estimated": False}
            )
        return out
    vendor = row_dicts(
        con.execute(
            """SELECT arg_min(fiscal_year, source <> 'sec_pit') AS fiscal_year,
                   arg_min(fiscal_period, source <> 'sec_pit') AS fiscal_period,
                   period_end, min(available_from) AS filed
            FROM fundamentals
            WHERE ticker = ? AND source <> 'filing' AND period_end IS NOT NULL AND NOT estimated
              AND (source = 'sec_pit' OR value IS NOT NULL)
            GROUP BY period_end ORDER BY period_end""",
            [t],
        )
    )
    if vendor:  # vendor quarters (sec_pit, polygon): each visible from its filing's date
        return [
            {
                "key": f"FY{v['fiscal_year']} {v['fiscal_period']}"
                if v["fiscal_year"]
                else f"PE {v['period_end']}",
                "basis": "fiscal",
                **v,
                "form": None,
                "accession": None,
                "as_of": v["filed"],
                "estimated": False,
            }
            for v in vendor
        ]
    bounds = con.execute(
        """SELECT min(d), max(d) FROM (
               SELECT date AS d FROM prices WHERE ticker = ?
               UNION ALL SELECT period_end FROM fundamentals WHERE ticker = ?)""",
        [t, t],
    ).fetchone()
    if bounds is None or bounds[0] is None:  # an aggregate always has its one row
        return []
    first, last = bounds
    return _calendar_quarters(first, last, lag_days)


def find_quarter(qs: list[dict[str, Any]], quarter: str | date | None) -> int:
    """Index of `quarter` in `qs`: None = the latest; a key ("FY2024 Q4", "fy2024q4",
    "2024Q4"); or a date (the quarter ending then, else the latest ending before it)."""
    if not qs:
        raise UserError("quarters", "this ticker has no quarter with data", "pick another ticker")
    if quarter is None:
        return len(qs) - 1
    when: date | None = quarter if isinstance(quarter, date) else None
    if isinstance(quarter, str):
        try:
            when = date.fromisoformat(quarter.strip())
        except ValueError:
            norm = re.sub(r"\s+", "", quarter).upper()
            for i, q in enumerate(qs):
                key = q["key"].replace(" ", "").upper()
                if norm in (key, key[2:]):
                    return i
    if when is not None:
        before = [i for i, q in enumerate(qs) if q["period_end"] <= when]
        if before:
            return before[-1]
    raise UserError(
        f"quarter {quarter!r}",
        "has no data",
        f"use one of {qs[0]['key']} .. {qs[-1]['key']} or a period end date",
    )


# -- one quarter ---------------------------------------------------------------------------


def _badge(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date, lag_days: int) -> str:
    last = con.execute(
        """SELECT form, filed FROM filings WHERE ticker = ? AND filed <= ?
        ORDER BY filed DESC, period_end DESC LIMIT 1""",
        [ticker, as_of],
    ).fetchone()
    if last:
        return f"as of {as_of}: filings up to {last[0]} filed {last[1]}"
    vendor = con.execute(
        """SELECT max(available_from), string_agg(DISTINCT source, ', ' ORDER BY source)
        FROM fundamentals WHERE ticker = ? AND source <> 'filing' AND NOT estimated
          AND available_from <= ?""",
        [ticker, as_of],
    ).fetchone()
    if vendor and vendor[0]:
        return f"as of {as_of}: no filings in the store; {vendor[1]} data filed up to {vendor[0]}"
    return (
        f"as of {as_of}: no filings in the store; vendor fundamentals "
        f"(estimated: period end + {lag_days} d)"
    )


def quarter_view(
    con: duckdb.DuckDBPyConnection,
    ticker: str,
    quarter: str | date | None = None,
    lag_days: int = DEFAULT_LAG,
) -> dict[str, Any]:
    """The nine fundamentals visible at the quarter's `as_of`, with the previous quarter's.

    Returns ticker, name, sector, industry, quarter (a `quarters` row), previous (the row
    before, or None), index, count, as_of, badge, price_date, close, and `rows`: per ratio
    (RATIO_LABELS order) ratio, label, value, previous, previous_source, change (value -
    previous; None when either is missing or they come from different sources), source,
    estimated, fiscal_year, fiscal_period, period_end (the period the value belongs to), form,
    filed (the value's filing, or when a vendor value became available), accession, flags
    (quality checks its inputs failed), contested (other sources that disagreed), split into
    contested_marked (those that earn the `≠` mark: store/contested.py) and contested_lower
    (lower-ranked sources close enough to stay detail), and gap (why a newer period has no
    value: a stale input, no source with debt, ...).
    """
    info = company_info(con, ticker)
    t = info["ticker"]
    qs = quarters(con, t, lag_days)
    i = find_quarter(qs, quarter)
    q, prev = qs[i], (qs[i - 1] if i > 0 else None)
    snap = snapshot(con, t, q["as_of"])
    now, gaps = snap["fundamentals"], snap["fundamentals_gaps"]
    before = fundamentals_as_of(con, t, prev["as_of"]) if prev else {}
    forms = dict(
        con.execute("SELECT accession, form FROM filings WHERE ticker = ?", [t]).fetchall()
    )
    from fintrade_tui.store.contested import source_ranks, split

    ranks = source_ranks(con)
    rows = []
    for ratio, label in RATIO_LABELS.items():
        cur, old = now.get(ratio), before.get(ratio)
        value = cur["value"] if cur else None
        pvalue = old["value"] if old else None
        comparable = bool(cur and old and cur["source"] == old["source"])
        rows.append(
            {
                "ratio": ratio,
                "label": label,
                "value": value,
                "previous": pvalue,
                "previous_source": old["source"] if old else None,
                # a change across sources (a vendor's ratio vs the filing's) is not a change
                "change": value - pvalue
                if comparable and value is not None and pvalue is not None
                else None,
                "source": cur["source"] if cur else None,
                "estimated": bool(cur["estimated"]) if cur else None,
                "fiscal_year": cur["fiscal_year"] if cur else None,
                "fiscal_period": cur["fiscal_period"] if cur else None,
                "period_end": cur["period_end"] if cur else None,
                "form": forms.get(cur["accession"]) if cur else None,
                "filed": cur["filed"] if cur else None,
                "accession": cur["accession"] if cur else None,
                "flags": cur.get("flags") if cur else None,
                "contested": cur.get("contested") if cur else None,
                "gap": gaps.get(ratio),  # why the latest period has no value, when it has none
            }
        )
        # `≠` only for a disagreement worth checking (store/contested.py); the rest is detail
        rows[-1]["contested_marked"], rows[-1]["contested_lower"] = split(rows[-1], ranks)
    return {
        **info,
        "quarter": q,
        "previous": prev,
        "index": i,
        "count": len(qs),
        "as_of": q["as_of"],
        "badge": _badge(con, t, q["as_of"], lag_days),
        "price_date": snap["price_date"],
        "close": snap["close"],
        "rows": rows,
    }
