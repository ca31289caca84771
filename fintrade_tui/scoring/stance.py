"""Scoring room: the yes or no an answer concludes, read from what it says rather than from the
word itself — as a person reads "PepsiCo has not reported any materially important ongoing
legal battles" as "no" to "Has PepsiCo reported any materially important ongoing legal battles?".

The reading, in order:
1. the word: an answer that opens with yes/no, or concludes with it ("So in summary, yes, ...");
2. a hedge that concludes nothing ("it is unclear whether", "may or may not"): no stance;
3. the question's claim restated: the sentences that carry most of the question's own words
   (its claim, without the company's name and the periods), each affirming or negating it by
   the negations in front of those words ("does not appear to be a capital-intensive business");
4. a direction asked ("Did PP&E grow", "Was there any drop in cash"): the direction the answer
   states for it ("decreased to $1,093 million", "remained stable"), or the one its "from X to
   Y" figures show.
A concluding sentence ("in summary", "therefore", "it can be inferred that", "indicates that")
outranks the rest; sentences that disagree with no conclusion to settle them are no stance.
Where no stance can be read the answer is left to the judge or a person, never called wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fintrade_tui.scoring.answer_kinds import REFUSAL_PATTERN as _REFUSAL
from fintrade_tui.scoring.answer_kinds import stated_yes_no

UP, DOWN, FLAT = "up", "down", "flat"


@dataclass(frozen=True)
class Stance:
    """The answer's yes or no, and the words it was read from."""

    said: str  # "yes" | "no"
    how: str  # "the word" | "in words" | "by direction"
    phrase: str  # the sentence (clipped) it was read from


_YES_NO_Q = re.compile(
    r"^\W*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should)\b", re.I
)
_HEDGE = re.compile(
    r"\b(?:(?:it\s+is|it's|remains?)\s+(?:unclear|uncertain|not\s+clear|difficult\s+to\s+"
    r"(?:say|determine|tell|conclude))|may\s+or\s+may\s+not|cannot\s+(?:be\s+)?(?:conclude\w*|"
    r"definitively)|not\s+possible\s+to\s+(?:say|conclude)|inconclusive)\b",
    re.I,
)
# sentences that state no stance: a refusal, the question asked back ("to determine whether"),
# a definition ("capital intensity typically refers to")
_SAYS_NOTHING = re.compile(
    _REFUSAL.pattern + r"|\b(?:whether|if)\b|\b(?:typically|generally|usually)\b|\brefers?\s+to\b|"
    r"\b(?:is|are)\s+(?:defined|calculated|measured)\b|\bwould\s+need\b|"
    r"\bno\s+(?:specific\s+|explicit\s+|direct\s+)?(?:information|data|details)\b",
    re.I,
)
_CONCLUDES = re.compile(
    r"\b(?:in\s+summary|in\s+conclusion|to\s+summari[sz]e|overall|therefore|thus|hence|"
    r"consequently|so\b|this\s+(?:indicates|suggests|means|shows)|(?:it\s+)?can\s+be\s+"
    r"(?:inferred|concluded)|(?:would|can)\s+conclude|indicat(?:es|ing)\s+that|suggest(?:s|ing)"
    r"\s+that|in\s+short|the\s+answer\s+is)\b",
    re.I,
)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none|without|lacks?|n't)\b|n't\b", re.I)
_STOP = frozenset(
    re.findall(
        r"\S+",
        """a an the of in on at to for by with from as and or any there their its it this that
    these those be been being is are was were does do did has have had can could will would
    should based data information provided period periods year years fiscal quarter quarters
    compared same prior previous between during close end ended as of than more most which
    what who whom whose how if then please state explain that's company company's what's
    measure metric relevant figures figure primarily reasonably""",
    )
)
_UP = re.compile(
    r"\b(?:increas\w*|gr[eo]w\w*|rise|rises|rose|risen|rising|improv\w*|rais\w*|higher|"
    r"expand\w*|up|gain\w*|jump\w*|climb\w*|positive)\b",
    re.I,
)
_DOWN = re.compile(
    r"\b(?:decreas\w*|declin\w*|drop\w*|fell|fall\w*|reduc\w*|lower\w*|shr[ai]nk\w*|down|"
    r"deteriorat\w*|contract\w*|negative|weaken\w*|dip\w*)\b",
    re.I,
)
_FLAT = re.compile(
    r"\b(?:remain(?:ed|s)?\s+(?:stable|flat|unchanged|the\s+same|steady|constant)|"
    r"(?:was|were|is|stayed)\s+(?:flat|unchanged|stable)|no\s+(?:significant\s+|material\s+)?"
    r"change)\b",
    re.I,
)
_SENTENCE = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[A-Z0-9\"'(])|\n+")
# a change the question asks about: a verb of change ("did it grow", "has it increased"), or
# "any drop / decline / increase in" — not "a high growth company"
_ASKS_CHANGE = re.compile(
    r"\b(?:increas(?:e|ed|ing)|gr[eo]w(?:n|s|ing)?|rise|rose|risen|improv(?:e|ed)|rais(?:e|ed)|"
    r"decreas(?:e|ed|ing)|declin(?:e|ed|ing)|drop(?:ped)?|f[ae]ll|fallen|reduc(?:e|ed))\b",
    re.I,
)


