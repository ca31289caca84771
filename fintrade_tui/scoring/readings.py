"""Scoring room: how a person reads an answer's figure against a reference the tolerance alone
would call different — the readings measured against FinanceBench's people's verdicts and the
project's regression set (`make bench-checks`), each with the one phrase its reason gives.

- a percentage written as a fraction or in points where the question asks for a percentage or
  a rate, where "percent" follows the figure, or where the answer states the same figure with
  "%" elsewhere ("-0.2004" after "a decrease of 20.04%", reference -20.04);
- basis points where the question asks for them ("0.37%" for 37 bps);
- another scale where the reference states none ("$458,055,556" for 458.611 — millions);
- the reference rounded to the answer's precision (two or more significant digits written:
  "13%" for 0.134), or the answer rounded to the reference's ("0.69" for a published "0.7");
- the sign carried by words: the same magnitude where the answer says "a decrease of" / "in
  losses" beside it, or the question asks for a "difference" (which has no direction).
"""

from __future__ import annotations

import re

from fintrade_tui.scoring.figure import PERCENT, Figure

_ASKS_PERCENT = re.compile(r"\bper\s?cent(?:age)?\b|%|\brate\b|\bmargin\b|\byield\b", re.I)
_ASKS_BPS = re.compile(r"\bbasis\s+points?\b|\bbps?\b", re.I)
_PERCENT_AFTER = re.compile(r"\s*\(?\s*(?:unit\s*:\s*)?(?:percent|per\s?cent|%)", re.I)
_DIRECTION_BEFORE = re.compile(
    r"\b(?:decrease[ds]?|declin(?:e|ed|es)|drop(?:ped)?|fell|fall|lower|loss(?:es)?|reduction|"
    r"reduced|negative|down|shrank|contracted)\b[^.\d]{0,20}$",
    re.I,
)
_DIRECTION_AFTER = re.compile(
    r"^[^.\d]{0,12}\b(?:in\s+)?(?:loss(?:es)?|decrease|decline|lower)\b", re.I
)
_SCALES = (1e3, 1e6, 1e9)


def close(a: float, r: float, tol: tuple[float, float]) -> bool:
    """|a - r| within the relative tolerance of r, or the absolute one."""
    return abs(a - r) <= max(tol[0] * abs(r), tol[1])


def in_units(value: float, fig: Figure) -> float:
    """`value` written in the figure's own units (percent points for "14.1%", billions...)."""
    if fig.unit in ("%", "pp") or fig.scale_word == "percent":
        return value * 100
    if fig.unit == "bp":
        return value * 10_000
    return value if fig.unit == "x" else value / fig.scale


def as_a_person(
    fig: Figure,
    ref: Figure,
    question: str,
    text: str = "",
    found: list[Figure] | None = None,
    tol: tuple[float, float] = (0.005, 1e-9),
) -> str | None:
    """The reading under which a person takes `fig` as the reference (see the module
    docstring), as the phrase its reason gives; None when no reading makes them equal."""
    if fig.is_range or ref.is_range or not ref.value or ref.is_year or fig.is_year:
        return None
    found = found or []
    for read in (_percent, _bps, _scale, _precision, _sign):
        if why := read(fig, ref, question, text, found, tol):
            return why
    return None


def _percent(fig: Figure, ref: Figure, question: str, text: str, found: list[Figure],
             tol: tuple[float, float]) -> str | None:  # fmt: skip
    if _ASKS_PERCENT.search(question):
        why = "the question asks for a percentage or a rate"
    elif _PERCENT_AFTER.match(text, fig.span[1]) and fig.span[1] > 0:
        why = "the answer says percent"
    elif any(
        f.unit == "%" and close(abs(f.value), abs(fig.value), tol) for f in found if f is not fig
    ):
        why = "the answer states it with % too"
    else:
        return None
    if fig.kind != PERCENT and close(fig.value / 100, ref.value, tol):
        return f"equal read as a percentage ({why})"
    if ref.kind != PERCENT and close(fig.value * 100, ref.value, tol):
        return f"equal in percentage points ({why})"
    return None


def _bps(fig: Figure, ref: Figure, question: str, text: str, found: list[Figure],
         tol: tuple[float, float]) -> str | None:  # fmt: skip
    if (
        _ASKS_BPS.search(question)
        and ref.kind != PERCENT
        and close(fig.value * 1e4, ref.value, tol)
    ):
        return "equal in basis points (the question asks for them)"
    return None


