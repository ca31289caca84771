"""Numeric-audit room: the figures an answer states, each checked against the store at `as_of`.

Deterministic, no LLM. Each figure (value, percentage, multiple, price) is tied to the nearest
indicator named in its sentence and to the nearest company, then compared with the point-in-time
snapshot: SUPPORTED, CONTRADICTED or NOT_FOUND, with the store value's provenance and one line why.
The figures are read by the one figures reader (scoring/figures.py), which leaves out what is
not a figure (years, dates, numbering, step numbers, citations, windows); an indicator's own
parameter ("RSI(14)") is part of its name.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from fintrade_tui.audits.indicator_mentions import (
    LABEL_ALL,
    IndicatorMention,
    indicator_mentions,
)
from fintrade_tui.audits.verdicts import CONTRADICTED, NOT_FOUND, SUPPORTED
from fintrade_tui.errors import UserError
from fintrade_tui.questions.companies import CompanyIndex, Mention
from fintrade_tui.questions.indicators import KIND
from fintrade_tui.scoring.figure import Figure
from fintrade_tui.scoring.figures import figures
from fintrade_tui.store.queries import snapshot
from fintrade_tui.workspace.questions import Question


@dataclass
class Claim:
    text: str  # the sentence fragment holding the figure
    span: tuple[int, int]  # of the number in the answer
    value: float  # as stated, in the stated unit (35.6 for "35.6%")
    unit: str  # "%", "x", "$", "bp", "B" (billions), "$B", "" ...
    indicator: str | None  # canonical name ("close" for prices), None when none is near
    ticker: str | None
    store_value: float | None
    source: str | None  # provenance of the store value
    verdict: str
    rel_error: float | None
    why: str


# --- reading the figures -------------------------------------------------------------------
_UNIT_CODES = {"%": "%", "pp": "%", "bp": "bp", "x": "x"}  # finance_numbers units -> ours
_SCALE_CODES = {"thousand": "K", "million": "M", "billion": "B", "trillion": "T"}
_SCALE = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
# words that mark a figure as another metric or another subject ("happiness index of 87",
# "the sector's 20%")
_OTHER_METRIC = re.compile(
    r"\b(?:index|score|margin|revenue|sales|income|earnings|profit|EPS|P/E|P/B|PEG|EBITDA|"
    r"growth|cap|capitali[sz]ation|valuation|volume|shares|employees|customers|users|guidance|"
    r"target|beta|multiple|estimate|forecast|consensus|high|low|peak|trough|range|dividend|"
    r"payout|buyback|cash|debt|assets|equity|rate|spread|units|threshold|sector|industry|peers?|"
    r"median|average|benchmark)\b",
    re.I,
)
_NEGATIVE_BEFORE = re.compile(
    r"\b(?:down|fell|fallen|falling|drop(?:ped)?|declin\w*|lost|negative|slid|decreas\w*|"
    r"plung\w*|sank|shed)\b[^.\d]{0,20}$",
    re.I,
)
_NEGATIVE_AFTER = re.compile(r"^\s*(?:decline|drop|fall|loss|lower|below|decrease)", re.I)
_BOUND = re.compile(  # "RSI above 70" states a bound, not a value
    r"(?:(?P<gt>\babove|\bover|\bexceed\w*|\b(?:greater|more|higher) than|\bat least|>=?|≥)|"
    r"(?P<lt>\bbelow|\bunder|\b(?:less|lower) than|\bat most|<=?|≤))\s*(?:the\s+)?$",
    re.I,
)
_EARLIER = re.compile(r"\bfrom\s+(?:about\s+|around\s+|roughly\s+)?$", re.I)
_EARLIER_AFTER = re.compile(
    r"^[^.\d]{0,25}\b(?:a year ago|year[- ]ago|prior|previous|last year|earlier)\b", re.I
)
_ABBREV = re.compile(r"\b(?:Inc|Corp|Co|Ltd|vs|e\.g|i\.e|approx|No|U\.S|St|Mr|Ms|Dr)\.$")


def _sentences(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in re.finditer(r"(?<=[.!?])\s+|\n+", text):
        if "\n" not in m.group() and _ABBREV.search(text[start : m.start()]):
            continue  # "Apple Inc. reported" is one sentence
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return [s for s in spans if s[1] > s[0]]


def _all_mentions(index: CompanyIndex, text: str) -> list[Mention]:
    """Every company mention (`mentions` keeps the first per ticker): blank found ones, repeat."""
    out: list[Mention] = []
    while found := index.mentions(text):
        out += found
        text = _mask(text, [m.span for m in found])
    return sorted(out, key=lambda m: m.span)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


# --- comparison -------------------------------------------------------------------------------
PRICE_UNITS = {"close", "ma_20", "ema_20", "macd", "macd_signal"}  # quoted in dollars
POINTS = {"rsi_14", "rsi_14_wilder"}  # 0-100: "71%" and "71" mean the same
SIGNED_AS_MAGNITUDE = {"drawdown"}  # "a drawdown of 5.7%" means -0.057


def _store(snap: dict[str, Any], key: str) -> tuple[list[float], str | None]:
    """The store values a figure about `key` may state, and their provenance."""
    if key == "close":
        vals = [snap["close"], snap["adj_close"]]  # a quoted price may be raw or adjusted
        src = f"close on {snap['price_date']} ({snap['price_source']})"
    elif KIND.get(key) == "ratio":
        f = snap["fundamentals"].get(key)
        if not f:
            return [], None
        vals = [f["value"]]
        parts = [f["source"], f"FY{f['fiscal_year']} {f['fiscal_period']}"]
        parts += [f"period end {f['period_end']}" if f.get("period_end") else ""]
        parts += [f"filed {f['filed']}", f"accession {f['accession']}" if f["accession"] else ""]
        parts += [f"contested: {f['contested']}" if f.get("contested") else ""]
        parts += [f"flagged: {f['flags']}" if f.get("flags") else ""]
        src = ", ".join(p for p in parts if p)
    else:
        vals = [snap["signals"].get(key)]
        src = f"signal on {snap['price_date']} (adjusted close, {snap['price_source']})"
    vals = [float(v) for v in vals if v is not None and not math.isnan(v)]
    return vals, src if vals else None


def _factors(key: str, unit: str, value: float, store: float) -> list[float]:
    """Ways to read the stated figure in store units (stated * factor), [] if units clash."""
    base, scale = unit.lstrip("$"), 1.0
    if base in _SCALE:
        base, scale = "", _SCALE[base]
    if key == "obv":  # shares
        return [scale] if base == "" and not unit.startswith("$") else []
    if key in PRICE_UNITS:
        return [scale] if base == "" else []
    if unit.startswith("$") or scale != 1.0:
        return []
    if key in POINTS:
        return [1.0] if base in ("", "%") else []
    # fractions: ratios and returns
    if base == "%":
        return [0.01]
    if base == "bp":
        return [1e-4]
    # "ROE 35.6" usually means percent
    return [1.0, 0.01] if base == "" and abs(value) > 1.5 and abs(store) < 1.5 else [1.0]


def _check(
    claim: Claim,
    value: float,
    decimals: int,
    bound: str | None,
    snap: dict[str, Any],
    tol: float,
) -> None:
    """Fill the claim's store value, verdict, error and why; `value` is the signed figure."""
    key = claim.indicator or ""
    stored, src = _store(snap, key)
    label = LABEL_ALL.get(key, key)
    if not stored:
        claim.why = f"the store has no {label} for {claim.ticker} at as_of"
        return
    claim.store_value, claim.source = stored[0], src
    if key in SIGNED_AS_MAGNITUDE:
        value, stored = abs(value), [abs(s) for s in stored]
    best: tuple[float, float, float] | None = None  # (rel. error, stated in store units, store)
    ok = False
    for s in stored:
        for f in _factors(key, claim.unit, value, s):
            x = value * f
            if bound:
                ok |= s >= x if bound == ">" else s <= x
                best = best or (math.inf, x, s)
                continue
            rel = abs(x - s) / abs(s) if s else abs(x - s)
            # the store value rounded to the stated precision ("36%" for 0.356)
            rounds = abs(s / f - value) <= 0.5 * 10**-decimals + 1e-9 * abs(value)
            ok |= rel <= tol or rounds
            if best is None or rel < best[0]:
                best = (rel, x, s)
    if best is None:
        claim.why = f"a figure in {claim.unit or 'plain units'} cannot state {label}"
        return
    rel, x, s = best
    claim.rel_error = None if bound else rel
    claim.verdict = SUPPORTED if ok else CONTRADICTED
    stated = f"{bound} {x:.4g}" if bound else f"{x:.4g}"
    off = "" if ok or bound else f", off by {rel:.0%}"
    verb = "agrees with the store's" if ok else "but the store has"
    claim.why = f"{label} {stated} {verb} {s:.4g}{off} ({src})"


