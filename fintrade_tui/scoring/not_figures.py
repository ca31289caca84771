"""Scoring room: what in a text is NOT a figure — the one place for these patterns, read by the
figures reader (figures.py) and so by every check that reads numbers (matcher, numeric audit,
evidence audit, FinQA prose traces, fatal-flaw screen).

Each kind is named, so a test table can say which rule left a numeral out: dates and years used
as dates, fiscal labels, list and step numbering, citation and footnote marks, references to
parts of a document (items, notes, pages, tables), form types and accession numbers, digits
inside names (S&P 500, COVID-19, 7203.T, 3M), window lengths ("20-day", "RSI(14)" parameter
lists), clock times and formula constants ("× 100", "/ 2"). A bare integer 1900..2100 is marked
`is_year` by the reader, not here: a year is the answer to "which year" questions.
"""

from __future__ import annotations

import re

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)(?![a-z])\.?"
)
_REF_ANY = (
    r"steps?|columns?|items?|notes?|sections?|sec\.|§|exhibits?|footnotes?|appendix|chapters?|"
    r"para\."
)
_REF_CAP = "|".join(  # capitalised only: "Tier 1", "Table 3", "Step 2" — not "auto parts 12%"
    f"{re.escape(w)}s?|{re.escape(w.upper())}S?"
    for w in re.findall(
        r"\S+",
        (
            "Part Article Schedule Table Figure Fig. Chart Rule Form Step Option Scenario Phase "
            "Tier Level Stage Line Row Column No. Question Example Method Approach Year"
        ),
    )
)
_CONST = r"(?:100|1,?000|365|360|252|12|4|2|1)(?![\d]|[.,]\d)"
_WINDOW_UNIT = r"(?:trading[-\s])?(?:day|week|month|year|quarter|session)s?"

