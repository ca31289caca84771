"""Company text room: a `quarter_view` as the lines and cells the Company screen and the CLI
print (no Textual here, no queries): the fundamentals table, its provenance column, the marks
for values a check doubted or another source contradicted, and the quarter header."""

from __future__ import annotations

from typing import Any

FLAGGED = "⚑"  # an input of the value failed a data-quality check
CONTESTED = "≠"  # another source gave a different value
MISSING = "∅"  # the period has no value, and the reason is known
COLUMNS = ("Ratio", "Value", "Previous quarter", "Change", "Source", "Filing", "Check")


def _num(v: float | None, fmt: str) -> str:
    return "—" if v is None else format(v, fmt)


def provenance(row: dict[str, Any]) -> str:
    """The filing (or vendor availability) behind one `quarter_view` row, as one line."""
    if row["value"] is None:
        return ""
    if row["accession"]:
        return f"{row['form'] or 'filing'} filed {row['filed']} {row['accession']}"
    if row["estimated"]:
        return f"estimated, available {row['filed']}"
    return f"vendor, filed {row['filed']}"


def check_note(row: dict[str, Any]) -> str:
    """The mark and one-line reason of a row: a gap first (it says why the value is older or
    missing), then failed checks, then other sources that disagreed (`≠` only for those worth
    checking, store/contested.py; lower-ranked close ones as plain detail); "" when clean."""
    if row.get("gap"):
        return f"{MISSING} {row['gap']}"
    if row.get("flags"):
        return f"{FLAGGED} {row['flags'].replace(',', ', ')}"
    if "contested_marked" not in row:  # a row from before the split: every disagreement
        return f"{CONTESTED} {row['contested']}" if row.get("contested") else ""
    if row.get("contested_marked"):
        rest = f"; lower-ranked: {row['contested_lower']}" if row.get("contested_lower") else ""
        return f"{CONTESTED} {row['contested_marked']}{rest}"
    if row.get("contested_lower"):
        return f"lower-ranked: {row['contested_lower']}"  # detail, no mark
    return ""


def _period(r: dict[str, Any]) -> str:
    if r["fiscal_year"] and r["fiscal_period"]:
        return f"FY{r['fiscal_year']} {r['fiscal_period']}"
    return f"period end {r['period_end']}"


def display_rows(view: dict[str, Any]) -> list[tuple[str, ...]]:
    """The fundamentals table as text (`COLUMNS`). A value that belongs to an earlier period
    than the quarter's says which one; a marked value carries its mark after the number."""
    out: list[tuple[str, ...]] = []
    pe = view["quarter"]["period_end"]
    for r in view["rows"]:
        source = r["source"] or "—"
        if r["value"] is not None and r["period_end"] != pe:
            source += f" ({_period(r)})"
        note = check_note(r)
        mark = note[0] if note[:1] in (FLAGGED, CONTESTED, MISSING) else ""
        value = _num(r["value"], ".4f") + (f" {mark}" if mark else "")
        out.append(
            (
                r["label"],
                value,
                _num(r["previous"], ".4f"),
                "other source"
                if r["change"] is None and r["previous"] is not None and r["value"] is not None
                else _num(r["change"], "+.4f"),
                source,
                provenance(r),
                note,
            )
        )
    return out


def quarter_label(view: dict[str, Any]) -> str:
    """ "FY2024 Q4 · period end 2024-09-28 · 10-K filed 2024-11-01 · 4/8" for the header."""
    q = view["quarter"]
    parts = [q["key"], f"period end {q['period_end']}"]
    if q["form"]:
        parts.append(f"{q['form']} filed {q['filed']}")
    elif q.get("filed") and not q.get("estimated"):
        parts.append(f"filed {q['filed']} (vendor data)")
    parts.append(f"{view['index'] + 1}/{view['count']}")
    return " · ".join(parts)
