"""Scoring room: what kind of text each side of a check is, decided before any figure is
compared — is the answer a refusal or a non-answer, and what kind of reference does it face
(one figure, yes/no, a short list, an open-ended analysis, or no figure at all)?

A refusal is recognised first and is never equal, whatever numbers it happens to hold ("I
cannot determine ... 0"). A reference's kind decides the verdict the matcher may give: only a
single-figure, yes/no or list reference gets equal / not equal; an open-ended analysis gets a
claim-level line (which of its key figures the answer states or contradicts) and is left to
the judge or a person, as is a reference that states no figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fintrade_tui.scoring.figure import Figure
from fintrade_tui.scoring.figures import figures

FIGURE, YES_NO, LIST, OPEN, NO_FIGURE = "figure", "yes_no", "list", "open", "no_figure"
OPEN_WORDS = 40  # a reference longer than this, holding several figures, is an analysis
LIST_MAX = 4  # a short reference with 2..4 figures and list words is a list of answers

_REFUSAL = re.compile(
    r"\b(?:I\s+(?:cannot|can't|can\s?not|am\s+(?:unable|not\s+able)\s+to|do\s+not\s+have|"
    r"don't\s+have|could\s+not|couldn't)\s+(?:determine|calculate|compute|answer|provide|find|"
    r"identify|say|access|give|verify|be\s+certain|know)"
    r"|(?:cannot|can't|can\s?not|could\s+not|couldn't|unable\s+to|impossible\s+to)\s+(?:be\s+)?"
    r"(?:determined?|calculated?|computed?|answered?|derived?|found|identif(?:y|ied)|"
    r"provided?|assessed?|precisely\s+determined?)"
    r"|(?:not|insufficient|no)\s+(?:enough\s+|sufficient\s+|adequate\s+)?(?:information|data|"
    r"details|context|evidence)\s+(?:is\s+|was\s+)?(?:provided|available|given|to\s+(?:determine|"
    r"calculate|answer|compute))"
    r"|\b(?:is|are)\s+not\s+(?:readily|directly)\s+(?:available|provided|disclosed)"
    r"|(?:information|data|details?|figures?)\s+(?:is|are|was|were)\s+not\s+(?:provided|"
    r"available|given|included|present|disclosed|specified)"
    r"|\b(?:context|passage|table|text|document|filing|report|data|information|question|excerpt|"
    r"evidence|statements?)s?\s+(?:provided\s+|given\s+)?(?:does|do|did)\s+not\s+(?:provide|"
    r"contain|include|mention|specify|give|state|offer)"
    r"|\bI(?:'m|\s+am)\s+sorry\b|\bas\s+an\s+AI\b"
    # the model's own lack ("I do not have real-time access", "I do not see enough information")
    r"|\bI\s+(?:do\s+not|don't|did\s+not|didn't)\s+(?:have|see|know)\s+(?:the\s+)?(?:real[-\s]time|"
    r"enough|sufficient|the\s+(?:necessary|specific|required|actual)|access|answer|current)"
    r"|\b(?:not\s+possible|impossible)\s+to\s+(?:\w+\s+)?(?:determine|calculate|compute|assess|"
    r"answer|say)"
    r"|\b(?:does|do|did)\s+not\s+(?:contain|include|provide)\s+(?:the\s+)?(?:specific\s+|"
    r"necessary\s+|complete\s+|required\s+|relevant\s+|full\s+)*(?:data|information|details|"
    r"figures)"
    # the question handed back ("Please provide the necessary figures, and I can help")
    r"|\b(?:please\s+provide|if\s+you\s+(?:can\s+)?provide|you\s+would\s+need\s+to\s+(?:look|check|"
    r"consult|refer|obtain|access|find|review))\b)",
    re.I,
)
REFUSAL_PATTERN = _REFUSAL  # the declining phrases, for readers that skip such sentences
_NON_ANSWER = re.compile(r"^\W*(?:n/?a|none|unknown|not\s+available|no\s+answer)\W*$", re.I)
_MARKER = re.compile(
    r"\b(?:final\s+answer|the\s+answer\s+is|answer\s*:|therefore|thus|hence|in\s+conclusion|"
    r"so\s+the|approximately|estimated?\s+(?:at|to\s+be))\b",
    re.I,
)
_YES_NO = re.compile(
    r"^\W*(?:(?:short|final)\s+answer\W*|answer\W*|conclusion\W*)?(yes|no)\b", re.I
)
_LIST_WORDS = re.compile(r"\band\b|[,;]|\brespectively\b", re.I)


@dataclass(frozen=True)
class Refusal:
    """An answer that declines: the phrase that says so."""

    phrase: str


def refusal(answer: str) -> Refusal | None:
    """The answer declines to answer (or says nothing): the phrase, else None. An answer that
    declines one part and then gives its answer ("the table does not state X directly, but ...
    therefore 12.5%") is no refusal: after its last declining phrase it states a figure and
    marks it as the answer, or goes on for longer than it declined."""
    text = (answer or "").strip()
    if not text or _NON_ANSWER.match(text):
        return Refusal(text or "(empty)")
    found = list(_REFUSAL.finditer(text))
    if not found:
        return None
    last = found[-1]
    after = text[last.end() :]
    if _answers_after(after):
        return None
    return Refusal(_sentence(text, last.start(), last.end()))


def _answers_after(after: str) -> bool:
    """Whether the text after a declining phrase gives an answer anyway."""
    marks = list(_MARKER.finditer(after))
    if marks and any(not f.is_year for f in figures(after[marks[-1].end() :])):
        return True
    if re.search(r"\b(?:however|but|nevertheless|that\s+said)\b", after[:200], re.I):
        stated = [f for f in figures(after) if not f.is_year]
        return bool(stated) and len(after.split()) > 25
    return False


def _sentence(text: str, a: int, b: int) -> str:
    start = max(text.rfind(". ", 0, a) + 2, text.rfind("\n", 0, a) + 1, 0)
    ends = [i for i in (text.find(". ", b), text.find("\n", b)) if i != -1]
    line = " ".join(text[start : min(ends) if ends else len(text)].split())
    return line if len(line) <= 100 else line[:97] + "..."


_ANSWER_TAG = re.compile(r"\bAnswer\s*:\s*")
# an explicit final answer: a line "Answer: ..." / "**Final answer:**", or a boxed result
_ANSWER_LINE = re.compile(r"(?im)^[\s*#>-]*(?:final\s+)?answer\s*(?:\*\*)?\s*[:：]|\\boxed\{")
# where a final answer starts: an answer line, or "the (final) answer is"
_FINAL_LINE = re.compile(_ANSWER_LINE.pattern + r"|\bthe\s+(?:final\s+)?answer\s+is\b")
_CLOSING = re.compile(
    r"\b(?:therefore|thus|hence|in\s+summary|in\s+conclusion|overall)\b[^.\n]*", re.I
)
LONG = 80  # words: a shorter answer may end without a full stop (a span, a figure)


def unfinished(answer: str) -> str | None:
    """A long answer that stops mid-sentence with no final answer given (a reasoning model cut
    at its token cap, still deliberating): the words it stops on, else None."""
    text = (answer or "").rstrip()
    if len(text.split()) < LONG or _ANSWER_LINE.search(text):
        return None
    if text[-1].isalpha() or text[-1] in ",;:-(":
        return " ".join(text[-50:].split())
    return None


def conflicting(answer: str) -> str | None:
    """Two different final answers ("Answer: 13.73 Answer: 18.85", "Answer: 27885 35066"): the
    figures, else None."""
    tags = list(_ANSWER_TAG.finditer(answer or ""))
    finals = []
    for i, m in enumerate(tags):
        end = tags[i + 1].start() if i + 1 < len(tags) else min(len(answer), m.end() + 80)
        line = answer[m.end() : end].split("\n")[0]
        figs = [f for f in figures(line) if not f.is_year]
        bare = re.fullmatch(r"[\s$€£%.,\d()x-]*", line.strip()) is not None
        if len(figs) >= 2 and bare and len({round(f.value, 9) for f in figs}) > 1:
            return " ".join(f.text for f in figs)  # one tag, two figures and nothing else
        finals += figs[:1]
    if len({round(f.value, 9) for f in finals}) > 1:
        return " and ".join(f.text for f in finals)
    return None


def span_stated(answer: str, reference: str) -> bool:
    """A text reference ("cost of sales and in operating expenses", "Canada; United States") is
    stated when every item's words appear in the answer's final answer (after its last
    "Answer:" / "the answer is", else the whole of a short answer)."""
    marks = list(_FINAL_LINE.finditer(answer or ""))
    final = answer[marks[-1].end() :] if marks else answer
    if not marks and len(answer.split()) > LONG:
        # a long answer without an answer line: its closing conclusion ("Therefore, the Data
        # Center segment had the largest increase."), else nothing is read
        closing = list(_CLOSING.finditer(answer[-600:]))
        if not closing:
            return False
        final = answer[-600:][closing[-1].start() :]
    said = set(_tokens(final))
    items = [i for i in re.split(r"\s*;\s*", reference) if i.strip()]
    return bool(items) and all(set(_tokens(i)) <= said and _tokens(i) for i in items)


_ARTICLES = frozenset(re.findall(r"\w+", "a an the and of in on for to as by with or"))


def _tokens(text: str) -> list[str]:
    words = re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text.lower())
    return [w for w in words if w not in _ARTICLES]


def yes_no(text: str) -> str | None:
    """'yes' or 'no' when the text opens with it (after "Answer:" and the like)."""
    m = _YES_NO.match(text or "")
    return m.group(1).lower() if m else None


def stated_yes_no(answer: str) -> str | None:
    """The answer's yes/no: its opening word, else the one its conclusion states ("...
    therefore, yes", "In conclusion: No, ...")."""
    if said := yes_no(answer):
        return said
    tail = answer[-300:]
    concluded: list[str] = re.findall(
        r"\b(?:answer\s+is|conclusion\W+|therefore\W+|so\W+|thus\W+)\W*(yes|no)\b", tail, re.I
    )
    return concluded[-1].lower() if concluded else None


def reference_kind(reference: object, asks_year: bool = False) -> str:
    """figure | yes_no | list | open | no_figure, for a reference as published (a number is a
    figure; text by its words and figures; a year counts only when the question asks one)."""
    if isinstance(reference, int | float) and not isinstance(reference, bool):
        return FIGURE
    text = str(reference or "").strip()
    if yes_no(text):
        return YES_NO
    found = key_figures(text, asks_year)
    words = len(text.split())
    if not found:
        return NO_FIGURE
    if words > OPEN_WORDS or (len(found) > LIST_MAX and words > 15):
        return OPEN
    prose = re.sub(r"\d[\d,.]*", "", text)
    if 2 <= len(found) <= LIST_MAX and _LIST_WORDS.search(prose) and words <= 20:
        return LIST
    return FIGURE


def key_figures(text: str, asks_year: bool = False, hint: str | None = None) -> list[Figure]:
    """A reference's figures, once each (a value stated twice, "0.25 (25%)", counts once)."""
    out: list[Figure] = []
    for f in figures(text, hint):
        if f.is_year and not asks_year:
            continue
        if any(abs(f.value - g.value) <= 1e-9 * max(abs(f.value), 1) for g in out):
            continue
        out.append(f)
    return out


def asks_year(question: str) -> bool:
    """The question asks for a year ("in which year", "what year", "when")."""
    return bool(
        re.search(r"\b(?:which|what)\s+(?:fiscal\s+)?year\b|\bwhen\b", question or "", re.I)
    )