KINDS: list[tuple[str, str]] = [
    ("date", r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
    ("date", r"\b(?:0?[1-9]|1[0-2])/\d{2}\b(?![/\d.])"),  # "12/16": December 2016
    ("date", rf"\b{_MONTH}[ \t]+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b"),
    ("date", rf"\b{_MONTH},?\s+\d{{4}}\b"),
    ("date", rf"(?<![\d.,])\b\d{{1,2}}(?:st|nd|rd|th)?[ \t]+{_MONTH}(?:,?\s+\d{{4}})?"),
    ("fiscal label", r"\b(?:Q[1-4]|H[12]|[1-4]Q)(?:\s*(?:FY\s*)?'?\d{2,4}\b|\d{2}\b)?(?!\s*%)"),
    ("fiscal label", r"\bFY\s*'?\d{2,4}\b|(?i:\b(?:fiscal|calendar)(?:\s+year)?\s+\d{4}\b)"),
    ("fiscal label", r"\b(?:19|20)\d{2}\s*[-–/]\s*\d{2}\b(?!\s*%)|(?<![\w.])'\d{2}\b"),
    # "[1]", "[E2, E3]", "[^3]" — not a list of figures written in brackets ("['$66.1 million']")
    (
        "citation",
        r"\[\^?\s*[A-Za-z]{0,3}\s?\d{1,3}[a-z]?(?:\s*[,–-]\s*[A-Za-z]{0,3}\s?\d{1,3}[a-z]?)*\s*\]",
    ),
    ("footnote", r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+|\^\d+|(?<=[A-Za-z])\s?\(\d{1,2}\)(?!\s*%)"),
    ("numbering", r"(?:^|(?<=\n))[ \t]*(?:[-*•][ \t]+|\*\*)?(?:\d{1,2}[.)]|\(\d{1,2}\))(?=\s)"),
    ("numbering", r"(?:^|(?<=\n))[ \t]*#{1,6}[ \t]+\d{1,2}(?:\.\d{1,2})*\.?(?=\s)"),
    ("numbering", r"(?:^|(?<=\n))[ \t]*\d{1,2}\.\d{1,2}\.(?=\s)"),
    ("page", r"(?i:\b(?:pages?|pp?\.|pgs?\.?)\s*\d+(?:\s*(?:-|–|to|and|,)\s*\d+)*)"),
    (
        "document part",
        rf"(?:\b|(?<=§))(?:(?i:{_REF_ANY})|{_REF_CAP})\s*#?\d+[A-Za-z]?(?:[.\-]\d+[A-Za-z]?)*"
        r"(?:\([a-z0-9]{1,3}\))*"
        r"(?:\s*(?:-|–|to|and|,|&)\s*\d+[A-Za-z]?(?:\.\d+)*)*(?!\s*%)",
    ),
    ("standard", r"\b(?:ASC|ASU|IFRS|IAS|SFAS|FAS|Topic|Basel)\s*\d+(?:[-–]\d+)*\b|\b401\s*\(k\)"),
    ("form", r"\b\d{1,2}-[KQF]\b|\b[SF]-\d\b|\b\d{10}-\d{2}-\d{6}\b|\bCIK\s*\d+"),
    ("ordinal", r"\b\d+(?:st|nd|rd|th)\b"),
    (
        "name",
        r"(?:S&P|\bNASDAQ|\bNasdaq|\bRussell|\bDow(?: Jones)?|\bFTSE|\bNikkei|\bFortune)[\s-]?\d+\b"
        r"|\b\d{3,6}\.[A-Z]{1,2}\b|(?<![$\d.,])\b3M\b|(?<=[A-Za-z]-)\d+\b|\bWeb\s?\d\.\d\b",
    ),
    # "20-day", "5D": a window's length; "105 days" alone may be the answer (a cycle, a term)
    ("window", rf"\b\d+(?:\.\d+)?-{_WINDOW_UNIT}\b|\b\d+[dD]\b|\b\d+\s+trading\s+days?\b"),
    ("window", r"(?i:\b\d{1,2}\s+months?\s+end(?:ed|ing)\b)"),
    (
        "window",
        r"(?i:\b(?:past|last|next|prior|previous|over|within|trailing)\s+\d{1,2}\s+"
        r"(?:days?|weeks?|months?|quarters?|years?|sessions?)\b)",
    ),
    # "MACD (12, 26, 9)": a list after a name; "(1,234)" is a thousands group, a figure
    ("parameters", r"(?<=[A-Za-z])\s?\(\s*\d{1,3}(?:(?:\s*,\s+|\s*,(?!\d{3}\b))\d{1,3})+\s*\)"),
    ("time", r"\b\d{1,2}:\d{2}\b"),
    ("precision", r"(?i:\b\d{1,2}\s+(?:decimal\s+places?|significant\s+(?:digits|figures)))"),
    # an exponent: "^2", "^{24}", "^{\frac{1}{2}}", "** 2" (a power, not a figure stated)
    (
        "exponent",
        r"\^\s*(?:\{(?:\\frac\{[^{}]*\}\{[^{}]*\}|[^{}])*\}|\(?-?[\d.]+\)?)|(?<=[\w)])\*\*\s?\d+(?:\.\d+)?(?!\s*%)",
    ),
    (
        "formula constant",
        r"(?:[×*/÷]|(?<![A-Za-z])[xX](?=\s*\d)|(?i:\bmultipl(?:y|ied|ying)\s+"
        r"(?:it\s+|this\s+|that\s+|the\s+result\s+)?by|\bdivided\s+by|\btimes"
        r"|\bby(?=\s+100\s+to\b)))\s*" + _CONST + r"|(?<![\d.,])(?:100|1)\s*[×*]"
        r"|\(\s*1\s*[+−-]|[−-]\s*1\s*(?=\)|=|$|\\\]|\\approx)|√\s*\d+",
    ),
]
PATTERN = re.compile("|".join(f"(?:{p})" for _, p in KINDS), re.MULTILINE)
_ONE = [(name, re.compile(p, re.MULTILINE)) for name, p in KINDS]


def not_figure_spans(text: str) -> list[tuple[int, int]]:
    """The spans of `text` that hold no figure. A span right before a digit is left out ("Q3
    2" would otherwise eat the start of a figure)."""
    return [m.span() for m in PATTERN.finditer(text) if not _digit_at(text, m.end())]


def why_not(text: str) -> str | None:
    """The name of the rule that leaves `text` (one token or phrase) out, for the example
    table and for reasons ("Step 4: numbering")."""
    for name, rx in _ONE:
        if rx.search(text):
            return name
    return None


def _digit_at(text: str, at: int) -> bool:
    return bool(re.match(r"[.,]?\d", text[at : at + 2]))