def _snapshot(
    cache: dict[str, dict[str, Any] | str],
    con: duckdb.DuckDBPyConnection,
    ticker: str,
    as_of: Any,
) -> dict[str, Any] | str:
    """The ticker's snapshot at as_of, once per audit; the error line if it is not in the store."""
    if ticker not in cache:
        try:
            cache[ticker] = snapshot(con, ticker, as_of)
        except UserError as err:
            cache[ticker] = str(err)
    return cache[ticker]


# --- the audit --------------------------------------------------------------------------------
_JOINS = re.compile(r"\b(?:and|while|but|whereas|versus|vs)\b|[;,]", re.I)
_FOR = re.compile(r"^[\s(]*(?:for|at|of|in|on)?\s*$", re.I)


def _tie(
    text: str,
    inds: list[IndicatorMention],
    nums: list[tuple[int, int]],
    a: int,
    b: int,
    s0: int,
    s1: int,
) -> IndicatorMention | None:
    """The indicator a figure at [a, b) is about: the nearest named before it in the sentence,
    unless that one already has an earlier figure and another is named right after this one."""
    prior = [i for i in inds if s0 <= i.start and i.end <= a]
    later = [i for i in inds if b <= i.start <= b + 40 and i.end <= s1]
    later = [i for i in later if not _JOINS.search(text[b : i.start])]  # "25.9% ROE"
    ind = prior[-1] if prior else None
    taken = ind is not None and any(ind.end <= n0 and n1 <= a for n0, n1 in nums)
    return later[0] if later and (ind is None or taken) else ind


