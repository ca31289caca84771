"""Long-context room: whole filing sections, no retrieval, as many as the evidence budget holds.

The question's tickers' filings filed on or before `as_of` (retrieval.indexing.eligible, the
same point-in-time choice RAG indexes from) are taken newest first; within a filing, its
sections in the filing's order (the store's `filing_sections`). A section goes in whole or not
at all: one that does not fit in what is left of the budget is left out and the walk goes on,
so a smaller later section can still fill the space. A note says what was left out.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import duckdb

from fintrade_tui.retrieval.stored_text import stored_sections
from fintrade_tui.runs.indicator_rag import some_names
from fintrade_tui.workspace.evidence import EvidenceItem, item_tokens


def eligible_filings(
    con: duckdb.DuckDBPyConnection, tickers: list[str], as_of: date
) -> list[dict[str, Any]]:
    """Every filing of `tickers` filed on or before `as_of`, newest first (ties: ticker order,
    then accession), with its form and dates."""
    from fintrade_tui.retrieval.indexing import eligible_all  # lazy: pulls in the index room

    order = {t: i for i, t in enumerate(tickers)}
    accessions = eligible_all(con, tickers, as_of)
    if not accessions:
        return []
    cur = con.execute(
        "SELECT accession, ticker, form, filed, period_end FROM filings"
        " WHERE list_contains(?, accession)",
        [accessions],
    )
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    rows.sort(key=lambda r: (-r["filed"].toordinal(), order.get(r["ticker"], 0), r["accession"]))
    return rows


def section_item(f: dict[str, Any], key: str, title: str, text: str) -> EvidenceItem:
    """One whole section as an evidence item, dated by its filing like a RAG filing passage."""
    meta = {
        "form": f["form"],
        "section": title,
        "section_key": key,
        "accession": f["accession"],
        "period_end": f["period_end"],
    }
    head = f"{f['ticker']} {f['form']} filed {f['filed']} · {title}"
    return EvidenceItem(
        f"section:{f['accession']}:{key}", "section", text, head, f["ticker"], f["filed"], meta
    )


def long_context_items(
    con: duckdb.DuckDBPyConnection,
    tickers: list[str],
    as_of: date,
    budget_tokens: int,
    notes: list[str],
) -> list[EvidenceItem]:
    """Whole sections of the eligible filings, newest filing first, that fit `budget_tokens`
    (as the prompt counts an item); what was left out goes into `notes`."""
    tickers = list(dict.fromkeys(tickers))
    filings = eligible_filings(con, tickers, as_of)
    without = [t for t in tickers if t not in {f["ticker"] for f in filings}]
    if without:
        notes.append(f"no filing filed on or before {as_of}: {some_names(without)}")
    items: list[EvidenceItem] = []
    left: list[str] = []
    used = total = 0
    for f in filings:
        for key, title, text in stored_sections(con, f["accession"]):
            if not (text or "").strip():
                continue
            total += 1
            item = section_item(f, key, title, text)
            cost = item_tokens(item)
            if used + cost <= budget_tokens:
                items.append(item)
                used += cost
            else:
                left.append(f"{f['ticker']} {f['form']} {f['filed']} {key}")
    if filings and not total:
        notes.append(f"the {len(filings)} eligible filings have no parsed sections in the store")
    if left:
        notes.append(
            f"long context: {len(items)} of {total} whole sections fit the {budget_tokens}-token"
            f" budget ({used} used); left out, each whole: {some_names(left, 12)}"
        )
    return items
