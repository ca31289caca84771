"""Reference ingest room: companies (name, CIK, sector, industry) and index-membership intervals."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import cast

import pandas as pd

from fintrade_tui.errors import UserError


def _read_csv(path: Path, required: list[str]) -> pd.DataFrame:
    """A reference table; a bundle without it (e.g. one written by `pull`) gets an empty one."""
    if not path.is_file():
        return pd.DataFrame(columns=required)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise UserError(str(path), f"missing column(s) {', '.join(missing)}", "restore the file")
    return df


def sec_ciks(ref: Path) -> dict[str, tuple[int, str]]:
    """ticker -> (CIK, SEC title) from SEC's company_tickers.json."""
    path = ref / "company_tickers.json"
    if not path.is_file():
        return {}
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} line {exc.lineno}", "is not valid JSON", "restore it") from None
    return {r["ticker"].upper(): (int(r["cik_str"]), r["title"]) for r in rows.values()}


def sec_filers(bundle: Path) -> pd.DataFrame:
    """Every filer of SEC's company_tickers.json (ticker, CIK, title, rank = SEC's order)."""
    rows = [
        {"ticker": t, "cik": cik, "title": title, "rank": i}
        for i, (t, (cik, title)) in enumerate(sec_ciks(bundle / "reference").items())
    ]
    return pd.DataFrame(rows, columns=["ticker", "cik", "title", "rank"])


def companies(bundle: Path, tickers: set[str]) -> pd.DataFrame:
    """One row per ticker that has prices, filings or reference data."""
    ref = bundle / "reference"
    sectors = _read_csv(ref / "nasdaq100_sectors.csv", ["Ticker", "Company Name", "Sector"])
    sectors = sectors.set_index(sectors["Ticker"].str.upper())
    ciks = sec_ciks(ref)
    historical = _read_csv(ref / "nasdaq100_all_historical_tickers.csv", ["ticker"])
    every = sorted(tickers | set(sectors.index) | set(historical["ticker"].str.upper()))
    rows = []
    for t in every:
        s = sectors.loc[t] if t in sectors.index else None
        cik, title = ciks.get(t, (None, None))
        rows.append(
            {
                "ticker": t,
                "name": (s["Company Name"] if s is not None else None) or title,
                "cik": cik,
                "sector": (s["Sector"] or None) if s is not None else None,
                "industry": (s.get("Industry") or None) if s is not None else None,
                "country": (s.get("Country") or None) if s is not None else None,
            }
        )
    return pd.DataFrame(rows)


def membership(bundle: Path) -> pd.DataFrame:
    """Intervals [start_date, end_date) from the additions/removals log.

    A ticker whose first event is a removal was a member before the log starts (start NULL);
    one with no events at all is taken as a member throughout (NULL, NULL).
    """
    ref = bundle / "reference"
    changes = _read_csv(
        ref / "nasdaq100_component_changes.csv", ["date", "added_ticker", "removed_ticker"]
    )
    historical = _read_csv(ref / "nasdaq100_all_historical_tickers.csv", ["ticker"])
    events: dict[str, list[tuple[date, str]]] = {}
    for i, row in changes.iterrows():
        try:
            d = date.fromisoformat(row["date"].strip())
        except ValueError:
            raise UserError(
                f"{ref / 'nasdaq100_component_changes.csv'} row {cast(int, i) + 2}",
                f"unparseable date {row['date']!r}",
                "use YYYY-MM-DD",
            ) from None
        for col, kind in (("added_ticker", "add"), ("removed_ticker", "remove")):
            t = row[col].strip().upper()
            if t:
                events.setdefault(t, []).append((d, kind))
    rows = []
    for t in sorted(set(events) | set(historical["ticker"].str.upper())):
        start: date | None = None
        open_ = True  # no event yet: assume a member from before the log
        for d, kind in sorted(events.get(t, [])):
            if kind == "add":
                start, open_ = d, True
            elif open_:
                rows.append({"ticker": t, "start_date": start, "end_date": d})
                open_ = False
        if open_:
            rows.append({"ticker": t, "start_date": start, "end_date": None})
    return pd.DataFrame(rows, columns=["ticker", "start_date", "end_date"])
