"""Evidence record shared by the condition builders, the prompts, the run records and the UI.

Every item carries the first day it could have been known (`available_from`), so a test can
check that no condition ever shows a model anything dated after the question's `as_of`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any


def approx_tokens(text: str) -> int:
    """Word pieces, approximately: words and punctuation marks (BERT-style tokenizers split
    about this finely on English prose; numbers split further)."""
    import re

    return len(re.findall(r"\w+|[^\w\s]", text))


CONDITIONS = (
    "no_rag",
    "rag",
    "indicator_rag",
    "tool_use",
    "oracle",
    "long_context",
    "forecast_summary",
)
LABELS = {
    "no_rag": "No-RAG",
    "rag": "RAG",
    "indicator_rag": "Indicator-RAG",
    "tool_use": "Tool-Use",
    "oracle": "Oracle",
    "long_context": "Long-context",
    "forecast_summary": "Forecast-summary",
    # conditions of imported runs (not run here): a benchmark's own answer
    "reference": "Reference",
    "unspecified": "(no condition)",
}


@dataclass
class EvidenceItem:
    """One piece of evidence as shown to the model, with where it came from."""

    id: str  # stable: a chunk id, "store:AAPL:roa:2024-09-28", "tool:1:get_signal"...
    # filing | market | fundamental | signal | price | oracle | tool | context | section | forecast
    track: str
    text: str  # exactly what the prompt shows (data, never instructions)
    title: str = ""  # one line for the evidence panel: "AAPL 10-K filed 2024-11-01, Item 7"
    ticker: str | None = None
    available_from: date | None = None  # first day this could be known (<= as_of)
    meta: dict[str, Any] = field(default_factory=dict)  # scores, accession, parent text...

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# what the prompt adds around an item's title and text: "[E12] " and " (available from
# 2024-11-01)" (runs.prompts renders them); builders that fill a budget count it too
ITEM_OVERHEAD = 16


def item_tokens(item: EvidenceItem) -> int:
    """Approximate tokens of `item` as the prompt renders it (title, date, label, text)."""
    return approx_tokens(item.title) + approx_tokens(item.text) + ITEM_OVERHEAD


@dataclass
class Evidence:
    """What one condition gives the model for one question."""

    condition: str
    items: list[EvidenceItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "no index for TSLA: market track only"
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # name, arguments, result

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.items]
