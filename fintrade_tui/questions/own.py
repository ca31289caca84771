"""Questions room: the analyst's own questions (source `own`, ids `OWN-1`, `OWN-2`, ...).

- `own_question`: a question typed by the analyst about given tickers at a given as-of, with
  golden indicators (suggested from the text by `suggest_indicators`, the importers' reading of
  indicator names) and an optional reference; checked (`check_inputs`: one `UserError` per bad
  field, named in `where`) and resolved like any other (coverage, oracle evidence at as-of).
- `variant_of`: one benchmark question asked of another ticker and/or quarter (the `scale`
  machinery for one item): company names and the time phrase rewritten, golden indicators
  kept, marked as a variant of its seed (`parent_id`), its reference left empty (the seed's
  reference belongs to the seed's company).
- `default_as_of`: the day a quarter's filing was known (the Company screen's quarter).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING

from fintrade_tui.errors import UserError
from fintrade_tui.questions.indicators import KIND, SYNONYMS, map_indicators
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.questions.scale import rewrite_for
from fintrade_tui.questions.timephrases import describe
from fintrade_tui.workspace.questions import RESOLVED, Question

if TYPE_CHECKING:
    import duckdb

    from fintrade_tui.workspace.connection_api import Connection

SOURCE = "own"
PREFIX = "OWN-"
ANALYST_BASIS = {"kind": "analyst", "detail": "as of given with the question"}


def _pattern(synonym: str) -> re.Pattern[str]:
    words = r"[\s_\-]+".join(re.escape(w) for w in re.split(r"[\s_\-]+", synonym))
    # short abbreviations ("MA", "E/P", "ROE") only as written, in capitals: "ma" is a word
    flags = 0 if len(synonym) <= 4 or synonym.isupper() else re.IGNORECASE
    return re.compile(rf"(?<![\w/]){words}(?![\w/])", flags)


_SUGGEST = sorted(
    ((s, name) for name, names in SYNONYMS.items() for s in names if s.lower() != "yield"),
    key=lambda p: -len(p[0]),
)
_PATTERNS = [(_pattern(s), name) for s, name in _SUGGEST]


def suggest_indicators(text: str) -> list[str]:
    """The store's indicators the text names, in the order it names them (longest names first,
    so "medium-term momentum" is not also "momentum")."""
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    for pat, name in _PATTERNS:
        for m in pat.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append(m.span())
            found.append((m.start(), name))
    out: list[str] = []
    for _, name in sorted(found):
        if name not in out:
            out.append(name)
    return out


def split_list(value: str | list[str] | None) -> list[str]:
    """ "NVDA, AMD" or ["NVDA", "AMD"] -> ["NVDA", "AMD"] (commas or spaces, blanks dropped)."""
    items = value if isinstance(value, list) else re.split(r"[,\s]+", value or "")
    return [i.strip() for i in items if i and i.strip()]


def split_indicators(value: str | list[str] | None) -> list[str]:
    """Indicators are separated by commas or `|` ("Debt/Equity, RSI"); names may hold spaces."""
    items = value if isinstance(value, list) else re.split(r"[,|]", value or "")
    return [i.strip() for i in items if i and i.strip()]


def parse_as_of(value: str | None) -> date | None:
    """ "2025-11-19" -> that day; blank -> None; anything else is one UserError."""
    text = (value or "").strip()
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise UserError(f"as-of {text!r}", "is not a date", "use YYYY-MM-DD") from None


def _data_start(con: duckdb.DuckDBPyConnection, tickers: list[str]) -> tuple[str, date] | None:
    """The latest first price day among the tickers: before it one of them has no data."""
    rows = con.execute(
        "SELECT ticker, min(date) FROM prices WHERE list_contains(?::VARCHAR[], ticker)"
        " GROUP BY ticker ORDER BY 2 DESC LIMIT 1",
        [tickers],
    ).fetchall()
    return (rows[0][0], rows[0][1]) if rows else None


def check_inputs(
    r: Resolver,
    text: str,
    tickers: list[str],
    as_of: date | None,
    indicators: list[str],
    today: date,
) -> tuple[list[str], list[str]]:
    """The tickers (upper case, in the store) and canonical golden indicators, or a UserError
    whose `where` names the field to fix: text, ticker, as-of or indicators."""
    if not text.strip():
        raise UserError("question text", "is empty", "type the question")
    if not tickers:
        raise UserError("ticker", "none given", "name at least one ticker, e.g. NVDA")
    ts = [t.upper() for t in tickers]
    for t in ts:
        if t not in r.companies.known:
            raise UserError(
                f"ticker {t!r}", "is not in the store", "use a ticker the Universe lists"
            )
    if as_of is None:
        raise UserError("as-of", "is empty", "give a date as YYYY-MM-DD")
    if as_of > today:
        raise UserError(f"as-of {as_of}", f"is after today ({today})", "use a date up to today")
    start = _data_start(r.con, ts)
    if start and as_of < start[1]:
        raise UserError(
            f"as-of {as_of}",
            f"is before the store's data for {start[0]} (prices from {start[1]})",
            f"use a date from {start[1]} to {today}",
        )
    golden, unknown = map_indicators(indicators)
    if unknown:
        raise UserError(
            "indicators " + ", ".join(repr(u) for u in unknown),
            "are not indicators the store computes",
            "use names such as ROE, Debt/Equity, RSI, MACD or leave them empty",
        )
    return ts, golden


def category_of(golden: list[str]) -> str:
    """F (fundamentals), T (trading), FT (both), as FinTradeBench names them; else `other`."""
    kinds = {KIND.get(g) for g in golden}
    single: dict[frozenset[str | None], str] = {
        frozenset({"ratio"}): "F",
        frozenset({"signal"}): "T",
    }
    return single.get(frozenset(kinds), "FT" if kinds >= {"ratio", "signal"} else "other")


def next_id(ws: Connection) -> str:
    """The next id of the analyst's series: OWN-<one more than the largest>."""
    row = ws.execute(
        "SELECT coalesce(max(try_cast(substr(id, ?) AS INT)), 0) FROM questions"
        " WHERE starts_with(id, ?)",
        [len(PREFIX) + 1, PREFIX],
    ).fetchone()
    n = row[0] if row is not None else 0  # an aggregate gives its one row
    return f"{PREFIX}{int(n) + 1}"


