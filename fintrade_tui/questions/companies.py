"""Company-resolution room: company names, aliases and tickers in a question's text -> tickers.

Every company the store knows is matched by its short name (from the reference data, legal
suffixes dropped) and by its ticker written in capitals; a hand-kept alias table adds the names
people actually use (Google, Facebook, Pepsi, ...). Market-scan questions ("Which NASDAQ
stocks ...") name no company and resolve to the index members on `as_of`.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date

import duckdb

from fintrade_tui.questions.filers import FilerDirectory

# names people use -> ticker (the store's spelling: GOOG for Alphabet, as in the bundle)
ALIASES: dict[str, str] = {
    "Apple": "AAPL",
    "Alphabet": "GOOG",
    "Google": "GOOG",
    "Meta": "META",
    "Facebook": "META",
    "Nvidia": "NVDA",
    "NVIDIA": "NVDA",
    "Tesla": "TSLA",
    "Amazon": "AMZN",
    "Autodesk": "ADSK",
    "Microsoft": "MSFT",
    "MSFT": "MSFT",
    "Broadcom": "AVGO",
    "Netflix": "NFLX",
    "PayPal": "PYPL",
    "Qualcomm": "QCOM",
    "Cisco": "CSCO",
    "AMD": "AMD",
    "Advanced Micro Devices": "AMD",
    "Intel": "INTC",
    "Adobe": "ADBE",
    "Costco": "COST",
    "Starbucks": "SBUX",
    "Pepsi": "PEP",
    "PepsiCo": "PEP",
    "Walmart": "WMT",
    "Roku": "ROKU",
    "Comcast": "CMCSA",
    "Texas Instruments": "TXN",
    "Micron": "MU",
    "Palantir": "PLTR",
    "Booking": "BKNG",
    "Intuit": "INTU",
    "Moderna": "MRNA",
    "Zoom": "ZM",
    "Airbnb": "ABNB",
    "Marvell": "MRVL",
    "Applied Materials": "AMAT",
    "Lam Research": "LRCX",
    "KLA": "KLAC",
    "Analog Devices": "ADI",
    "Honeywell": "HON",
    "Amgen": "AMGN",
    "Gilead": "GILD",
    "Mondelez": "MDLZ",
    "Regeneron": "REGN",
    "Vertex": "VRTX",
    "Fortinet": "FTNT",
    "CrowdStrike": "CRWD",
    "Datadog": "DDOG",
    "Workday": "WDAY",
    "Synopsys": "SNPS",
    "Cadence": "CDNS",
    "Marriott": "MAR",
    "MercadoLibre": "MELI",
    "Atlassian": "TEAM",
    "T-Mobile": "TMUS",
    "Disney": "DIS",
    "Ford": "F",
    "General Motors": "GM",
    "Toyota": "TM",
    "Lululemon": "LULU",
    "Take-Two": "TTWO",
    "3M": "MMM",
}
_SUFFIX = re.compile(
    r",?\s+(Inc\.?|Incorporated|Corporation|Corp\.?|Company|Co\.|Holdings?|Group|plc|Ltd\.?|"
    r"Limited|N\.V\.|S\.A\.|AG|SE|Platforms|Technologies|Technology|Systems|\.com)\b.*$",
    re.IGNORECASE,
)
# capitalised words that are also tickers or short names but mostly appear as plain words
_AMBIGUOUS = {
    "ON",
    "IT",
    "ARM",
    "ALL",
    "A",
    "AI",
    "US",
    "CEO",
    "EPS",
    "ROE",
    "ROA",
    "RSI",
    "MACD",
    "OBV",
    "EMA",
    "MA",
    "NASDAQ",
    "Q1",
    "Q2",
    "Q3",
    "Q4",
    "F",
    "GM",
    "TM",
    "DIS",
}
# market-scan cues and the sector/industry filter they imply (None: the whole index)
SCANS: list[tuple[re.Pattern[str], tuple[str, str] | None]] = [
    (
        re.compile(r"\bsemiconductor|\bchip\s*(stocks|compan|makers?)", re.I),
        ("industry", "Semiconductor"),
    ),
    (re.compile(r"\bsoftware\s+(stocks|compan)", re.I), ("industry", "Software")),
    (
        re.compile(r"\btech(nology)?\s+(stocks|compan|giants?|sector|names)", re.I),
        ("sector", "Technology"),
    ),
    (
        re.compile(
            r"\bnasdaq(?:[- ]?100)?\s+(stocks?|compan|names|members)|\b(which|what)\s+"
            r"(stocks?|compan|names)|\bhigh[- ]growth\b|\bcompanies\s+with\b|\bstocks\b",
            re.I,
        ),
        None,
    ),
]


def alias_pattern(aliases: dict[str, str]) -> re.Pattern[str]:
    """One regex over every alias, longest first, so "Advanced Micro Devices" wins over a
    shorter overlapping alias; a possessive "'s" is part of the mention."""
    alts = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
    return re.compile(r"\b(" + alts + r")(?:['’]s)?\b")


@functools.cache
def _table() -> tuple[dict[str, str], re.Pattern[str]]:
    """The alias table with its tickers in capitals, and its regex: built once, not per call."""
    aliases = ALIASES | {t: t for t in ALIASES.values() if len(t) >= 2 and t not in _AMBIGUOUS}
    return aliases, alias_pattern(aliases)


def table_mentions(text: str) -> list[str]:
    """Tickers `text` names through the hand-kept alias table alone (names and tickers in
    capitals), in order of first mention: for when no store is at hand."""
    aliases, pattern = _table()
    out: list[str] = []
    for m in pattern.finditer(text):
        if (t := aliases[m.group(1)]) not in out:
            out.append(t)
    return out


@dataclass(frozen=True)
class Mention:
    ticker: str
    phrase: str
    span: tuple[int, int]
    cik: int | None = None  # set for a filer found in SEC's directory
    name: str | None = None  # SEC's title of that filer


class CompanyIndex:
    """Alias -> ticker for the companies in the store (built once per store connection)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        known = {
            r[0]: r[1]
            for r in con.execute(
                "SELECT c.ticker, c.name FROM companies c WHERE EXISTS "
                "(SELECT 1 FROM prices p WHERE p.ticker = c.ticker)"
            ).fetchall()
        }
        self.known = set(known)
        self.names = {t: _short(n) if n else t for t, n in known.items()}
        aliases: dict[str, str] = {}
        for t, name in self.names.items():
            if len(name) >= 4 and name.upper() not in _AMBIGUOUS:
                aliases[name] = t
            if len(t) >= 2 and t not in _AMBIGUOUS:
                aliases[t] = t
        aliases |= ALIASES  # the hand-kept table wins (and may name companies not in the store)
        self._pattern = alias_pattern(aliases)
        self._aliases = aliases
        self.filers = FilerDirectory(con, prefer=self.known)

    def mentions(self, text: str) -> list[Mention]:
        """Companies named in `text`, in order of first mention, without repeats: the store's
        companies and the alias table first, then any other SEC filer named where no alias
        matched (flagged by its CIK)."""
        out: list[Mention] = []
        seen: set[str] = set()
        taken: list[tuple[int, int]] = []
        for m in self._pattern.finditer(text):
            alias = m.group(1)
            ticker = self._aliases[alias]
            taken.append((m.start(1), m.end(1)))
            if ticker not in seen:
                seen.add(ticker)
                filer = None if ticker in self.known else self.filers.by_ticker.get(ticker)
                cik, title = (filer.cik, filer.title) if filer else (None, None)
                out.append(Mention(ticker, alias, (m.start(1), m.end(1)), cik, title))
        for fm in self.filers.mentions(text):
            a, b = fm.span
            if fm.filer.ticker in seen or any(a < e and s < b for s, e in taken):
                continue
            seen.add(fm.filer.ticker)
            out.append(Mention(fm.filer.ticker, fm.phrase, fm.span, fm.filer.cik, fm.filer.title))
        return sorted(out, key=lambda m: m.span[0])

    def display_name(self, ticker: str) -> str:
        for alias, t in ALIASES.items():
            if t == ticker:
                return alias
        return self.names.get(ticker, ticker)


def _short(name: str) -> str:
    return _SUFFIX.sub("", name.strip()).strip(" ,")


def scan_filter(text: str) -> tuple[bool, tuple[str, str] | None]:
    """(is this a market scan?, the sector/industry filter its wording implies)."""
    for pattern, filt in SCANS:
        if pattern.search(text):
            return True, filt
    return False, None


def index_members(
    con: duckdb.DuckDBPyConnection, as_of: date, filt: tuple[str, str] | None = None
) -> list[str]:
    """NASDAQ-100 members on `as_of` (membership intervals), optionally one sector/industry."""
    column = {"sector": "c.sector", "industry": "c.industry"}.get(filt[0]) if filt else None
    rows = con.execute(
        f"""SELECT DISTINCT m.ticker FROM index_membership m
        LEFT JOIN companies c USING (ticker)
        WHERE (m.start_date IS NULL OR m.start_date <= ?) AND (m.end_date IS NULL OR m.end_date > ?)
          AND (? IS NULL OR {column or "NULL"} ILIKE '%' || ? || '%')
        ORDER BY 1""",
        [as_of, as_of, filt[1] if filt else None, filt[1] if filt else None],
    ).fetchall()
    return [r[0] for r in rows]
