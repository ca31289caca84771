"""Indicator-mention room: where an answer names a store indicator — its Table 6 names and
synonyms, prices ("closing price", "traded at"), and a window written beside the name ("50-day
moving average", "RSI(14)") that marks a variant the store does not keep. The numeric audit
ties each figure to the nearest mention."""

from __future__ import annotations

import re
from dataclasses import dataclass

from fintrade_tui.questions.indicators import LABEL, SYNONYMS

# prices are not a Table 6 indicator but answers quote them; "close to" is not a price
_PRICE_NAMES = ["closing price", "share price", "stock price", "last price", "price", "closed"]
_PRICE_NAMES += ["traded at", "trading at", "trades at"]
LABEL_ALL = LABEL | {"close": "Close"}
# windows of the stored signals: "50-day moving average" is not the store's MA20
WINDOW = {"ma_20": 20, "ema_20": 20, "rsi_14": 14, "rsi_14_wilder": 14, "momentum_5d": 5}
WINDOW |= {k: 20 for k in ("momentum_20d", "max_return_20d", "realized_vol_20d")}
WINDOW |= {"mean_reversal_60d": 60, "short_term_reversal_1m": 21}


def _norm(name: str) -> str:
    return re.sub(r"\s*/\s*", "/", re.sub(r"[\s_\-]+", " ", name.strip().lower()))


def _name_rx(name: str) -> str:
    words = re.split(r"[\s_\-]+", name.strip())
    body = r"[\s\-]+".join(re.escape(w).replace("/", r"\s*/\s*") for w in words)
    # acronyms are matched case-sensitively, so "ma" or "Yield" in prose stays prose
    return body if name.upper() == name and len(name) <= 6 else f"(?i:{body})"


_NAMES = {_norm(s): c for c, names in SYNONYMS.items() for s in names}
_NAMES |= {_norm(s): "close" for s in _PRICE_NAMES}
_ALL = sorted([s for names in SYNONYMS.values() for s in names] + _PRICE_NAMES, key=len)
# a name inside a hyphenated word is not one: "closed-book" is no closing price
_IND = re.compile(
    r"(?<![\w/])(?P<name>"
    + "|".join(_name_rx(s) for s in reversed(_ALL))  # longest first: "MACD Signal" over "MACD"
    + r")(?P<param>\s*\(\s*\d+(?:\s*,\s*\d+)*\s*\)|-?\d+)?(?![\w/]|-[A-Za-z])(?!\s+to\b)"
)
_WINDOW_BEFORE = re.compile(
    r"(\d+)[-\s](?:trading[-\s])?(day|week|month)s?[-\s]+(?:[a-z]+[-\s]+)?$", re.I
)


@dataclass
class IndicatorMention:
    """An indicator named in a text: where, which (canonical), and as written."""

    start: int
    end: int
    key: str | None  # canonical name; None for a variant the store does not keep
    name: str  # as written


def indicator_mentions(text: str) -> list[IndicatorMention]:
    """Every indicator named in `text`, in order; a window other than the stored one (a
    "50-day moving average") keeps the name but no canonical key."""
    out = []
    for m in _IND.finditer(text):
        key = _NAMES.get(_norm(m.group("name")))
        window = None
        if m.group("param"):
            window = int(re.findall(r"\d+", m.group("param"))[0])
        elif w := _WINDOW_BEFORE.search(text[max(0, m.start() - 30) : m.start()]):
            window = int(w.group(1)) * {"day": 1, "week": 5, "month": 21}[w.group(2).lower()]
        name = m.group(0)
        if key in WINDOW and window is not None and abs(window - WINDOW[key]) > 2:
            name, key = f"{window}-day {m.group('name')}", None
        out.append(IndicatorMention(m.start(), m.end(), key, name))
    return out
