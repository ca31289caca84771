"""Router room: for models without native function calling, the Tool-Use condition's tool
calls chosen deterministically from the question's text (indicator names and the words questions
use for them), never from its golden list: company questions get the named indicators for each
ticker at as_of (plus a price window), market scans a `screen` per indicator."""

from __future__ import annotations

import re
from typing import Any

from fintrade_tui.questions.companies import scan_filter
from fintrade_tui.questions.indicators import KIND, SYNONYMS
from fintrade_tui.runs.tools import DEFAULT_NAMES, MAX_CALLS, SCREEN_TOP
from fintrade_tui.workspace.questions import Question

# cues the router also reads, beyond indicators.SYNONYMS: words questions use for what an
# indicator measures ("profitable", "balance sheet"); a trailing * matches any word ending
_VALUE, _TREND, _DEBT = (
    ["earnings_price", "book_price"],
    ["ma_20", "ema_20"],
    ["debt_equity", "debt_assets"],
)
# fmt: off
ROUTER_CUES: dict[str, list[str]] = {
    "P/E": ["earnings_price"], "Price/Earnings": ["earnings_price"],
    "Price to Earnings": ["earnings_price"], "P/B": ["book_price"], "Price to Book": ["book_price"],
    "Dividend": ["dividend_yield"], "Volume": ["obv"], "Cash Flow": ["cashflow_assets"],
    "Oversold": ["rsi_14"], "Overbought": ["rsi_14"], "Profitab*": ["roe", "roa"],
    "Efficien*": ["sales_assets", "roa"], "Balance Sheet": _DEBT, "Debt": _DEBT,
    "Valuation*": _VALUE, "Overvalued": _VALUE, "Undervalued": _VALUE,
    "Trend*": _TREND, "Uptrend*": _TREND, "Downtrend*": _TREND,
}
# fmt: on
# price levels do not rank across stocks: a screen uses the distance from the mean instead
SCREEN_INSTEAD = {"ma_20": "mean_reversal_60d", "ema_20": "mean_reversal_60d"}
_ASCENDING = re.compile(
    r"\b(lowest|least|worst|weakest|bottom|cheapest|undervalued|oversold|laggards?|declin\w*|"
    r"downtrends?|breakdowns?)\b",
    re.I,
)


def _phrase(p: str) -> str:
    stem = p.rstrip("*")
    body = r"[\s_\-]+".join(re.escape(x) for x in re.split(r"[\s_\-]+", stem.strip()))
    body += r"\w*" if p.endswith("*") else ""
    # abbreviations match in capitals only ("MA", not "ma"); names in any case
    return body if re.fullmatch(r"[A-Z0-9/]+", p) else f"(?i:{body})"


_PHRASES = {p: [name] for name, names in SYNONYMS.items() for p in [name, *names] if name in KIND}
_PHRASES |= ROUTER_CUES
# longest first, so "MACD Signal" wins over "MACD" and "Medium Term Momentum" over "Momentum"
_ORDER = sorted(_PHRASES, key=len, reverse=True)
_MENTION = re.compile(
    r"(?<![A-Za-z0-9/])(?:"
    + "|".join(f"(?P<p{i}>{_phrase(p)})" for i, p in enumerate(_ORDER))
    + r")(?:s|['’]s)?(?![A-Za-z0-9/])"
)


def mentioned_indicators(text: str) -> list[str]:
    """Canonical indicators named or described in `text`, in order of first mention."""
    out: list[str] = []
    for m in _MENTION.finditer(text):
        group = m.lastgroup  # one of the named alternatives ("p<i>") always matched
        if group is None:
            continue
        for name in _PHRASES[_ORDER[int(group[1:])]]:
            if name not in out:
                out.append(name)
    return out


def route(q: Question) -> list[tuple[str, dict]]:
    """Tool calls for `q` from its text alone (never its golden list), at most MAX_CALLS."""
    names = mentioned_indicators(q.text) or list(DEFAULT_NAMES)
    when = {"date": q.as_of.isoformat()} if q.as_of else {}
    if q.scope == "market_scan":
        _, filt = scan_filter(q.text)
        base: dict[str, Any] = {"top": SCREEN_TOP, "ascending": bool(_ASCENDING.search(q.text))}
        if filt:
            base[filt[0]] = filt[1]
        names = list(dict.fromkeys(SCREEN_INSTEAD.get(n, n) for n in names))
        return [("screen", when | {"indicator": n} | base) for n in names][:MAX_CALLS]
    tickers = list(q.tickers)
    windows: list[tuple[str, dict]] = []
    if q.as_of and q.window_start and q.window_start < q.as_of and len(tickers) <= 3:
        start = q.window_start.isoformat()
        windows = [
            ("get_price_window", {"ticker": t, "start": start, "end": q.as_of.isoformat()})
            for t in tickers
        ]
    tool = {"signal": "get_signal", "ratio": "get_fundamental"}
    calls = [(tool[KIND[n]], {"ticker": t, "name": n} | when) for n in names for t in tickers]
    return calls[: max(MAX_CALLS - len(windows), 0)] + windows[:MAX_CALLS]
