"""What the time-phrase tests share (tests/unit/test_timephrases_*.py): the reference date
questions resolve against, `D` for short dates, and `check_time`, which resolves a text and
asserts the kind, the window and that the span points at the phrase in the text."""

from __future__ import annotations

from datetime import date

from fintrade_tui.questions.timephrases import TimeRef, resolve_time

REF = date(2025, 9, 30)  # QuestionsConfig.reference_date
D = date


def check_time(
    text: str, kind: str, as_of: date, start: date, phrase: str | None = None
) -> TimeRef:
    ref = resolve_time(text, REF)
    assert ref is not None, text
    assert (ref.kind, ref.as_of, ref.start, ref.end) == (kind, as_of, start, as_of), text
    assert text[ref.span[0] : ref.span[1]] == ref.phrase
    if phrase is not None:
        assert ref.phrase == phrase
    return ref
