"""FinAR task room: FinAR-Bench-style tasks generated from one company's 10-K XBRL facts.

Three task types for (ticker, fiscal year Y), all with ground truth computed from the company
totals (non-dimensional facts) of the fiscal-Y 10-K, which also reports the Y-1 comparatives:

- `fact`: extract a named item (revenue, net income, ...) for fiscal Y and Y-1;
- `indicator`: compute a ratio (ROE, ROA, current ratio, ...) for fiscal Y, to 4 decimals;
- `reasoning`: judge a condition ("ROE increases from FY Y-1 to FY Y") as True/False.

Flows are full-year durations (350-380 days) ending at the fiscal-year end; stocks are
instants at the fiscal-year ends. Each item takes the first concept in its list that the 10-K
reports for both years (else, for Y-only uses, the first that it reports for Y).
"""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from typing import Any, NamedTuple

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.fundamentals.concepts import FLOWS, STOCKS
from fintrade_tui.workspace.questions import Question

SOURCE = "finar_generated"
ANNUAL_DAYS = (350, 380)


class Item(NamedTuple):
    key: str
    label: str
    flow: bool  # duration (flow) or instant (stock)
    concepts: tuple[str, ...]
    per_share: bool = False


ITEMS = (
    Item("revenue", "Revenue", True, tuple(FLOWS["revenue"])),
    Item("net_income", "Net income", True, tuple(FLOWS["net_income"])),
    Item("total_assets", "Total assets", False, tuple(STOCKS["total_assets"])),
    Item("total_liabilities", "Total liabilities", False, ("Liabilities",)),
    Item(
        "shareholders_equity", "Shareholders' equity", False, tuple(STOCKS["shareholders_equity"])
    ),
    Item("operating_cash_flow", "Operating cash flow", True, tuple(FLOWS["operating_cash_flow"])),
    Item("current_assets", "Current assets", False, ("AssetsCurrent",)),
    Item("current_liabilities", "Current liabilities", False, ("LiabilitiesCurrent",)),
    Item(
        "cash",
        "Cash and cash equivalents",
        False,
        ("CashAndCashEquivalentsAtCarryingValue", "Cash"),
    ),
    Item(
        "eps_diluted",
        "Diluted EPS",
        True,
        ("EarningsPerShareDiluted", "EarningsPerShareBasicAndDiluted"),
        per_share=True,
    ),
)

BY_KEY = {item.key: item for item in ITEMS}

# key -> (name, numerator item, denominator item); the formula text follows from the items
INDICATORS: dict[str, tuple[str, str, str]] = {
    "roe": ("ROE", "net_income", "shareholders_equity"),
    "roa": ("ROA", "net_income", "total_assets"),
    "current_ratio": ("current ratio", "current_assets", "current_liabilities"),
    "debt_to_assets": ("debt-to-assets ratio", "total_liabilities", "total_assets"),
    "net_profit_margin": ("net profit margin", "net_income", "revenue"),
    "asset_turnover": ("asset turnover", "revenue", "total_assets"),
    "ocf_ratio": ("operating cash flow ratio", "operating_cash_flow", "current_liabilities"),
}

# key -> (statement template, measure: an indicator or item key, True when it should go up)
CONDITIONS: dict[str, tuple[str, str, bool]] = {
    "roe_increases": ("ROE increases from FY{p} to FY{y}", "roe", True),
    "current_ratio_increases": (
        "The current ratio increases from FY{p} to FY{y}",
        "current_ratio",
        True,
    ),
    "revenue_growth_positive": (
        "Revenue growth from FY{p} to FY{y} is greater than 0",
        "revenue",
        True,
    ),
    "net_profit_margin_increases": (
        "Net profit margin increases from FY{p} to FY{y}",
        "net_profit_margin",
        True,
    ),
    "debt_to_assets_decreases": (
        "The debt-to-assets ratio decreases from FY{p} to FY{y}",
        "debt_to_assets",
        False,
    ),
}

Fact = dict[str, Any]
Period = tuple[date, date]  # (start, end) of a fiscal year