def stance(question: str, answer: str) -> Stance | None:
    """The yes or no `answer` concludes to the yes/no `question`, else None (see the module
    docstring for the order of readings)."""
    if said := stated_yes_no(answer or ""):
        return Stance(said, "the word", _clip(answer.strip().split("\n")[0]))
    if concluded := _concluding_word(answer or ""):
        return Stance(concluded[0], "the word", concluded[1])
    sentences = [s.strip() for s in _SENTENCE.split(answer or "") if s and s.strip()]
    sentences = [s for s in sentences if not _SAYS_NOTHING.search(s)]
    concluding = [s for s in sentences if _CONCLUDES.search(s)]
    # a reader takes a stance from the conclusion, else from how the answer opens or closes
    ends = sentences[:2] + sentences[2:][-2:]
    if any(_HEDGE.search(s) for s in concluding[-2:]):
        return None
    claim = claim_words(question)
    if not claim:  # the claim is all names ("Did Pfizer grow its PPNE"): its acronyms count
        claim = [
            _stem(w.lower()) for w in re.findall(r"\b[A-Z][A-Z&]{1,}\b", _claim_text(question))
        ]
    change = _ASKS_CHANGE.findall(_claim_text(question))
    asked = _direction(" ".join(change)) if change else None
    for pool in (concluding, ends):
        read = [r for s in pool if (r := _read(s, claim, asked)) is not None]
        if read and len({r.said for r in read}) == 1:
            return read[-1]
        if read and pool is concluding:
            return read[-1] if _last_settles(read) else None
    return None


def is_yes_no_question(question: str) -> bool:
    """The question asks for a yes or no ("Is ...", "Did ...", "Has ...")."""
    return bool(_YES_NO_Q.match(_claim_text(question)))


def claim_words(question: str) -> list[str]:
    """The question's claim as word stems: its own words without the company's name, periods,
    figures and the words every question has."""
    text = _claim_text(question)
    words = re.findall(r"[A-Za-z][A-Za-z&'-]*", text)
    out = []
    for i, w in enumerate(words):
        low = w.lower().strip("'")
        if i > 0 and w[0].isupper() and low not in ("ebitda",):
            continue  # a name (the company, a segment): the answer may call it otherwise
        if low in _STOP or len(low) < 3 or re.fullmatch(r"(?:fy|q[1-4]|h[12])\w*", low):
            continue
        if _ASKS_CHANGE.fullmatch(low):
            continue  # a direction is read apart (_direction)
        out += [_stem(p) for p in re.split(r"[-&]", low) if len(p) >= 3 and p not in _STOP]
    return list(dict.fromkeys(out))


def _claim_text(question: str) -> str:
    """The question's first sentence, without a "based on ..." clause."""
    first = re.split(r"\?|\.\s", question or "", maxsplit=1)[0]
    return re.split(r"\b(?:based\s+on|according\s+to|using|looking\s+at)\b", first, flags=re.I)[0]