def _company(
    text: str, cos: list[tuple[int, int, str]], nums: list[tuple[int, int]], a: int, b: int
) -> str | None:
    """The ticker a figure is about: a company right after it ("0.30 for Microsoft"), else the
    last one named since the previous figure ("MSFT's RSI was 42.5"), else the nearest."""
    for c0, _, t in cos:
        if c0 >= b and _FOR.match(text[b:c0]):
            return t
    since = max([n1 for _, n1 in nums if n1 <= a], default=0)
    before = [t for c0, c1, t in cos if since <= c0 and c1 <= a]
    if before:
        return before[-1]
    dist = [(max(c0 - b, a - c1, 0), c0 > a, t) for c0, c1, t in cos]
    return min(dist)[2] if dist else None


def stated_figure(f: Figure, s0: int) -> tuple[tuple[int, int], str, bool, str, float] | None:
    """(span, numeral as written, signed, unit, value as stated), or None for a year; read by
    the finance-numbers room ("$1.2bn" -> "$B", "(12.4%)" -> -12.4 "%", "25 bps" -> "bp")."""
    raw = re.search(r"\d[\d,]*(?:\.\d+)?|\.\d+", f.text)
    unit = ("$" if f.currency == "USD" else "") + (
        _UNIT_CODES.get(f.unit) or _SCALE_CODES.get(f.scale_word, "")
    )
    signed = f.number < 0 or f.text.lstrip("$€£¥( ").startswith("+")
    is_year = not unit and not signed and f.decimals == 0 and 1900 <= f.number <= 2100
    span = (s0 + f.span[0], s0 + f.span[1])
    return None if is_year or raw is None else (span, raw.group(0), signed, unit, f.number)