def _ten_k(con: duckdb.DuckDBPyConnection, ticker: str, year: int) -> tuple[str, date, date | None]:
    row = con.execute(
        """SELECT accession, filed, period_end FROM filings
        WHERE ticker = ? AND fiscal_year = ? AND form IN ('10-K', '10-K/A')
        ORDER BY form = '10-K' DESC, filed DESC LIMIT 1""",
        [ticker, year],
    ).fetchone()
    if not row:
        raise UserError(
            f"{ticker} fiscal {year}",
            "has no 10-K in the store",
            f"see `fintrade-tui facts {ticker} --concept Revenues` for the filings it holds,"
            " or add the 10-K to the bundle and re-run ingest",
        )
    return row[0], row[1], row[2]


def _periods(
    con: duckdb.DuckDBPyConnection, accession: str, period_end: date | None
) -> list[Period]:
    """The filing's fiscal years, latest first: the most cited full-year duration contexts."""
    rows = con.execute(
        """SELECT start_date, end_date, count(*) FROM facts
        WHERE accession = ? AND NOT dimensional AND start_date IS NOT NULL
          AND date_diff('day', start_date, end_date) BETWEEN ? AND ?
        GROUP BY ALL""",
        [accession, *ANNUAL_DAYS],
    ).fetchall()
    per_end: dict[date, Counter[date]] = {}
    for start, end, n in rows:
        per_end.setdefault(end, Counter())[start] += n
    ends = sorted(per_end, reverse=True)
    if period_end is not None:  # the filing's own year first, even if a later context exists
        ends.sort(key=lambda e: (abs((e - period_end).days) > 7, -e.toordinal()))
    out: list[Period] = []
    for end in ends:  # each next year must end just before the previous one starts
        if not out or out[-1][0] - timedelta(days=10) <= end < out[-1][0]:
            out.append((per_end[end].most_common(1)[0][0], end))
    return out


def _load(con: duckdb.DuckDBPyConnection, accession: str) -> list[Fact]:
    concepts = sorted({c for item in ITEMS for c in item.concepts})
    cur = con.execute(
        """SELECT concept, value, unit, start_date, end_date, instant FROM facts
        WHERE accession = ? AND NOT dimensional AND list_contains(?, concept)
          AND value IS NOT NULL
        ORDER BY unit ILIKE '%USD%' DESC, unit""",
        [accession, concepts],
    )
    names = ("concept", "value", "unit", "start", "end", "instant")
    return [dict(zip(names, r, strict=True)) | {"accession": accession} for r in cur.fetchall()]


def _find(facts: list[Fact], item: Item, concept: str, period: Period) -> Fact | None:
    for f in facts:
        if f["concept"] != concept:
            continue
        if item.flow and f["end"] == period[1] and f["start"] is not None:
            if ANNUAL_DAYS[0] <= (f["end"] - f["start"]).days <= ANNUAL_DAYS[1]:
                return f
        elif not item.flow and f["instant"] == period[1]:
            return f
    return None


def _pick(facts: list[Fact], item: Item, cur: Period, prev: Period | None) -> list[Fact | None]:
    """[fact for Y, fact for Y-1] of the first concept with both; else the first with Y."""
    found = [
        [_find(facts, item, c, cur), prev and _find(facts, item, c, prev)] for c in item.concepts
    ]
    for pair in found:
        if pair[0] and pair[1]:
            return pair
    return next(([p[0], None] for p in found if p[0]), [None, None])


def _cite(f: Fact) -> dict[str, Any]:
    iso = {k: f[k].isoformat() if f[k] else None for k in ("start", "end", "instant")}
    return {"concept": f["concept"], "value": f["value"], **iso, "accession": f["accession"]}


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.4f}".rstrip("0").rstrip(".")


def _unit(f: Fact, item: Item) -> str:
    unit = "/".join(part.split(":")[-1] for part in (f["unit"] or "").split("/"))
    return f"{unit}/share" if item.per_share and "/" not in unit else unit


