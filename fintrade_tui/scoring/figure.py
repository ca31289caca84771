"""Scoring room: one figure as read — the `Figure` record the figures reader (figures.py) returns.

A figure keeps its text, span and signed numeral, its value in base units (percents and basis
points as fractions, scale words applied), its kind (percent, currency, multiple, plain, count),
unit, scale and currency as written, and what it is about and its period (figure_about.py).
Here too: `base_value` (a numeral, unit and scale to a kind and base-unit value), the scale a
context phrase sets (`scale_of`: "in millions", "%") and its application to the figures stating
none (`with_scale`), and `fmt`, a value as people read it. No LLM, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

PERCENT, CURRENCY, MULTIPLE, PLAIN = "percent", "currency", "multiple", "plain"
COUNT = "count"  # a plain number of things: "1,200 employees"

SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
SCALE_WORDS = {  # as written -> canonical word
    **{w: w for w in SCALES},
    **{w + "s": w for w in SCALES},
    "k": "thousand", "K": "thousand",
    "m": "million", "M": "million", "mn": "million", "mm": "million", "MM": "million",
    "b": "billion", "B": "billion", "bn": "billion",
    "T": "trillion", "tn": "trillion", "trn": "trillion",
}  # fmt: skip


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
    word = "thousand" if m.group(3) else (m.group(1) or SCALE_WORDS[m.group(2).lower()]).lower()
    return SCALES[word], word


def base_value(number: float, unit: str, currency: str, scale: float) -> tuple[str, float]:
    """(kind, value in base units); percents divided as FinQA's script does (x / 100.0)."""
    if unit in ("%", "pp"):
        return PERCENT, number / 100.0
    if unit == "bp":
        return PERCENT, number / 10_000.0
    if unit == "x":
        return MULTIPLE, number
    return (CURRENCY if currency else PLAIN), number * scale


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
