"""Scoring room: the one figures reader — every figure in a text, read once, as an analyst reads it.

`figures(text)` finds every figure with its span: scale words and suffixes ("1.2 billion",
"$1.2bn", "450K", "3 tn"), percent vs fraction ("12.5%", "12.5 percent", "40 basis points" are
read as the fractions 0.125 and 0.004), accounting negatives "(1,234)", minus signs (incl. the
Unicode minus), currency symbols and codes ($, US$, USD, €, £, ¥), thousands separators, ranges
("1.2-1.4 billion", "between 5% and 7%"), multiples ("3.2x", "3.2 times") and counts ("1,200
employees"). A scale given as context applies to the figures that state none: the question's or
table's units (`scale_hint`: "in millions", "in USD millions"), and, in a source text
(`source=True`: a filing excerpt, a table), its own "(in millions)" lines from there on. Each
figure also carries what it is about (the words before it in its clause) and the period it
refers to (a year, quarter or fiscal label nearby; figure_about.py). What is not a figure (dates,
fiscal labels, numbering, footnotes, document parts, names, windows, formula constants) is
decided in one place, not_figures.py; a bare 1900..2100 integer is kept but marked `is_year`.
The `Figure` record, its kinds, base units and context scales are figure.py's. No LLM, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import replace

from fintrade_tui.scoring.figure import (
    COUNT,
    CURRENCY,
    PLAIN,
    SCALE_WORDS,
    SCALES,
    Figure,
    base_value,
    scale_of,
    with_scale,
)
from fintrade_tui.scoring.figure_about import placed
from fintrade_tui.scoring.not_figures import not_figure_spans

_UNITS = {
    "%": "%",
    "\\%": "%",
    "percent": "%",
    "per cent": "%",
    "pct": "%",
    "percentage point": "pp",
}
_UNITS |= {"percentage points": "pp", "pp": "pp", "basis point": "bp", "basis points": "bp"}
_UNITS |= {"bps": "bp", "bp": "bp", "x": "x", "×": "x", "times": "x"}
_CURRENCY = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
_CODES = ("USD", "EUR", "GBP", "JPY", "CNY", "CAD", "AUD", "CHF")
_CURRENCY_WORDS = {"dollars": "USD", "dollar": "USD", "euros": "EUR", "euro": "EUR"}
_CURRENCY_WORDS |= {"pounds": "GBP", "yen": "JPY"}

_NUMERAL = re.compile(  # a currency code may touch the numeral: "CHF2,000", "USD5m"
    r"(?:(?<![\w.,#@^])|(?<=USD)|(?<=EUR)|(?<=GBP)|(?<=CHF)|(?<=JPY)|(?<=CNY)|(?<=CAD)|(?<=AUD))"
    r"(?<![A-Za-z]-)(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\d])"
)
_BEFORE = re.compile(  # what may stand before a numeral: "(", a sign, a currency, in any order
    r"(?P<open>\(\s?)?(?P<sign>[-+\u2212])?(?P<cur>(?:US\$|[$€£¥])[ \t]?|(?:"
    + "|".join(_CODES)
    + r")\s?)?(?P<open2>\()?(?P<sign2>[-\u2212])?$"
)
_AFTER = re.compile(
    r"(?P<close0>\))?(?:(?P<scale>\s?(?:thousands?|millions?|billions?|trillions?|mn|bn|tn|trn|MM)\b"
    r"|(?:MM|mm|[kKmMbBT])(?![\w%])))?(?P<unit>\s?(?:\\?%|percent\b|per\s+cent\b|pct\b|percentage\s+points?\b|pp\b|basis\s+points?\b"
    r"|bps?\b)|[xX×](?![\w%])|\s(?:times|x)\b)?"
    r"(?P<cur>\s(?:" + "|".join(_CODES + tuple(_CURRENCY_WORDS)) + r")\b)?(?P<close>\s?\))?"
)


_SOURCE_SCALE = re.compile(  # a table's "(in millions)", "$ in thousands", "(Dollars in millions)"
    r"\bin\s+(?:\$\s*|US\$\s*|USD\s+)?(?P<w>thousands|millions|billions)\b"
    r"|\(\s*(?:\$|US\$|USD|€|£)?\s*(?P<p>thousands|millions|billions)\s*\)"
    r"|\(\s*(?:\$|in\s+)?\s*(?P<k>000)'?s\s*\)|\$\s*'?(?P<d>000)s?\b",
    re.I,
)
_NOUN = re.compile(
    r"\s+(?:[A-Za-z-]+\s+)?(?P<noun>shares|employees|workers|customers|clients|users|subscribers|"
    r"members|accounts|stores|locations|branches|restaurants|units|vehicles|contracts|people|"
    r"households|transactions|orders)\b",
    re.I,
)


def figures(
    text: str, scale_hint: str | None = None, ranges: bool = True, source: bool = False
) -> list[Figure]:
    """Every figure in `text`, in order. `scale_hint`: the question's or table's units, for
    figures stating none. `ranges`: a range is one figure ("5-7%"); off, its two ends are two
    figures, the low end in the high end's unit. `source`: a filing excerpt or table, whose own
    "(in millions)" scales the bare numbers after it (the first one, those before it too)."""
    skip = not_figure_spans(text)
    found: list[Figure] = []
    for m in _NUMERAL.finditer(text):
        a, b = m.span()
        if any(s <= a < e for s, e in skip):
            continue
        fig = _read(text, m.group(1), a, b, source)
        if fig is not None:
            found.append(_counted(text, fig))
    merged = _ranges(text, found, ranges)
    if source and (marks := _source_scales(text)):
        merged = [with_scale(f, _scale_at(marks, f.span[0])) for f in merged]
    hint = scale_of(scale_hint)
    out = [with_scale(f, hint) for f in merged] if hint else merged
    return [placed(text, f, out) for f in out]


def _counted(text: str, fig: Figure) -> Figure:
    """A plain number followed by what it counts ("1,200 employees") is a count."""
    if fig.kind == PLAIN and not fig.unit and (n := _NOUN.match(text, fig.span[1])):
        return replace(fig, kind=COUNT, noun=n["noun"].lower(), is_year=False)
    return fig


def _source_scales(text: str) -> list[tuple[int, tuple[float, str]]]:
    out = []
    for h in _SOURCE_SCALE.finditer(text):
        word = (h["w"] or h["p"] or "thousands").lower().rstrip("s")
        out.append((h.start(), (SCALES[word], word)))
    return out


def _scale_at(marks: list[tuple[int, tuple[float, str]]], at: int) -> tuple[float, str]:
    before = [s for p, s in marks if p <= at]
    return before[-1] if before else marks[0][1]


def _read(text: str, raw: str, a: int, b: int, source: bool = False) -> Figure | None:
    before = _BEFORE.search(text[max(0, a - 8) : a])
    after = _AFTER.match(text, b)
    assert before is not None and after is not None  # every group is optional
    pre, start, end = before.group(0), a - len(before.group(0)), after.end()
    closed = bool(after.group("close0") or after.group("close"))
    paren = "(" in pre and closed  # accounting negative: "(1,234)", "$(45) million"
    aside = not source and not _tabular(text, a)  # a source's "(1,234)" is a negative
    if paren and _grouping(text, a - len(pre), after.end()):
        paren = False  # "(1.0175)^{24}", "* (0.25)": brackets of a formula, no sign
        start += pre.rindex("(") + 1
    if paren and not before.group("open2") and text[:start].rstrip()[-1:].isalnum() and aside:
        paren = False  # an aside after a word, "ROE (35.6%)", is no negative
        start += pre.rindex("(") + 1
    if "(" in pre and not closed:  # an unclosed "(" is punctuation: start after it
        start += pre.rindex("(") + 1
    if closed and not paren:  # "(in millions 5)": that ")" is not ours
        end = after.start("close0") if after.group("close0") else after.start("close")
    sign = before.group("sign2") or before.group("sign")
    at = a - len(pre) + pre.index(sign) if sign else a
    if sign and at >= start and at > 0 and text[at - 1].isalnum():
        start, sign = at + 1, None  # "5-7%": that dash joins a range, it is no minus
    if sign and at < start:
        sign = None  # cut off with the unclosed "("
    number = float(raw.replace(",", "")) * (-1 if (sign and sign != "+") or paren else 1)
    unit = _UNITS.get(re.sub(r"\s+", " ", (after.group("unit") or "").strip().lower()), "")
    cur = (before.group("cur") or "").strip()
    cur_after = (after.group("cur") or "").strip()
    currency = _CURRENCY.get(cur, cur) or _CURRENCY_WORDS.get(cur_after.lower(), cur_after)
    scale_raw = (after.group("scale") or "").strip()
    scale_word = SCALE_WORDS.get(scale_raw) or SCALE_WORDS.get(scale_raw.lower(), "")
    decimals = len(raw.split(".")[1]) if "." in raw else 0
    kind, value = base_value(number, unit, currency, SCALES.get(scale_word, 1.0))
    plain_int = kind == PLAIN and not scale_word and not sign and decimals == 0 and "," not in raw
    if text[end : end + 1].isalnum() or text[end : end + 1] == "_":
        return None  # part of a word: "2024E", "1H24", "5G"
    span = text[start:end]
    start += len(span) - len(span.lstrip())
    span = span.strip()
    fig = Figure(span, (start, start + len(span)), number, value, kind, unit=unit)
    return replace(fig, scale=SCALES.get(scale_word, 1.0), scale_word=scale_word,
                   currency=currency, decimals=decimals,
                   is_year=plain_int and 1900 <= number <= 2100 and not paren)  # fmt: skip


def _grouping(text: str, start: int, end: int) -> bool:
    """Brackets of a formula: an operator right before "(" or right after ")"."""
    return bool(re.search(r"[*×/÷^+]\s*$", text[max(0, start - 3) : start])) or bool(
        re.match(r"\s*[*×/÷^]", text[end : end + 3])
    )


def _tabular(text: str, at: int) -> bool:
    """A table's line (cells split by "|", a tab or a run of spaces): "(1,234)" is negative."""
    line = text[text.rfind("\n", 0, at) + 1 : (text.find("\n", at) + 1 or len(text) + 1) - 1]
    return "|" in line or "\t" in line or re.search(r"\S {3,}\S", line) is not None


