"""SEC filer directory room: every filer of SEC's company_tickers.json (ticker, CIK, title) by a
normalized name, so a question naming any US filer resolves, not only the index members.

Names are compared normalized: lower case, "&" as "and", possessives, punctuation and state
marks ("/DE/") dropped, legal suffixes (Inc., Corp., plc, Holdings, ...) dropped from the end.
A one-word name must be written capitalised in the question, and an everyday word only counts
in the possessive ("Target's margins" is Target Corp.; "Target prices" is not). The first
ticker SEC lists for a CIK is its main one (GOOGL for Alphabet); the store's spelling wins
where the store has the company.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

_SUFFIXES = {
    "inc", "incorporated", "corp", "corporation", "co", "company", "companies", "holdings",
    "holding", "group", "plc", "ltd", "limited", "llc", "lp", "nv", "sa", "ag", "se", "com",
    "the", "trust", "bancorp", "international", "intl", "class", "cl", "new",
}  # fmt: skip
# everyday words that are also a filer's whole short name: never a company on their own
_COMMON = {
    "target", "match", "block", "visa", "progressive", "general", "energy", "first", "capital",
    "american", "international", "national", "global", "united", "best", "solid", "power",
    "value", "growth", "income", "equity", "gold", "silver", "oil", "gas", "cash", "free",
    "total", "net", "news", "data", "cloud", "chip", "chips", "tech", "digital", "health",
    "life", "care", "home", "auto", "next", "open", "live", "core", "key", "apple", "meta",
    "alpha", "beta", "delta", "sigma", "zoom", "box", "square", "snap", "ring", "edge",
    "peak", "fair", "share", "shares", "stock", "fund", "trust", "realty", "price", "sales",
    "revenue", "margin", "earnings", "quarter", "fiscal", "annual", "report", "market",
    "nasdaq", "nyse", "index", "sector", "semiconductor", "software", "magnificent", "seven",
    "strong", "trend", "momentum", "signal", "moving", "average", "relative", "strength",
}  # fmt: skip
# words a filer's title ends in that people leave out ("Take-Two Interactive" for TAKE TWO
# INTERACTIVE SOFTWARE INC, "Microchip" for MICROCHIP TECHNOLOGY): a second, shorter key
_GENERIC_TAIL = {
    "software", "technologies", "technology", "systems", "stores", "interactive", "platforms",
    "brands", "entertainment", "pharmaceuticals", "therapeutics", "networks", "communications",
    "solutions", "services", "industries", "enterprises", "worldwide", "laboratories", "labs",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z0-9]+(?:[.'’][A-Za-z0-9]+)*|&")
MAX_WORDS = 6


def normalize(name: str) -> str:
    """'NVIDIA CORP /DE/' -> 'nvidia'; 'Procter & Gamble Co' -> 'procter and gamble'."""
    text = re.sub(r"/[A-Za-z]{2}/?\s*$", " ", name)
    words = [w.lower() for w in _WORD.findall(text)]
    words = ["and" if w == "&" else re.sub(r"['’]s$", "", w).replace(".", "") for w in words]
    while len(words) > 1 and (words[-1] in _SUFFIXES or words[-1] in {"and", "of"}):
        words.pop()  # "JPMORGAN CHASE & CO" -> "jpmorgan chase"
    if len(words) > 1 and words[0] == "the":
        words.pop(0)
    return " ".join(w for w in words if w)


@dataclass(frozen=True)
class Filer:
    ticker: str
    cik: int
    title: str


@dataclass(frozen=True)
class FilerMention:
    filer: Filer
    phrase: str
    span: tuple[int, int]


class FilerDirectory:
    """Normalized name -> filer, from the store's `sec_filers` table (empty when absent)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, prefer: set[str] | None = None) -> None:
        self.by_name: dict[str, Filer] = {}
        self.by_ticker: dict[str, Filer] = {}
        has = con.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_name = 'sec_filers'"
        ).fetchone()
        # a store built before the table existed has no filers: the index members still resolve
        rows = (
            con.execute("SELECT ticker, cik, title FROM sec_filers ORDER BY rank").fetchall()
            if has
            else []
        )
        for ticker, cik, title in rows:
            f = Filer(ticker, int(cik), title)
            self.by_ticker.setdefault(ticker, f)
            key = normalize(title)
            known = self.by_name.get(key)
            # the first ticker SEC lists for a name, unless the store holds another class
            if key and (known is None or (prefer and ticker in prefer and known.ticker != ticker
                                          and known.cik == cik)):  # fmt: skip
                self.by_name[key] = f
        for key, f in list(self.by_name.items()):  # short forms never shadow a full name
            words = key.split()
            while len(words) > 1 and words[-1] in _GENERIC_TAIL:
                words.pop()
                self.by_name.setdefault(" ".join(words), f)

    def mentions(self, text: str) -> list[FilerMention]:
        """Filers named in `text`, longest names first, each span used once, in text order."""
        tokens = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]
        norm = [normalize(t) if t != "&" else "and" for t, _, _ in tokens]
        out: list[FilerMention] = []
        i = 0
        while i < len(tokens):
            hit = None
            for n in range(min(MAX_WORDS, len(tokens) - i), 0, -1):
                key = " ".join(w for w in norm[i : i + n] if w)
                last = tokens[i + n - 1][0]
                # "Lowe's" is LOWES COMPANIES as often as it is a possessive
                glued = key + "s" if last.endswith(("'s", "’s")) else key
                filer = self.by_name.get(key) or self.by_name.get(glued)
                if filer and self._plausible(tokens[i : i + n], key):
                    hit = (n, filer)
                    break
            if hit:
                n, filer = hit
                start, end = tokens[i][1], tokens[i + n - 1][2]
                out.append(FilerMention(filer, text[start:end], (start, end)))
                i += n
            else:
                i += 1
        return out

    @staticmethod
    def _plausible(words: list[tuple[str, int, int]], key: str) -> bool:
        """A proper name: capitalised, not ending on a joining word; a one-word name must not
        be an everyday word, and written in capitals it needs five letters (not "CEO")."""
        if not any(w[0][:1].isupper() for w in words):
            return False
        if len(words) > 1:
            return words[-1][0].lower() not in {"and", "of", "the"}
        word = words[0][0]
        if len(key) < 4 or not word[:1].isupper():
            return False
        if key in _COMMON:  # "Target's margins" is the company; "Target prices" is not
            return word.endswith(("'s", "’s"))
        return not word.isupper() or len(word) >= 5
