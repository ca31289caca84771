"""Imported-run record room: the one shape every reader of another tool's log produces.

A reader yields `ExternalRun`s; the loader (imports/load.py) maps conditions, hashes the
content, creates the questions the file brings and writes runs and scores in one transaction.
Readers never touch the workspace, so a reader is a pure function of its file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# labels every reader maps its tool's verdicts onto; any other label is kept verbatim
CORRECT, PARTIAL, INCORRECT, REFUSAL = "correct", "partial", "incorrect", "refusal"
LABELS = (CORRECT, PARTIAL, INCORRECT, REFUSAL)


@dataclass
class Judgment:
    """A verdict the file carries for one run: a scorer's, an assertion's or a person's.

    Becomes one score row (kind `human` unless the file says otherwise) whose annotator names
    the tool and the scorer, e.g. `inspect:match`, `promptfoo:human`, `lm-eval:exact_match`.
    """

    annotator: str
    label: str | None = None  # correct | partial | incorrect | refusal | a free label
    scores: dict[str, int] = field(default_factory=dict)  # accuracy/completeness/... 1-5
    value: Any = None  # the tool's own value, verbatim (1.0, "C", true, 0.73 ...)
    note: str | None = None  # explanation / reason
    kind: str = "human"  # human | llm | panel (our own exports carry their judge scores)
    created_at: datetime | None = None
    detail: dict[str, Any] = field(default_factory=dict)  # anything else the scorer gave


@dataclass
class ExternalRun:
    """One answer produced elsewhere, as the file gives it."""

    question_id: str
    model: str
    answer: str
    locator: str  # where in the file: "line 12", "sample 3 epoch 1", "result 5"
    question: str | None = None  # the question's text (creates it when the id is unknown)
    condition_label: str | None = None  # verbatim; the loader maps it to ours
    variant: str | None = None  # e.g. shared vs per-document store, context first or last
    reference_answer: str | None = None
    evidence: list[dict[str, Any]] = field(default_factory=list)  # {text, source, page}
    prompt: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    cost: float | None = None
    started_at: datetime | None = None
    status: str = "completed"  # completed | error
    error: str | None = None
    judgments: list[Judgment] = field(default_factory=list)
    company: str | None = None
    ticker: str | None = None
    as_of: str | None = None  # YYYY-MM-DD as the file gives it; the loader parses it
    category: str | None = None
    benchmark: str | None = None  # task / benchmark name: the source of created questions
    run_id: str | None = None  # our own exports carry the id, so a round trip keeps it
    attempt: int | None = None  # the tool's repeat of the same sample (inspect's epoch)
    extra: dict[str, Any] = field(default_factory=dict)  # everything else, kept
