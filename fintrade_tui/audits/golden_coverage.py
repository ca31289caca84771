"""Audits room: golden-indicator coverage read from an answer's text — which of a question's
golden indicators the answer states, by rules, never by a model.

An indicator is stated when the answer names it (its canonical name, a synonym or an
abbreviation from the one vocabulary, questions/indicators.py `SYNONYMS`: "return on equity",
"ROE", "E/P", "earnings yield", "momentum_20d") with a value next to it, read by the one figures
reader (scoring/figures.py: dates, years, step numbers and window lengths are no values):

- after the name, in the same clause (up to `REACH` characters, never past a sentence end, a
  semicolon, a line break or the name of another indicator): "ROE of 25.1%", "ROE: 0.2510",
  "| ROE | 25.1% |", "**Return on Equity (ROE)** is 33.38%";
- right before it: "a 25.1% ROE";
- a list of names, then as many values: "ROE and ROA were 25% and 4%" (in that order);
- a table column: the name in a header cell, a value in that column of a row below it.

A name without a value ("Nvidia's ROE is high") is named, not stated. The judge's own list of
metrics (judging/judge.py `golden_prf`) is what a model says the answer uses; this is what the
text shows, and the Arena shows the two side by side.

Decided here: P/E is not E/P (nor P/B B/P): the reciprocal is another figure, which the numeric
audit could not hold against the golden value, so a P/E alone leaves `earnings_price` missing.
The bare word "Yield" (a synonym of `dividend_yield`) is not read from prose: a bond's or a
Treasury's yield is no dividend yield; "dividend yield" is.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from fintrade_tui.questions.indicators import SYNONYMS, canonical
from fintrade_tui.scoring.figure import Figure
from fintrade_tui.scoring.figures import figures

REACH = 60  # characters after a name within which its value must start
_TOO_WIDE = frozenset({"Yield"})  # a vocabulary spelling too common in prose to mean the ratio
_BREAK = re.compile(r"[.!?](?=\s|\*|$)|;|\n")  # a sentence or clause ends (not "33.38")
_BEFORE_GAP = re.compile(r"[\s*_]{0,3}")  # "a 25.1% ROE", "**25.1%** return on equity"
_LIST_GAP = re.compile(r"[\s*_,]*(?:(?:and|&|or)[\s*_]*)?|[\s*_]*/[\s*_]*", re.I)


def _pattern(spelling: str) -> str:
    """A spelling as a regex: separators as any of space, hyphen or underscore ("Medium-term",
    "MEDIUM_TERM"), a slash with spaces or none, a word's plural ("returns on assets");
    abbreviations written in capitals ("ROE", "E/P", "MA20") match as written only."""
    parts = []
    for token in re.split(r"([\s_\-]+|/)", spelling.strip()):
        if not token:
            continue
        if token == "/":
            parts.append(r"\s*/\s*")
        elif re.fullmatch(r"[\s_\-]+", token):
            parts.append(r"[\s_\-]+")
        else:
            plural = "s?" if token.isalpha() and len(token) >= 4 else ""
            parts.append(re.escape(token) + plural)
    body = "".join(parts)
    capitals = not any(c.islower() for c in spelling) and sum(c.isalpha() for c in spelling) <= 4
    return body if capitals else f"(?i:{body})"


@cache
def _names() -> tuple[re.Pattern[str], dict[str, str]]:
    """One regex over every spelling, longest first (so "Earnings Yield" is read before a
    shorter spelling inside it), and the canonical name of each group."""
    spellings: dict[str, str] = {}
    for name, names in SYNONYMS.items():
        own = [name] if "_" in name else []  # "earnings_price", "rsi_14": identifiers
        for s in [*own, *names]:
            if s not in _TOO_WIDE:
                spellings.setdefault(s, name)
    ordered = sorted(spellings, key=len, reverse=True)
    groups = {f"n{i}": spellings[s] for i, s in enumerate(ordered)}
    alts = "|".join(f"(?P<n{i}>{_pattern(s)})" for i, s in enumerate(ordered))
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alts})(?![A-Za-z0-9])"), groups


def named(text: str) -> list[tuple[str, tuple[int, int]]]:
    """(canonical name, span) of every indicator the text names, in order."""
    rx, groups = _names()
    return [(groups[m.lastgroup or ""], m.span()) for m in rx.finditer(text)]


def _clause_end(text: str, at: int) -> int:
    m = _BREAK.search(text, at)
    return m.start() if m else len(text)


def _values(text: str, names: list[tuple[str, tuple[int, int]]]) -> dict[int, Figure]:
    """The value each name (by its index in `names`) is stated with, where it has one."""
    spans = [s for _, s in names]
    figs = [
        f
        for f in figures(text)
        if not f.is_year and not any(a < f.span[1] and f.span[0] < b for a, b in spans)
    ]
    found: dict[int, Figure] = {}
    taken: set[int] = set()  # figures already someone's value (by id)

    def window(i: int) -> list[Figure]:
        """The figures after name i in its clause, before another indicator's name."""
        start = spans[i][1]
        stop = min(_clause_end(text, start), start + REACH)
        for other, (a, _) in names[i + 1 :]:
            if a >= start and other != names[i][0]:
                stop = min(stop, a)
                break
        return [f for f in figs if start <= f.span[0] < stop and id(f) not in taken]

    i = 0
    while i < len(names):
        # a list of different names joined by commas, "and", "/": ROE and ROA of 25% and 4%
        j = i
        while (
            j + 1 < len(names)
            and names[j + 1][0] not in {n for n, _ in names[i : j + 1]}
            and _LIST_GAP.fullmatch(text[spans[j][1] : spans[j + 1][0]])
        ):
            j += 1
        after = window(j)
        if j > i and len(after) >= j - i + 1:
            for k, f in zip(range(i, j + 1), after, strict=False):
                found[k] = f
                taken.add(id(f))
        elif after:
            found[j] = after[0]
            taken.add(id(after[0]))
        i = j + 1
    for k, (a, _) in enumerate(spans):  # "a 25.1% ROE": a value right before the name
        if k in found:
            continue
        for f in figs:
            if id(f) not in taken and f.span[1] <= a and _BEFORE_GAP.fullmatch(text[f.span[1] : a]):
                found[k] = f
                taken.add(id(f))
                break
    return found


