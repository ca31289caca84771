"""Question room: the kind of a question, which picks the TELeR wording its prompt gets.

fundamentals -- about the business, from filings (ROE, margins, leverage, ...)
trading      -- about the stock, from prices (RSI, MACD, moving averages, momentum, ...)
hybrid       -- both (FinTradeBench's FT questions)
document_qa  -- about what a filing says (SECQUE's 10-K excerpts, FinAR's tables)

The rule, first match wins (`classify` also says which step decided):

0. `extra["question_kind"]`, when it is one of the four kinds: a question file can say so.
1. Golden indicators, by their KIND (`golden`, else `golden_raw` mapped to canonical names;
   names the store does not know are ignored): only ratios -> fundamentals, only signals ->
   trading, both -> hybrid.
2. Without golden indicators: a set that supplies filing context (source secque, finar or
   finar_generated, or extra with a non-empty "context" or "table"), or text about a filing's
   contents ("according to the 10-K", "risk factors", "MD&A", "segment", "in the annual
   report", ...) -> document_qa.
3. Text words: trading words (RSI, MACD, moving average, momentum, price trend, overbought,
   volume, ...) and fundamentals words (ROE, margin, revenue, debt, earnings, cash flow, ...):
   only trading words -> trading, only fundamentals words -> fundamentals, both -> hybrid.
4. The FinTradeBench category, whatever the source: F -> fundamentals, T -> trading,
   FT -> hybrid.
5. Otherwise hybrid: the general wording, which names both kinds of indicator. (The filing-QA
   sources, for which document_qa would be the fallback, never get here: step 2 took them.)
"""

from __future__ import annotations

import re

from fintrade_tui.questions.indicators import KIND, map_indicators
from fintrade_tui.workspace.questions import Question

FUNDAMENTALS, TRADING, HYBRID, DOCUMENT_QA = "fundamentals", "trading", "hybrid", "document_qa"
KINDS = (FUNDAMENTALS, TRADING, HYBRID, DOCUMENT_QA)
LABEL = {
    FUNDAMENTALS: "Fundamentals",
    TRADING: "Trading",
    HYBRID: "Hybrid",
    DOCUMENT_QA: "Document QA",
}
FILING_SOURCES = (
    "secque",
    "finar",
    "finar_generated",
)  # sets whose questions come with filing text
CATEGORY_KIND = {"F": FUNDAMENTALS, "T": TRADING, "FT": HYBRID}
OVERRIDE_KEY = "question_kind"