def _stem(word: str) -> str:
    """A crude stem: "reported" and "report", "materially" and "material" meet."""
    return word[:5] if len(word) > 5 else word


def _read(sentence: str, claim: list[str], asked: str | None) -> Stance | None:
    """The stance one sentence takes on the claim, if it restates it."""
    if asked is not None:
        went = _direction(sentence) or _from_to(sentence)
        if went is not None and _mentions(sentence, claim, 1):
            said = "yes" if went == asked else "no"
            if went == asked and _negated_before(sentence, _first_direction(sentence)):
                said = "no"
            return Stance(said, "by direction", _clip(sentence))
        return None
    if not claim or not _mentions(sentence, claim, _needed(claim)):
        return None
    at = _positions(sentence, claim)
    between = sentence[min(at) : max(at)]  # "no material pending legal proceedings"
    negated = _negated_before(sentence, min(at)) or bool(_NEGATION.search(between))
    said = "no" if negated else "yes"
    return Stance(said, "in words", _clip(sentence))


def _needed(claim: list[str]) -> int:
    """How many of the claim's words a sentence must carry to restate it."""
    return 1 if len(claim) <= 1 else 2 if len(claim) <= 4 else (len(claim) + 1) // 2


def _stems(sentence: str) -> list[tuple[int, str]]:
    return [(m.start(), _stem(m.group(0).lower())) for m in re.finditer(r"[A-Za-z]+", sentence)]


def _mentions(sentence: str, claim: list[str], needed: int) -> bool:
    said = {s for _, s in _stems(sentence)}
    return len(set(claim) & said) >= needed


def _positions(sentence: str, claim: list[str]) -> list[int]:
    wanted = set(claim)
    return [i for i, s in _stems(sentence) if s in wanted] or [len(sentence)]


def _negated_before(sentence: str, at: int) -> bool:
    """A negation in the clause before position `at` (within ten words)."""
    clause = re.split(r"[,;:()]|\bbut\b|\bhowever\b|\bwhile\b", sentence[:at])[-1]
    words = clause.split()[-10:]
    return bool(_NEGATION.search(" ".join(words)))


def _direction(text: str) -> str | None:
    """The one direction `text` states (flat first), else None."""
    if _FLAT.search(text):
        return FLAT
    up, down = bool(_UP.search(text)), bool(_DOWN.search(text))
    return UP if up and not down else DOWN if down and not up else None


def _first_direction(sentence: str) -> int:
    hits = [m.start() for m in (_UP.search(sentence), _DOWN.search(sentence)) if m]
    return min(hits) if hits else len(sentence)


def _from_to(sentence: str) -> str | None:
    """The direction "from $13,745 million ... to $14,882 million" shows."""
    from fintrade_tui.scoring.figures import figures

    m = re.search(r"\bfrom\b(.{1,60}?)\bto\b(.{1,40})", sentence, re.I)
    if not m:
        return None
    a = [f for f in figures(m.group(1)) if not f.is_year]
    b = [f for f in figures(m.group(2)) if not f.is_year]
    if not a or not b or a[0].kind != b[0].kind:
        return None
    x, y = a[0].value, b[0].value
    return UP if y > x else DOWN if y < x else FLAT


def _concluding_word(answer: str) -> tuple[str, str] | None:
    """A yes or no that opens a concluding sentence ("So in summary, yes, the filing ...")."""
    found = re.findall(
        r"(?:^|[.:\n]\s*)(?:\**\s*)?(?:(?:so|and)\s+)?(?:in\s+summary|in\s+conclusion|overall|"
        r"therefore|thus|so|to\s+summari[sz]e|in\s+short)\W{1,4}(yes|no)\b([^.\n]{0,100})",
        answer,
        re.I,
    )
    return (found[-1][0].lower(), _clip(found[-1][0] + found[-1][1])) if found else None


def _last_settles(read: list[Stance]) -> bool:
    """Concluding sentences that disagree: the last one settles only when it is the answer's
    closing summary (the later ones agree with it)."""
    return len(read) >= 2 and read[-1].said == read[-2].said


def _clip(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."