_JOIN = re.compile(r"^\s*(?:-|–|—|to)\s*$")
_BETWEEN = re.compile(r"\bbetween\s+$", re.I)
_FROM = re.compile(r"\bfrom\s+(?:about\s+|around\s+)?$", re.I)


def _ranges(text: str, found: list[Figure], merge: bool = True) -> list[Figure]:
    """Join "1.2-1.4 billion", "5% to 7%", "between 5% and 7%" into one figure each; unless
    `merge`, keep both ends, the low end read in the high end's unit."""
    out: list[Figure] = []
    i = 0
    while i < len(found):
        lo = found[i]
        hi = found[i + 1] if i + 1 < len(found) else None
        if hi is not None and _joins(text, lo, hi):
            joined = _join(text, lo, hi)
            if merge:
                out.append(joined)
            else:
                low = replace(joined, text=lo.text, span=lo.span, number=lo.number, high=None,
                              decimals=lo.decimals)  # fmt: skip
                out += [low, hi]
            i += 2
            continue
        out.append(lo)
        i += 1
    return out


def _joins(text: str, lo: Figure, hi: Figure) -> bool:
    gap = text[lo.span[1] : hi.span[0]]
    lead = text[max(0, lo.span[0] - 12) : lo.span[0]]
    if lo.is_year or hi.is_year or lo.is_range:
        return False
    if re.fullmatch(r"\s*and\s*", gap):
        ok = bool(_BETWEEN.search(lead))
    else:
        ok = bool(_JOIN.match(gap)) and not (gap.strip() == "to" and _FROM.search(lead))
    same = (lo.kind, lo.scale_word) == (hi.kind, hi.scale_word)
    return ok and (_bare(lo, hi) or same) and hi.number >= lo.number


def _bare(lo: Figure, hi: Figure) -> bool:
    """The low end borrows the high end's unit: "1.2-1.4 billion", "$1.2-1.4 billion"."""
    cur = lo.currency in ("", hi.currency) or not hi.currency
    return lo.kind in (PLAIN, CURRENCY) and not lo.scale_word and cur


def _join(text: str, lo: Figure, hi: Figure) -> Figure:
    currency = hi.currency or lo.currency
    if _bare(lo, hi):
        kind, low = base_value(lo.number, hi.unit, currency, hi.scale)
    else:
        kind, low = hi.kind, lo.value
    between = _BETWEEN.search(text[max(0, lo.span[0] - 12) : lo.span[0]])
    span = (lo.span[0] - (len(between.group(0)) if between else 0), hi.span[1])
    return replace(hi, text=text[span[0] : span[1]], span=span, number=lo.number, value=low,
                   high=hi.value, decimals=max(lo.decimals, hi.decimals), currency=currency,
                   kind=kind if hi.kind in (PLAIN, CURRENCY) else hi.kind)  # fmt: skip
