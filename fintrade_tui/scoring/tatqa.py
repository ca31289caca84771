"""TAT-QA scoring room: the answer matcher's `tatqa` mode, TAT-QA's own rules in our words.

TAT-QA (NExTplusplus/TAT-QA, tatqa_metric.py / tatqa_utils.py) scores a prediction given as
(answer or list of spans, scale): each side becomes one string, a number as its value rounded to
2 places times its scale, printed with 4 decimals ("1.2" with "million" -> "1200000.0000"; a
written "22.12%" -> "0.2212"), text spans lowercased without punctuation and articles; exact
match compares the strings, F1 their bags of words (rounded to 2 places), and for arithmetic and
count answers F1 is the exact match. The scale is scored separately: prediction scale == gold
scale. A bare prediction without a scale is also tried as a number ("0.2212" for 22.12 percent).

A free-text answer is first put in that format: the figure the answer gives (as the other modes
pick it) becomes its numeral and scale ("Revenue was $1,496.5 million." -> (["1496.5"],
"million"); "12.5%" -> (["12.5"], "percent")); for a multi-span reference the answer is split at
commas, semicolons and "and". TAT-QA's reading of parentheses is kept for predictions given in
its format: "(134)" is negative, "(1,234)" is not (a free-text "(1,234)" becomes "-1234").
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.scoring.figure import Figure, fmt, scale_of
from fintrade_tui.scoring.figures import figures
from fintrade_tui.scoring.verdict import EQUAL, NO_NUMBER, NOT_EQUAL, Match, pick

_SCALE = {"": 1, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "percent": 0.01}
_STRIP = str.maketrans("", "", "'\"\\$€£¥%(),[]")  # what TAT-QA ignores inside a number
_FLOAT = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf|infinity)", re.I)
_WORD_AFTER = re.compile(r"[\d.]+\s?[a-zA-Z]+")
_QUOTES = str.maketrans("", "", "[]'\"")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def tatqa_match(
    answer: str | list[str],
    reference: Any,
    *,
    scale_hint: str | None = None,
    answer_scale: str | None = None,
) -> Match:
    """The `tatqa` mode of answer_match.match (which see)."""
    gold = gold_annotation(reference, scale_hint)
    kind, scale = gold["answer_type"], gold.get("scale") or ""
    golds = _gold_answers(gold)
    if isinstance(answer, list) or answer_scale is not None:
        pred = (list(answer) if isinstance(answer, list) else [answer], answer_scale or "")
        fig = None
    else:
        pred, fig = _convert(str(answer or ""), golds, kind, scale)
    if not [p for p in pred[0] if str(p).strip()]:
        why = f"no answer to score (reference {_show(golds, scale)})"
        return Match(NO_NUMBER, why, "tatqa", None, _show(golds, scale), em=0.0, f1=0.0,
                     scale_ok=pred[1] == scale, tatqa_prediction=pred)  # fmt: skip
    gold_str = _answer_str(golds, scale)
    tries = [_answer_str(pred[0], pred[1])]
    if len(pred[0]) == 1 and not pred[1] and "%" not in str(pred[0][0]):
        value = _number(str(pred[0][0]))  # TAT-QA's second reading: a bare fraction
        tries += [] if value is None else [f"{value:.4f}"]
    em, f1 = max(_metrics(t, gold_str) for t in tries)
    if kind in ("arithmetic", "count"):
        f1 = em
    scale_ok = pred[1] == scale
    verdict = EQUAL if em == 1 else NOT_EQUAL
    said = "exact match" if em == 1 else "no exact match"
    shown = f"'{_clip(pred[0][0])}'" if len(pred[0]) == 1 else _clip(str(pred[0]))
    read = f" (read from {fig.text})" if fig is not None and fig.text != pred[0][0] else ""
    reason = (
        f"answer {shown}{read} scale '{pred[1]}' -> {_clip(_best(tries, gold_str))}, reference "
        f"{_clip(_show(golds, scale))} -> {_clip(_norm(gold_str))}: {said}, F1 {f1:.2f}; scale "
        + ("matches" if scale_ok else f"'{pred[1]}' vs '{scale}'")
    )
    value = fig.value if fig is not None else _number(str(pred[0][0]))
    return Match(verdict, reason, "tatqa", value, gold_str, fig, None, em, f1, scale_ok, pred)


def gold_annotation(reference: Any, scale_hint: str | None) -> dict[str, Any]:
    """A TAT-QA annotation; a bare reference becomes one (arithmetic if it is a number)."""
    if isinstance(reference, Mapping):
        if "answer" not in reference or reference.get("answer_type") is None:
            raise UserError(
                "TAT-QA reference",
                f"has no 'answer' or 'answer_type' (keys: {', '.join(map(str, reference))})",
                "pass the question's annotation as TAT-QA publishes it",
            )
        return dict(reference)
    hint = scale_of(scale_hint)
    scale = hint[1] if hint else ""
    if isinstance(reference, int | float) and not isinstance(reference, bool):
        return {"answer": reference, "answer_type": "arithmetic", "scale": scale}
    if any(f.scale_word for f in figures(str(reference))):
        scale = ""  # "$391.0 billion" states its own scale
    return {"answer": [str(reference)], "answer_type": "span", "scale": scale}


def _gold_answers(gold: Mapping[str, Any]) -> list[str]:
    answer, kind = gold["answer"], gold["answer_type"]
    if kind in ("span", "multi-span"):
        return list(answer) if isinstance(answer, list | tuple) else [answer]
    return [str(int(answer)) if kind == "count" else str(answer)]


def _convert(
    text: str, golds: list[str], kind: str, scale: str
) -> tuple[tuple[list[str], str], Figure | None]:
    """A free-text answer in TAT-QA's prediction format, and the figure it was read from."""
    if kind == "multi-span":
        parts = re.split(r"\s*(?:[,;]|\band\b)\s*", text.strip().rstrip("."))
        return ([p for p in parts if p], ""), None
    numeric = kind in ("arithmetic", "count") or all(_is_number(str(g)) for g in golds)
    found = [f for f in figures(text) if not f.is_year or any(_is_year(g) for g in golds)]
    if not numeric or not found:
        return ([text.strip().rstrip(".")], ""), None
    ref = figures(str(golds[-1]), scale)
    fig = pick(text, found, ref[-1]) if ref else found[-1]
    if fig.is_range:  # TAT-QA has no ranges: scored as the words written
        return ([fig.text], ""), fig
    number, decimals, scale_word = fig.number, fig.decimals, fig.scale_word
    if fig.unit == "bp":  # 25 bps = 0.25 percent
        number, decimals, scale_word = number / 100, decimals + 2, "percent"
    elif fig.unit in ("%", "pp"):
        scale_word = "percent"
    elif scale_word == "trillion":  # not a TAT-QA scale: 3.8 trillion = 3800 billion
        number, decimals, scale_word = number * 1000, max(0, decimals - 3), "billion"
    numeral = f"{number:.{decimals}f}"  # the digits as written, without separators
    return ([numeral], scale_word if scale_word in _SCALE else ""), fig


