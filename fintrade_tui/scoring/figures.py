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
refers to (a year, quarter or fiscal label nearby). What is not a figure (dates, fiscal labels,
numbering, footnotes, document parts, names, windows, formula constants) is decided in one
place, not_figures.py; a bare 1900..2100 integer is kept but marked `is_year`. No LLM, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from fintrade_tui.scoring.not_figures import not_figure_spans

PERCENT, CURRENCY, MULTIPLE, PLAIN = "percent", "currency", "multiple", "plain"
COUNT = "count"  # a plain number of things: "1,200 employees"

_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_SCALE_WORDS = {  # as written -> canonical word
    **{w: w for w in _SCALES},
    **{w + "s": w for w in _SCALES},
    "k": "thousand", "K": "thousand",
    "m": "million", "M": "million", "mn": "million", "mm": "million", "MM": "million",
    "b": "billion", "B": "billion", "bn": "billion",
    "T": "trillion", "tn": "trillion", "trn": "trillion",
}  # fmt: skip
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


@dataclass(frozen=True)
class Figure:
    """One figure as written in a text, and its value in base units."""

    text: str  # the figure as written ("$1.2bn", "(1,234)", "12.5%")
    span: tuple[int, int]  # in the text, for marking it
    number: float  # the numeral, signed: 12.5 for "12.5%", 1.2 for "$1.2bn"
    value: float  # base units: percents and basis points as fractions, scale applied
    kind: str  # percent | currency | multiple | plain
    unit: str = ""  # as written: "%", "pp" (percentage points), "bp", "x", or ""
    scale: float = 1.0  # the multiplier applied (1e9 for "bn"; from context when scale_from_hint)
    scale_word: str = ""  # thousand | million | billion | trillion (percent: from a hint), or ""
    scale_from_hint: bool = False
    currency: str = ""  # ISO code when one is written
    decimals: int = 0  # digits after the point, as written
    high: float | None = None  # a range's upper end (value is its lower end)
    is_year: bool = False  # a bare 1900..2100 integer: a year unless the reference is one
    noun: str = ""  # what a count counts ("employees"), lowercased
    about: str = ""  # the words before it in its clause ("fy2018 net pp&e"), lowercased
    period: str = ""  # the year or fiscal label it refers to ("FY2018", "Q3 2024"), if named

    @property
    def stated(self) -> float:
        """The number as written, unsigned: 1.58 for "$1.58 billion"."""
        return abs(self.number)

    @property
    def factor(self) -> float:
        """Base units per stated unit: 1e9 for "billion", 0.01 for "%", 1e-4 for "bp"."""
        if self.unit == "bp":
            return 1e-4
        if self.unit in ("%", "pp") or (self.kind == PERCENT and self.scale_word == "percent"):
            return 0.01
        return 1.0 if self.kind == MULTIPLE else self.scale

    @property
    def raw(self) -> float | None:
        """A figure scaled by context: its value as written, without that scale (else None)."""
        return self.number if self.scale_from_hint and self.kind != PERCENT else None

    @property
    def scale_label(self) -> str | None:
        """ "billion" when written, "in millions" when from context, else None."""
        if not self.scale_word or self.scale_word == "percent":
            return None
        return f"in {self.scale_word}s" if self.scale_from_hint else self.scale_word

    @property
    def is_range(self) -> bool:
        return self.high is not None

    def describe(self) -> str:
        """'12.5% = 0.125', '5678 (in millions) = 5,678,000,000', '0.125'."""
        word = self.scale_word + ("s" if self.scale_word != "percent" else "")
        shown = self.text + (f" (in {word})" if self.scale_from_hint else "")
        if self.is_range:
            return f"{shown} = {fmt(self.value)} to {fmt(self.high or 0.0)}"
        return shown if _same(self.text, self.value) else f"{shown} = {fmt(self.value)}"


