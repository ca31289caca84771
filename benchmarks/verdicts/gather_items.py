"""Shaping and sampling the items ``gather.py`` writes: one JSON object per published answer
(``make_item``: the answer cut at ANSWER_MAX_CHARS, the question given its table / passages when
short enough), the gold reference as published (``reference``), what counts as an empty answer,
and the seeded question-then-model sampling (``sample_question_model``) every source shares."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

ANSWER_MAX_CHARS = 4000
QUESTION_MAX_CHARS = 3000

Item = dict[str, Any]


def is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list):
        return all(is_empty(v) for v in value)
    return False


def reference(value: Any) -> Any:
    """Gold answer as published: numbers stay numbers, a list of spans becomes text."""
    if isinstance(value, list):
        parts = [str(v) for v in value if not is_empty(v)]
        return parts[0] if len(parts) == 1 else "; ".join(parts)
    return value


def cut(answer: str) -> tuple[str, bool]:
    if len(answer) > ANSWER_MAX_CHARS:
        return answer[:ANSWER_MAX_CHARS], True
    return answer, False


def with_context(question: str, context: str) -> str:
    """Question plus its table/passages when short enough, else the question alone."""
    full = f"{question.strip()}\n\n{context.strip()}" if context.strip() else question.strip()
    return full if len(full) <= QUESTION_MAX_CHARS else question.strip()


def make_item(
    *,
    source: str,
    licence: str,
    origin: str,
    model: str,
    question: str,
    reference: Any,
    answer: str,
    units: str | None = None,
    answer_type: str | None = None,
) -> Item:
    text, was_cut = cut(answer)
    item: Item = {
        "id": "",
        "source": source,
        "licence": licence,
        "origin": origin,
        "model": model,
        "question": question,
        "reference": reference,
        "answer": text,
        "answer_cut": was_cut,
    }
    if units:
        item["units"] = units
    if answer_type:
        item["answer_type"] = answer_type
    return item


def sample_question_model(
    n_questions: int,
    models: list[str],
    want: int,
    make: Callable[[int, str], Item | None],
) -> list[Item]:
    """Visit questions in a seeded random order; give each one a seeded random model.

    ``make`` returns None for a pair that must be skipped (empty answer or reference);
    the next question is then tried, so every question appears at most once.
    """
    rng = random.Random(0)
    order = rng.sample(range(n_questions), n_questions)
    items: list[Item] = []
    for q in order:
        model = rng.choice(models)
        item = make(q, model)
        if item is not None:
            items.append(item)
            if len(items) == want:
                break
    return items