def _is_year(text: str) -> bool:
    return bool(re.fullmatch(r"\s*(19|20)\d\d\s*", str(text)))


# --- TAT-QA's reading of numbers and words ------------------------------------------------------
def _is_number(text: str) -> bool:
    """TAT-QA's test: the first word is a number (its symbols ignored), the second a scale."""
    words = " ".join(w.translate(_STRIP) for w in text.split()).split()
    if not words or not _FLOAT.fullmatch(words[0]) or words[0].lower().lstrip("+-") in ("nan",):
        return False
    return len(words) < 2 or _scale_in(words[1]) != 1


def _scale_in(word: str) -> float:
    w = word.lower()
    for name in ("hundred", "thousand", "million", "billion", "percent"):
        if name in w:
            return 100 if name == "hundred" else _SCALE[name]
    return 1


def _number(text: str) -> float | int | None:
    """The value of a TAT-QA number (scale word, "%" and "(n)" applied), to 4 places."""
    if not _is_number(text):
        return None
    found = figures(text.translate(_QUOTES))  # "['34.12%']" is a number, no citation label
    if not found:
        return None
    fig = found[0]
    # TAT-QA's scale word is the first "<digits> <letters>" ("$(9.8) million" has none)
    word = _WORD_AFTER.search(text)
    scaled = fig.scale_word and word is not None and _scale_in(word.group(0)) != 1
    value = round(fig.value if fig.unit in ("%", "pp") or scaled else fig.number, 4)
    if "(" in fig.text and not re.search(r"\([\d.\s]+\)", text):
        value = abs(value)  # TAT-QA's rule: "(134)" is negative, "(1,234)" and "(5%)" are not
    whole = fig.decimals == 0 and fig.unit not in ("%", "pp") and value == int(value)
    return int(value) if whole else value


def _answer_str(answers: list[Any], scale: str) -> str:
    """TAT-QA's one string for a list of answers and their scale."""
    out = []
    for ans in sorted(answers, key=lambda a: (str(type(a)), a)):
        text = str(ans)
        value = _number(text)
        if value is None:
            out.append(f"{text} {scale}" if scale else text)
        elif "%" in text:
            out.append(f"{value:.4f}")
        else:
            out.append(f"{round(value, 2) * _scale_in(scale or ''):.4f}")
    return " ".join(out)


def _norm_word(word: str) -> str:
    """One space-separated word as TAT-QA normalises it (it may hold no-break spaces)."""
    word = word.lower()
    if _is_number(word):
        value = _number(word)
        return word if value is None else str(value)
    word = "".join(ch for ch in word if ch not in string.punctuation)
    return " ".join(_ARTICLES.sub(" ", word).split())


def _norm(text: str) -> str:
    return " ".join(w for w in (_norm_word(t).strip() for t in text.split(" ")) if w)


def _metrics(pred: str, gold: str) -> tuple[float, float]:
    p, g = _norm(pred), _norm(gold)
    em = 1.0 if p == g else 0.0
    pb, gb = set(p.split()), set(g.split())
    common = len(pb & gb)
    precision = common / len(pb) if pb else 1.0
    recall = common / len(gb) if gb else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return em, round(f1, 2)


def _best(tries: list[str], gold: str) -> str:
    return _norm(max(tries, key=lambda t: _metrics(t, gold)))


def _clip(text: str, width: int = 60) -> str:
    """One line, at most `width` characters: reasons are one line."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _show(golds: list[Any], scale: str) -> str:
    shown = ", ".join(fmt(g) if isinstance(g, float) else str(g) for g in golds)
    return f"{shown} ({scale})" if scale else shown
