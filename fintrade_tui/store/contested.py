"""Contested-mark room: when a shown fundamental gets the `≠` mark. Ingest notes, per value,
every other source that disagreed with it or with its inputs ("fintradebench_precomputed
0.2131; net_income: sec_pit 1,234"). A mark says "check this", so it is kept for a
disagreement worth checking:

- a source ranked at least as trustworthy as the shown value's (the ranks `ingest` prints and
  stores in `source_rank`: the filings, then the vendors by how often they agree with them), or
- any source that differs by more than `MARK_REL_DIFF` relative to the larger value (an order
  of magnitude, a sign, a scale slip), however it is ranked.

A disagreement of a lower-ranked source alone stays in the value's detail (the Check column
says "lower-ranked: ...", without the mark) and in `fintrade-tui fundamentals TICKER`.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb

MARK_REL_DIFF = 0.5  # a lower-ranked source that far off still earns the mark
_ENTRY = re.compile(r"^(?:(?P<item>[a-z_]+): )?(?P<source>\S+) (?P<value>[-+0-9.,eE]+)$")


def source_ranks(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """source -> rank (0 = most trusted) as ingest measured them; the default order for a store
    built before ranks were stored."""
    from fintrade_tui.store.queries import SOURCE_RANK

    try:
        return dict(con.execute("SELECT source, rank FROM source_rank").fetchall()) or SOURCE_RANK
    except duckdb.CatalogException:
        return dict(SOURCE_RANK)


def entries(note: str | None) -> list[dict[str, Any]]:
    """The note's disagreements: source, value (float or None), item (an input's name for an
    input-level disagreement, else None), text (the entry as written)."""
    out: list[dict[str, Any]] = []
    for part in (note or "").split("; "):
        m = _ENTRY.match(part.strip())
        if not m:
            if part.strip():
                out.append({"source": None, "value": None, "item": None, "text": part.strip()})
            continue
        try:
            value = float(m["value"].replace(",", ""))
        except ValueError:
            value = None
        out.append({"source": m["source"], "value": value, "item": m["item"], "text": part})
    return out


def worth_marking(e: dict[str, Any], shown: float | None, mine: int, ranks: dict[str, int]) -> bool:
    """One disagreement against the shown value (of a source ranked `mine`)."""
    if e["source"] is None or ranks.get(e["source"], 99) <= mine:
        return True  # unparsed (never hide what we cannot read) or at least as trusted
    if e["item"] is None and shown is not None and e["value"] is not None:
        scale = max(abs(shown), abs(e["value"]))
        return bool(scale > 0 and abs(shown - e["value"]) / scale > MARK_REL_DIFF)
    return False


def split(row: dict[str, Any], ranks: dict[str, int]) -> tuple[str | None, str | None]:
    """(marked, quiet): the parts of a row's `contested` note that earn the mark, and those
    that stay in its detail only; None where there are none."""
    found = entries(row.get("contested"))
    if not found:
        return None, None
    mine = ranks.get(row.get("source") or "", 99)
    loud = [e["text"] for e in found if worth_marking(e, row.get("value"), mine, ranks)]
    quiet = [e["text"] for e in found if e["text"] not in loud]
    return ("; ".join(loud) or None), ("; ".join(quiet) or None)