_FORM = r"(?:10-?k|10-?q|20-?f|8-?k|annual report|quarterly report|filing|proxy statement)"
_WHOSE = r"(?:the|its|their|this|that|[\w.&-]+'s?)"
_DOCUMENT = (
    rf"according to {_WHOSE} {_FORM}",
    rf"\b(?:in|from|within) {_WHOSE} (?:most recent |latest |annual |quarterly )?{_FORM}\b",
    rf"\b{_FORM} (?:says?|states?|reports?|discloses?|mentions?|describes?)\b",
    r"\bannual report\b",
    r"\brisk factors?\b",
    r"\bmd&a\b",
    r"\bmanagement'?s discussion\b",
    r"\bsegments?\b",
    r"\bfoot ?notes?\b",
    r"\bnotes? to (?:the )?(?:consolidated )?financial statements\b",
    r"\bitem\s+(?:1a|7a?|8)\b",
    r"\blegal proceedings\b",
    r"\b(?:disclose[sd]?|disclosures?)\b",
    r"\bexcerpts?\b",
)
_TRADING = (
    r"\brsi\b",
    r"\brelative strength\b",
    r"\bmacd\b",
    r"\bmoving averages?\b",
    r"\b[se]ma\d*\b",
    r"\bmomentum\b",
    r"\bprice (?:trends?|action|momentum)\b",
    r"\b(?:stock|share) price (?:trends?|performance|movements?)\b",
    r"\bover(?:bought|sold)\b",
    r"\b(?:trading )?volume\b",
    r"\bobv\b",
    r"\bon-? ?balance volume\b",
    r"\bvolatil(?:e|ity)\b",
    r"\bdrawdowns?\b",
    r"\brevers(?:al|ion)s?\b",
    r"\bbollinger\b",
    r"\b(?:golden|death) cross\b",
    r"\bcrossovers?\b",
    r"\btechnical(?:ly)?\b",
    r"\btrading signals?\b",
    r"\b(?:rally|rallied|sell-?off)\b",
    r"\b(?:up|down)?trends?\b",
    r"\bbreak(?:outs?|ing out|ing down)\b",
    r"\bdivergences?\b",
    r"\bdouble (?:top|bottom)s?\b",
    r"\bswing trad\w*\b",
)
_FUNDAMENTALS = (
    r"\broe\b",
    r"\broa\b",
    r"\breturn on (?:equity|assets|invested capital)\b",
    r"\bmargins?\b",
    r"\brevenues?\b",
    r"\bsales\b",
    r"\bdebt\b",
    r"\b(?:over)?leverage[d]?\b",
    r"\bearnings\b",
    r"\beps\b",
    r"\bcash(?: ?flows?)?\b",
    r"\bdividends?\b",
    r"\bbook value\b",
    r"\bp/?e\b",
    r"\bprice[- ]to[- ](?:earnings|book|sales)\b",
    r"\bprofit\w*\b",
    r"\bbalance sheet\b",
    r"\b(?:net|operating) income\b",
    r"\bliabilities\b",
    r"\bcapital expenditures?\b",
    r"\bcapex\b",
    r"\bfundamentals?\b",
    r"\bassets?\b",
    r"\bcapital\b",
    r"\b(?:under|over)?valu(?:ed|ations?)\b",
    r"\bfinancial(?:ly)? (?:health|healthy|stable|stability|sound|strength|risk)\b",
)


def _any(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_DOCUMENT_RE, _TRADING_RE, _FUNDAMENTALS_RE = map(_any, (_DOCUMENT, _TRADING, _FUNDAMENTALS))


def _golden_kinds(q: Question) -> set[str]:
    names = q.golden or map_indicators(q.golden_raw)[0]
    return {KIND[n] for n in names if n in KIND}


def _supplies_filing(q: Question) -> bool:
    return q.source in FILING_SOURCES or bool(q.extra.get("context")) or bool(q.extra.get("table"))


def classify(q: Question) -> tuple[str, str]:
    """(kind, why): the kind by the module's rule and a short phrase naming the step that
    decided it, for the Questions screen."""
    override = q.extra.get(OVERRIDE_KEY)
    if isinstance(override, str) and override in KINDS:
        return override, f"set in the question file ({OVERRIDE_KEY})"
    golden = _golden_kinds(q)
    if golden:
        kind = HYBRID if len(golden) == 2 else FUNDAMENTALS if "ratio" in golden else TRADING
        return kind, "golden indicators"
    if _supplies_filing(q):
        return DOCUMENT_QA, "filing context supplied with the question"
    text = q.text.replace("\u2019", "'")
    if _DOCUMENT_RE.search(text):
        return DOCUMENT_QA, "asks about a filing's contents"
    trading, fundamentals = bool(_TRADING_RE.search(text)), bool(_FUNDAMENTALS_RE.search(text))
    if trading or fundamentals:
        kind = HYBRID if trading and fundamentals else TRADING if trading else FUNDAMENTALS
        return kind, "words in the question"
    category = CATEGORY_KIND.get(q.category.strip().upper())
    if category:
        return category, f"category {q.category.strip().upper()}"
    return HYBRID, "no sign either way"


def question_kind(q: Question) -> str:
    """fundamentals | trading | hybrid | document_qa, by the rule in the module docstring."""
    return classify(q)[0]
