"""The chunk record shared by the filing track, the market track, the index and the search."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass
class Chunk:
    """One retrievable passage. `embed_text` (metadata prefix + text) is what gets embedded;
    `available_from` is the first day it may be shown (filings: filed; market: its last day)."""

    id: str  # stable: "<accession>:<section_key>:<parent #>:<child #>" or "mkt:<T>:<period>"
    track: str  # "filing" | "market"
    ticker: str
    text: str
    embed_text: str
    parent_id: str
    parent_text: str
    available_from: date
    form: str | None = None  # 10-K / 10-Q; market: "monthly" | "quarterly"
    accession: str | None = None
    filed: date | None = None
    section_key: str | None = None  # e.g. part_i_item_1a
    section: str | None = None  # e.g. "Item 1A. Risk Factors"
    period: str | None = None  # "FY2024 Q4" for filings; "2025-08" / "2025-Q3" for market
    period_end: date | None = None
    start: date | None = None  # market: first trading day covered
    end: date | None = None  # market: last trading day covered
    source_path: str = ""
    char_start: int = 0  # offsets of `text` within `parent_text`
    char_end: int = 0
