"""Knowledge-cutoff room: when a model's training data ends, and whether a question's as-of
falls before it — a model trained on what happened after the as-of date may answer from
memory of the outcome (look-ahead through the model itself).

A model entry's `knowledge_cutoff` (config.yaml) wins; else the published cutoff of a
well-known model matched by its model string; for the local models, which publish none, their
release date (an upper bound: the data cannot end after the release). Anything else is
unknown, never guessed. The table is documented in docs/models.md (Knowledge cutoff).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

MAY_KNOW, AFTER, UNKNOWN = "may know", "after cutoff", "unknown"
CONFIGURED, PUBLISHED, RELEASE = "configured", "published", "release (upper bound)"


@dataclass(frozen=True)
class Cutoff:
    day: date | None
    basis: str  # CONFIGURED, PUBLISHED, RELEASE, or UNKNOWN when day is None


# (pattern on the model string without its provider prefix, cutoff, basis); the first match
# wins, so the more specific names come first. The providers' model pages give these dates;
# where a provider gives a training-data and a "reliable knowledge" cutoff, the later one is
# used: it is the last day whose events may be in the weights.
KNOWN: tuple[tuple[str, date, str], ...] = (
    (r"gpt-4o-mini", date(2023, 10, 1), PUBLISHED),
    (r"gpt-4o", date(2023, 10, 1), PUBLISHED),
    (r"gpt-4\.1", date(2024, 6, 1), PUBLISHED),
    (r"gpt-4-turbo", date(2023, 12, 1), PUBLISHED),
    (r"gpt-3\.5-turbo", date(2021, 9, 1), PUBLISHED),
    (r"\bo1\b|\bo3-mini\b", date(2023, 10, 1), PUBLISHED),
    (r"claude-3-5-haiku", date(2024, 7, 1), PUBLISHED),
    (r"claude-3-5-sonnet", date(2024, 4, 1), PUBLISHED),
    (r"claude-3-7-sonnet", date(2024, 11, 1), PUBLISHED),
    (r"claude-3-(opus|sonnet|haiku)", date(2023, 8, 1), PUBLISHED),
    (r"llama-?3\.[13]", date(2023, 12, 1), PUBLISHED),
    (r"gemini-2\.0-flash", date(2024, 8, 1), PUBLISHED),
    (r"qwen2\.5", date(2024, 9, 19), RELEASE),
    (r"smollm2", date(2024, 11, 1), RELEASE),
)


def _name(model_string: str) -> str:
    """The model's own name: provider prefix and path dropped ("groq/llama-3.3-70b" ->
    "llama-3.3-70b"), lower-cased."""
    return model_string.rsplit("/", 1)[-1].strip().lower()


def cutoff_for(model_string: str | None, configured: date | None = None) -> Cutoff:
    """The cutoff of a model: the configured one, else the table's, else unknown."""
    if configured is not None:
        return Cutoff(configured, CONFIGURED)
    name = _name(model_string or "")
    for pattern, day, basis in KNOWN:
        if name and re.search(pattern, name):
            return Cutoff(day, basis)
    return Cutoff(None, UNKNOWN)


def look_ahead(as_of: date | None, cutoff: Cutoff) -> str:
    """MAY_KNOW when the question's as-of is before the model's cutoff (what followed the
    as-of may be in its training data), AFTER when it is on or after it, UNKNOWN when
    either date is missing."""
    if as_of is None or cutoff.day is None:
        return UNKNOWN
    return MAY_KNOW if as_of < cutoff.day else AFTER


def model_cutoff(models: Mapping[str, Any], name: str, model_string: str | None = None) -> Cutoff:
    """A run's model: its registry entry (its configured cutoff, else its model string's);
    for a model not in the registry (an imported run), the model string it recorded, else
    its name ("gpt-4o-mini" is enough to know)."""
    entry = models.get(name)
    if entry is not None:
        return cutoff_for(entry.model, entry.knowledge_cutoff)
    found = cutoff_for(model_string)
    return found if found.day is not None else cutoff_for(name)


def mark(as_of: date | None, cutoff: Cutoff) -> dict[str, Any]:
    """What a run's row carries: `look_ahead` (MAY_KNOW / AFTER / UNKNOWN), the question's
    as-of and the cutoff as ISO dates (or None), and the cutoff's basis."""
    return {
        "look_ahead": look_ahead(as_of, cutoff),
        "as_of": as_of.isoformat() if as_of else None,
        "cutoff": cutoff.day.isoformat() if cutoff.day else None,
        "basis": cutoff.basis,
    }


def run_mark(models: Mapping[str, Any], run: dict[str, Any], q: Any = None) -> dict[str, Any]:
    """A run's `mark`: its model's cutoff (`model_cutoff`) against its question's as-of (the
    run's own as-of when the question is gone)."""
    as_of = q.as_of if q is not None and q.as_of else run.get("as_of")
    return mark(as_of, model_cutoff(models, run["model"], run.get("model_string")))


def describe(marked: dict[str, Any], model: str) -> str:
    """A mark as one line for a reader: why the answer may come from memory, or why not."""
    status, as_of, day = marked["look_ahead"], marked["as_of"], marked["cutoff"]
    if status == UNKNOWN:
        missing = "no as-of date" if as_of is None else f"{model}'s knowledge cutoff is unknown"
        return f"look-ahead unknown: {missing}"
    cut = f"{day} ({marked['basis']})"
    if status == MAY_KNOW:
        return f"may know the outcome: as of {as_of}, before {model}'s knowledge cutoff {cut}"
    return f"as of {as_of}, on or after {model}'s knowledge cutoff {cut}"