def finar_tasks(con: duckdb.DuckDBPyConnection, ticker: str, fiscal_year: int) -> list[Question]:
    """FinAR-style fact, indicator and reasoning tasks for `ticker`'s fiscal-year 10-K."""
    t = ticker.strip().upper()
    accession, filed, period_end = _ten_k(con, t, fiscal_year)
    periods = _periods(con, accession, period_end)
    if not periods:
        raise UserError(
            f"{t} fiscal {fiscal_year} 10-K {accession}",
            "has no full-year duration facts",
            f"see `fintrade-tui facts {t} --concept Revenues`",
        )
    cur, prev = periods[0], periods[1] if len(periods) > 1 else None
    row = con.execute("SELECT name FROM companies WHERE ticker = ?", [t]).fetchone()
    name = row[0] if row and row[0] else t
    facts = _load(con, accession)
    vals = {item.key: _pick(facts, item, cur, prev) for item in ITEMS}
    y, p = f"FY{fiscal_year}", f"FY{fiscal_year - 1}"
    out: list[Question] = []

    def add(
        kind: str, key: str, text: str, answer: str, truth: Any, used: list, **more: Any
    ) -> None:
        n = sum(q.category == kind for q in out) + 1
        extra = {"ground_truth": truth, "task_type": kind, "item": key, "fiscal_year": fiscal_year}
        out.append(
            Question(
                id=f"FINAR-{t}-FY{fiscal_year}-{kind}-{n}",
                source=SOURCE,
                category=kind,
                text=text,
                reference_answer=answer,
                tickers=[t],
                scope="company",
                as_of=filed,
                window_start=cur[0],
                window_end=cur[1],
                extra=extra | more | {"facts": [_cite(f) for f in used]},
            )
        )

    for item in ITEMS:
        now, before = vals[item.key]
        if now and before:
            unit = _unit(now, item)
            text = (
                f"From {name}'s fiscal {fiscal_year} 10-K, extract {item.label} for fiscal"
                f" {fiscal_year} and fiscal {fiscal_year - 1}."
            )
            answer = f"{y}: {_fmt(now['value'])} {unit}; {p}: {_fmt(before['value'])} {unit}"
            truth = {y: now["value"], p: before["value"]}
            add("fact", item.key, text, answer, truth, [now, before], unit=unit)

    def ratio(key: str, idx: int) -> tuple[float, list[Fact]] | None:
        _, num, den = INDICATORS[key]
        a, b = vals[num][idx], vals[den][idx]
        return (a["value"] / b["value"], [a, b]) if a and b and b["value"] else None

    for key, (label, num, den) in INDICATORS.items():
        if got := ratio(key, 0):
            a, b = BY_KEY[num], BY_KEY[den]
            year_end = "year-end " if a.flow and not b.flow else ""
            formula = f"{a.label.lower()} / {year_end}{b.label.lower()}"
            text = (
                f"Using {name}'s fiscal {fiscal_year} 10-K, compute the {label} for fiscal"
                f" {fiscal_year} ({formula}), rounded to 4 decimals."
            )
            value = round(got[0], 4)
            add("indicator", key, text, f"{value:.4f}", value, got[1], value_unrounded=got[0])

    for key, (template, measure, up) in CONDITIONS.items():
        if measure in INDICATORS:
            pair = [ratio(measure, 0), ratio(measure, 1)]
            if not (pair[0] and pair[1]):
                continue
            (now_v, now_f), (before_v, before_f) = pair[0], pair[1]
        else:
            now, before = vals[measure]
            if not (now and before):
                continue
            (now_v, now_f), (before_v, before_f) = (
                (now["value"], [now]),
                (before["value"], [before]),
            )
        holds = now_v > before_v if up else now_v < before_v
        statement = template.format(p=fiscal_year - 1, y=fiscal_year)
        text = f"Based on {name}'s fiscal {fiscal_year} 10-K, true or false: {statement}."
        add(
            "reasoning", key, text, str(holds), holds, now_f + before_f,
            statement=statement, values={y: now_v, p: before_v},
        )  # fmt: skip
    return out