def fmt(value: float) -> str:
    """A value as people read it: 0.125, 1,200,000,000, -3.5, 14.1; no exponents above 1e-4."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}" if abs(value) >= 1e4 else str(int(value))
    if abs(value) >= 1e4:
        return f"{value:,.2f}".rstrip("0").rstrip(".")
    return f"{value:.10g}"


def _same(text: str, value: float) -> bool:
    try:
        return float(text.replace(",", "")) == value
    except ValueError:
        return False


def scale_of(hint: str | None) -> tuple[float, str] | None:
    """The scale a context phrase sets: 'in millions' -> (1e6, 'million'); '%' -> percent."""
    if not hint:
        return None
    if re.search(r"%|\bper\s?cent|\bpercentage\b", hint, re.I):
        return 0.01, "percent"
    m = re.search(
        r"\b(thousand|million|billion|trillion)s?\b|\b(mn|bn|tn|MM)\b|(\$?000s?\b)", hint, re.I
    )
    if not m:
        return None
    word = "thousand" if m.group(3) else (m.group(1) or _SCALE_WORDS[m.group(2).lower()]).lower()
    return _SCALES[word], word


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
    return [_placed(text, f, out) for f in out]


def _counted(text: str, fig: Figure) -> Figure:
    """A plain number followed by what it counts ("1,200 employees") is a count."""
    if fig.kind == PLAIN and not fig.unit and (n := _NOUN.match(text, fig.span[1])):
        return replace(fig, kind=COUNT, noun=n["noun"].lower(), is_year=False)
    return fig


def _source_scales(text: str) -> list[tuple[int, tuple[float, str]]]:
    out = []
    for h in _SOURCE_SCALE.finditer(text):
        word = (h["w"] or h["p"] or "thousands").lower().rstrip("s")
        out.append((h.start(), (_SCALES[word], word)))
    return out


def _scale_at(marks: list[tuple[int, tuple[float, str]]], at: int) -> tuple[float, str]:
    before = [s for p, s in marks if p <= at]
    return before[-1] if before else marks[0][1]


# --- what a figure is about, and its period ----------------------------------------------------
_CLAUSE_END = re.compile(r"[.!?;:](?:\s|$)|\n|\|")
_PERIOD = re.compile(
    r"\b(?:(?:Q[1-4]|H[12])\s*(?:FY\s*)?'?(?:19|20)?\d{2}|FY\s*'?(?:19|20)?\d{2}|"
    r"(?i:fiscal(?:\s+year)?)\s+(?:19|20)\d{2}|(?:19|20)\d{2})\b"
)
_FOR_PERIOD = re.compile(
    r"\s*(?:\)\s*)?(?:in|for|of|during|at|as\s+of|by)\s+(?:the\s+)?(?:fiscal\s+)?", re.I
)
_STOP = frozenset(
    re.findall(
        r"\S+",
        (
            "the a an of in on for to and or was is were are be been by with as at its it this "
            "that from which approximately about around roughly nearly total company answer "
            "reference its their our we they value amount figure"
        ),
    )
)


def _placed(text: str, fig: Figure, found: list[Figure]) -> Figure:
    """The figure with what it is about (up to 6 words before it in its clause, after the
    previous figure; else the words right after it) and the period named nearest in its
    sentence."""
    a, b = fig.span
    prev = max([f.span[1] for f in found if f.span[1] <= a and not f.is_year], default=0)
    left = _PERIOD.sub(" ", text[max(prev, a - 80) : a])  # "in FY2018 net PP&E": about PP&E
    ends = list(_CLAUSE_END.finditer(left))
    left = left[ends[-1].end() :] if ends else left
    words = _words(left)[-6:] or _words(_CLAUSE_END.split(text[b : b + 60])[0])[:4]
    start = max([m.end() for m in _CLAUSE_END.finditer(text, max(0, a - 120), a)] or [0])
    base = max(start, a - 120)
    near = text[base : b + 60]
    periods = [
        m for m in _PERIOD.finditer(near) if not (a < base + m.end() and base + m.start() < b)
    ]
    period = ""
    right = [m for m in periods if base + m.start() >= b and _FOR_PERIOD.fullmatch(
        text[b : base + m.start()])]  # fmt: skip
    left = [m for m in periods if base + m.end() <= a]
    if right or left:  # "$12.1B in 2023" first, else "In FY2018 ... $12,645 million"
        best = right[0] if right else left[-1]
        period = re.sub(r"\s+", " ", best.group(0)).strip()
    return replace(fig, about=" ".join(words), period=period)


def _words(text: str) -> list[str]:
    found = re.findall(r"[A-Za-z][A-Za-z&/'-]*", text.lower())
    return [w for w in found if w not in _STOP]


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
    scale_word = _SCALE_WORDS.get(scale_raw) or _SCALE_WORDS.get(scale_raw.lower(), "")
    decimals = len(raw.split(".")[1]) if "." in raw else 0
    kind, value = _value(number, unit, currency, _SCALES.get(scale_word, 1.0))
    plain_int = kind == PLAIN and not scale_word and not sign and decimals == 0 and "," not in raw
    if text[end : end + 1].isalnum() or text[end : end + 1] == "_":
        return None  # part of a word: "2024E", "1H24", "5G"
    span = text[start:end]
    start += len(span) - len(span.lstrip())
    span = span.strip()
    fig = Figure(span, (start, start + len(span)), number, value, kind, unit=unit)
    return replace(fig, scale=_SCALES.get(scale_word, 1.0), scale_word=scale_word,
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


def _value(number: float, unit: str, currency: str, scale: float) -> tuple[str, float]:
    """(kind, value in base units); percents divided as FinQA's script does (x / 100.0)."""
    if unit in ("%", "pp"):
        return PERCENT, number / 100.0
    if unit == "bp":
        return PERCENT, number / 10_000.0
    if unit == "x":
        return MULTIPLE, number
    return (CURRENCY if currency else PLAIN), number * scale


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
        kind, low = _value(lo.number, hi.unit, currency, hi.scale)
    else:
        kind, low = hi.kind, lo.value
    between = _BETWEEN.search(text[max(0, lo.span[0] - 12) : lo.span[0]])
    span = (lo.span[0] - (len(between.group(0)) if between else 0), hi.span[1])
    return replace(hi, text=text[span[0] : span[1]], span=span, number=lo.number, value=low,
                   high=hi.value, decimals=max(lo.decimals, hi.decimals), currency=currency,
                   kind=kind if hi.kind in (PLAIN, CURRENCY) else hi.kind)  # fmt: skip


def with_scale(fig: Figure, hint: tuple[float, str]) -> Figure:
    """A context scale applies to figures stating none ("5,678" under "in millions")."""
    factor, word = hint
    if fig.scale_word or fig.kind in (PERCENT, MULTIPLE) or fig.is_year:
        return fig
    if word == "percent":  # TAT-QA's scale "percent": the figures are percentages
        high = None if fig.high is None else fig.high / 100.0
        return replace(fig, kind=PERCENT, value=fig.value / 100.0, high=high, scale_word=word,
                       scale_from_hint=True)  # fmt: skip
    high = None if fig.high is None else fig.high * factor
    return replace(fig, value=fig.value * factor, scale=factor, scale_word=word,
                   scale_from_hint=True, high=high)  # fmt: skip