def audit(
    answer: str,
    q: Question,
    con: duckdb.DuckDBPyConnection,
    tolerance: float = 0.02,
    index: CompanyIndex | None = None,
) -> dict[str, Any]:
    """Extract the answer's figures and check each against the store at `q.as_of`. `index`:
    the store's CompanyIndex when the caller keeps one (building it takes ~0.2 s).

    summary["checked"] counts the figures compared with a store value (supported + contradicted).
    """
    index = index or CompanyIndex(con)
    inds = indicator_mentions(answer)
    masked = _mask(answer, [(i.start, i.end) for i in inds])  # "RSI(14)" names, no figure
    snaps: dict[str, dict[str, Any] | str] = {}
    read = figures(masked, ranges=False)  # once, whole: "1." opening a line is numbering
    claims: list[Claim] = []
    for s0, s1 in _sentences(answer):
        mentions = _all_mentions(index, answer[s0:s1])
        cos = [(s0 + c.span[0], s0 + c.span[1], c.ticker) for c in mentions]
        no_cos = _mask(answer, [(c0, c1) for c0, c1, _ in cos])
        found = [f for f in read if s0 <= f.span[0] < s1]  # a range states two figures here
        figs = [f for f in (stated_figure(x, 0) for x in found) if f]
        nums = [f[0] for f in figs]
        for (a, b), raw, sign, unit, value in figs:
            ctx = answer[max(s0, a - 70) : min(s1, b + 70)].strip()  # the fragment
            claim = Claim(ctx, (a, b), value, unit, None, None, None, None, NOT_FOUND, None, "")
            claims.append(claim)
            before, after = answer[s0:a], answer[b:s1]
            claim.ticker = _company(answer, cos, nums, a, b)
            if claim.ticker is None and len(q.tickers) == 1:
                claim.ticker = q.tickers[0]  # the question's only company
            ind = _tie(answer, inds, nums, a, b, s0, s1)
            if ind is None:
                words = " ".join(before.split()[-4:])
                claim.why = f"no store indicator named near the figure ('{words} {raw}')"
                continue
            # words between the indicator and the figure that name another metric
            g0, g1 = (ind.end, a) if ind.end <= a else (b, ind.start)
            if other := _OTHER_METRIC.findall(no_cos[g0:g1]):
                claim.why = f"the figure is about '{other[-1]}', not {ind.name}"
                continue
            if ind.key is None:
                claim.why = f"the store keeps no {ind.name}"
                continue
            claim.indicator = ind.key
            if _EARLIER.search(before) or _EARLIER_AFTER.search(after):
                claim.why = "an earlier value (from ... to ..., prior period), not the as_of one"
                continue
            if not sign and (
                _NEGATIVE_BEFORE.search(before[-35:]) or _NEGATIVE_AFTER.search(after)
            ):
                value = -value  # "fell 1.7%" states -1.7%
            bm = _BOUND.search(before)
            bound = (">" if bm.group("gt") else "<") if bm else None
            if claim.ticker is None:
                claim.why = f"no company named and the question has {len(q.tickers)} tickers"
                continue
            if q.as_of is None:
                claim.why = "the question has no as_of date"
                continue
            if isinstance(snap := _snapshot(snaps, con, claim.ticker, q.as_of), str):
                claim.why = snap
                continue
            decimals = len(raw.split(".")[1]) if "." in raw else 0
            _check(claim, value, decimals, bound, snap, tolerance)
    rows = [asdict(c) for c in claims]
    counts = {v: sum(c["verdict"] == v for c in rows) for v in (SUPPORTED, CONTRADICTED, NOT_FOUND)}
    counts["checked"] = counts[SUPPORTED] + counts[CONTRADICTED]
    return {"claims": rows, "summary": counts, "as_of": q.as_of.isoformat() if q.as_of else None}


def summary_line(result: dict[str, Any]) -> str:
    """One line: "3 figures: 2 supported, 1 contradicted (ROE 0.90 vs 0.356 in the store)"."""
    from fintrade_tui.audits.company import company_line

    claims, s = result["claims"], result["summary"]
    tail = [company_line(result.get("companies"))]
    if s.get("reference_figures"):
        tail.insert(
            0, f"states {s['reference_stated']} of the reference's {s['reference_figures']} figures"
        )
    end = "".join(f"; {t}" for t in tail if t)
    if not claims:
        return "no figures to check" + end
    parts = [f"{s[SUPPORTED]} supported", f"{s[CONTRADICTED]} contradicted"]
    n_agreed = s.get("reference_agreed")
    agreed = f" ({n_agreed} as the reference states)" if n_agreed else ""
    parts += [f"{s[NOT_FOUND]} not found{agreed}"] if s[NOT_FOUND] else []
    line = f"{len(claims)} figure{'s' * (len(claims) != 1)}: " + ", ".join(parts)
    bad = [
        f"{c['text']} vs {c['matched']} in the reference"  # text_audit's claims
        if c.get("room") == "text"
        else f"{LABEL_ALL.get(c['indicator'], c['indicator'])} {_fmt(c['value'], c['unit'])} vs "
        f"{c['store_value']:.4g} in the store"
        for c in claims
        if c["verdict"] == CONTRADICTED
    ]
    line += f" ({'; '.join(bad[:2])})" if bad else ""
    return line + end


def _fmt(value: float, unit: str) -> str:
    num = f"{value:.2f}" if abs(value) < 1 else f"{value:g}"  # "0.90", as people write it
    return f"${num}{unit[1:]}" if unit.startswith("$") else f"{num}{unit}"