def _scale(fig: Figure, ref: Figure, question: str, text: str, found: list[Figure],
           tol: tuple[float, float]) -> str | None:  # fmt: skip
    """The reference states no scale of its own: the answer may be in another one."""
    if PERCENT in (fig.kind, ref.kind) or (ref.scale_word and not ref.scale_from_hint):
        return None
    for factor in _SCALES:
        for a, r in ((fig.value, ref.value * factor), (fig.value * factor, ref.value)):
            if close(a, r, tol):
                return "equal in another scale (the reference states none)"
    if ref.scale_from_hint and close(fig.value, ref.value / ref.scale, tol):
        return "equal as written (the answer states the figure without the table's scale)"
    return None


def _precision(fig: Figure, ref: Figure, question: str, text: str, found: list[Figure],
               tol: tuple[float, float]) -> str | None:  # fmt: skip
    digits = len(re.sub(r"\D", "", f"{fig.stated:.{fig.decimals}f}").lstrip("0"))
    if digits >= 2 and fig.number and round(in_units(ref.value, fig), fig.decimals) == fig.number:
        stated = f"{fig.decimals} decimal{'s' * (fig.decimals != 1)}"
        return f"equal at the answer's precision ({stated})"
    places = significant_decimals(ref)
    written = places > 0 and ref.span[0] >= 0  # a reference written as text, rounded
    mine = in_units(fig.value, ref) if ref.kind == PERCENT else fig.value / ref.scale
    if written and round(mine, places) == round(ref.number, places):
        return f"equal at the reference's precision ({places} decimal{'s' * (places != 1)})"
    return None


def significant_decimals(fig: Figure) -> int:
    """The decimals a figure written as text states: trailing zeros after the point are
    formatting ("$4.60" states tenths, "$1832.00" whole units), as people read them."""
    if fig.span[0] < 0:
        return fig.decimals
    digits = f"{fig.stated:.{fig.decimals}f}".split(".")
    return len(digits[1].rstrip("0")) if len(digits) > 1 else 0


def strict_miss(fig: Figure, ref: Figure) -> bool:
    """Within the tolerance yet another figure: a reference written to three or more
    significant digits, an answer written at least as finely, and the two apart by more than
    rounding of intermediate steps moves the last digit (two units of the reference's last
    place, or 0.1 %) — people read 93.55 against 93.86 as another calculation."""
    if ref.span[0] < 0 or fig.is_range or ref.is_range or not ref.value:
        return False
    places = significant_decimals(ref)
    digits = len(re.sub(r"\D", "", f"{ref.stated:.{places}f}").lstrip("0"))
    ref_unit = 10.0**-places * ref.factor
    fig_unit = 10.0**-fig.decimals * fig.factor
    if digits < 3 or fig_unit > ref_unit * (1 + 1e-9):
        return False
    return abs(fig.value - ref.value) > max(2 * ref_unit, 1e-3 * abs(ref.value)) * (1 + 1e-9)


def _sign(fig: Figure, ref: Figure, question: str, text: str, found: list[Figure],
          tol: tuple[float, float]) -> str | None:  # fmt: skip
    if (fig.value < 0) == (ref.value < 0) or not close(abs(fig.value), abs(ref.value), tol):
        return None
    if re.search(r"\bdifference\b", question, re.I) and not re.search(
        r"\b(?:increase|decrease|grow|decline|rise|fall)\b", question, re.I
    ):
        return "equal in size (the question asks for a difference, which has no direction)"
    for f in [fig, *found]:
        if abs(abs(f.number) - abs(fig.number)) > 1e-9 * max(1.0, abs(fig.number)):
            continue
        a, b = f.span
        if _DIRECTION_BEFORE.search(text[max(0, a - 40) : a]) or _DIRECTION_AFTER.match(text[b:]):
            return "equal in size; the answer's words carry the sign"
    return None


def agrees(fig: Figure, ref: Figure, tol: tuple[float, float]) -> bool:
    """The answer's figure states the reference's: within the tolerance, or the reference
    rounded to the answer's precision (two or more significant digits written)."""
    if fig.is_range or ref.is_range:
        return False
    if close(fig.value, ref.value, tol):
        return True
    return _precision(fig, ref, "", "", [], tol) is not None


_GENERIC = frozenset(
    re.findall(
        r"\S+", ("is was were be rate ratio value level current its of than above below net total")
    )
)


def about_same(f: Figure, r: Figure) -> bool:
    """About the same thing (a content word in common) and not about different periods."""
    a, b = set(f.about.split()) - _GENERIC, set(r.about.split()) - _GENERIC
    if not a & b:
        return False
    return not (f.period and r.period and f.period != r.period)