def _resolved(r: Resolver, q: Question, tickers: list[str], as_of: date) -> Question:
    """Resolved at the given tickers and as-of (the analyst's word beats the text's), with the
    coverage and oracle evidence at as-of."""
    rq = r.resolve(replace(q, extra=dict(q.extra)))
    start = rq.window_start if rq.window_start and rq.window_start <= as_of else as_of
    extra = rq.extra | {"as_of_basis": ANALYST_BASIS}
    notes = [x for x in rq.reasons if x.startswith("indicator ")]
    rq = replace(
        rq,
        tickers=tickers,
        scope="compare" if len(tickers) > 1 else "company",
        as_of=as_of,
        window_start=start,
        window_end=as_of,
        golden=q.golden,
        status=RESOLVED,
        reasons=notes,
        extra=extra,
    )
    return r.evidence(rq)


def own_question(
    r: Resolver,
    qid: str,
    text: str,
    tickers: list[str],
    as_of: date | None,
    indicators: list[str],
    reference: str | None,
    today: date,
) -> Question:
    """The analyst's question, checked and resolved (not stored: `save_version` does)."""
    ts, golden = check_inputs(r, text, tickers, as_of, indicators, today)
    assert as_of is not None  # checked
    q = Question(
        id=qid,
        source=SOURCE,
        category=category_of(golden),
        text=text.strip(),
        reference_answer=(reference or "").strip() or None,
        golden_raw=list(indicators),
        golden=golden,
    )
    return _resolved(r, q, ts, as_of)


def variant_of(
    r: Resolver, seed: Question, qid: str, tickers: list[str], as_of: date | None, today: date
) -> Question:
    """The seed asked of other tickers and/or another as-of: the company names and the time
    phrase in the text rewritten, golden indicators kept, no reference."""
    ts = [t.upper() for t in tickers] or list(seed.tickers)
    when = as_of or seed.as_of
    if len(ts) != len(seed.tickers) and seed.scope != "market_scan":
        raise UserError(
            f"tickers {','.join(ts)}",
            f"are {len(ts)} where {seed.id} names {len(seed.tickers)}",
            f"give {len(seed.tickers)} ticker(s), one for each of {', '.join(seed.tickers)}",
        )
    ts, golden = check_inputs(r, seed.text, ts, when, list(seed.golden), today)
    assert when is not None
    mentions = seed.extra.get("company_mentions", [])
    swap = dict(zip(seed.tickers, ts, strict=False))
    names = {
        k: r.companies.display_name(swap[m["ticker"]])
        for k, m in enumerate(mentions)
        if m.get("ticker") in swap and swap[m["ticker"]] != m["ticker"]
    }
    time_text = None
    tp = seed.extra.get("time_phrase")
    if tp and when != seed.as_of:
        kind = tp.get("phrase_kind", "month")
        kind = kind if kind in ("day", "quarter", "fiscal_quarter", "year") else "month"
        time_text = describe(kind, when, when.replace(day=1))
    text = rewrite_for(seed, names, time_text)
    q = Question(
        id=qid,
        source=SOURCE,
        category=seed.category,
        text=text,
        reference_answer=None,
        golden_raw=list(seed.golden_raw),
        golden=golden or list(seed.golden),
        parent_id=seed.id,
        extra={"variant_of": seed.id, "seed_text": seed.text, "seed_source": seed.source},
    )
    return _resolved(r, q, ts, when)


def default_as_of(con: duckdb.DuckDBPyConnection, ticker: str, lag_days: int) -> date | None:
    """The day the ticker's latest quarter's filing was known (the Company screen's as-of)."""
    from fintrade_tui.store.company import quarters

    qs = quarters(con, ticker, lag_days)
    return qs[-1]["as_of"] if qs else None