def _table_values(text: str) -> dict[str, str]:
    """Markdown tables: a name in a header cell stated by a value in its column below."""
    out: dict[str, str] = {}
    header: list[str | None] | None = None
    for line in text.split("\n"):
        if not line.strip().startswith("|"):
            header = None
            continue
        cells = line.strip().strip("|").split("|")
        if header is None:
            header = [found[0][0] if (found := named(c)) else None for c in cells]
        elif not all(re.fullmatch(r"\s*:?-{2,}:?\s*", c) for c in cells):  # not the |---| rule
            for name, cell in zip(header, cells, strict=False):
                figs = [f for f in figures(cell) if not f.is_year]
                if name and figs:
                    out.setdefault(name, figs[0].text)
    return out


def golden_coverage(answer: str | None, golden: list[str]) -> dict[str, Any]:
    """{"golden": names in the question's order, "stated": those the answer states with a
    value, "missing": the others, "values": {name: the figure as written}, "named": the
    missing ones the answer names without a value}."""
    want: list[str] = []
    for g in golden or []:
        c = canonical(g) or g
        if c not in want:
            want.append(c)
    text = answer or ""
    names = named(text)
    values: dict[str, str] = {}
    for k, f in sorted(_values(text, names).items()):
        values.setdefault(names[k][0], f.text)
    for name, written in _table_values(text).items():
        values.setdefault(name, written)
    stated = [g for g in want if g in values]
    mentioned = {n for n, _ in names}
    return {
        "golden": want,
        "stated": stated,
        "missing": [g for g in want if g not in values],
        "values": {g: values[g] for g in stated},
        "named": [g for g in want if g in mentioned and g not in values],
    }


def coverage_text(cov: dict[str, Any] | None) -> str:
    """`golden coverage 1 of 3 from the text (roe 25.1%; named without a value: roa)`."""
    if not cov:
        return "golden coverage: not read"
    golden = cov.get("golden") or []
    if not golden:
        return "golden coverage: no golden indicators annotated"
    values = cov.get("values") or {}
    shown = ", ".join(f"{g} {values.get(g, '')}".strip() for g in cov.get("stated") or [])
    bits = [shown or "none stated"]
    if cov.get("named"):
        bits.append("named without a value: " + ", ".join(cov["named"]))
    n = len(cov.get("stated") or [])
    return f"golden coverage {n} of {len(golden)} from the text ({'; '.join(bits)})"
