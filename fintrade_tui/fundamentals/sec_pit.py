"""SEC point-in-time room: the bundle's `fundamentals-sec/<T>.csv` rows, read as they are.

Each row is one fiscal quarter of one company: `period_end`, `available_date` (the filing's date,
so the first day the row may be used) and the quarter's figures. Columns a file lacks are NULL;
empty values stay NULL (a filer that never tagged a value). A file without `period_end` or
`available_date`, or a row whose dates do not parse, is quarantined with the reason, the rest is
kept. What the rows are for -- the fiscal calendar now, the ratios later -- is other rooms' work.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fintrade_tui.errors import Quarantined

SOURCE = "sec_pit"
FOLDER = "fundamentals-sec"
DATES = ("period_end", "available_date")
VALUES = ("net_income", "operating_cf", "total_assets", "equity", "capex", "free_cash_flow")
COLUMNS = ("ticker", *DATES, *VALUES, "file", "line")


def read(bundle: Path) -> tuple[pd.DataFrame, list[Quarantined]]:
    """Every readable row of every file, and what was set aside and why."""
    frames: list[pd.DataFrame] = []
    bad: list[Quarantined] = []
    for path in sorted((bundle / FOLDER).glob("*.csv")):
        frame, why = _read_file(path)
        if why:
            bad.append(Quarantined(str(path), SOURCE, path.stem.upper(), why))
        if frame is not None and len(frame):
            frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS)), bad
    return pd.concat(frames, ignore_index=True), bad


def _read_file(path: Path) -> tuple[pd.DataFrame | None, str]:
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        return None, f"not a readable CSV ({str(exc).splitlines()[0]}): restore the file"
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in DATES if c not in raw.columns]
    if missing:
        return None, f"no {', '.join(missing)} column: add it (YYYY-MM-DD)"
    out = pd.DataFrame({"line": range(2, len(raw) + 2)})
    given = raw["ticker"].str.strip().str.upper() if "ticker" in raw.columns else None
    out["ticker"] = given.where(given != "", path.stem.upper()) if given is not None else path.stem
    out["ticker"] = out["ticker"].str.upper()
    for c in DATES:
        out[c] = pd.to_datetime(raw[c].str.strip(), format="%Y-%m-%d", errors="coerce").dt.date
    for c in VALUES:
        out[c] = pd.to_numeric(raw[c], errors="coerce") if c in raw.columns else None
    out["file"] = str(path)
    broken = out[list(DATES)].isna().any(axis=1)
    why = ""
    if broken.any():
        lines = out.loc[broken, "line"].tolist()
        shown = ", ".join(map(str, lines[:5])) + (" ..." if len(lines) > 5 else "")
        why = f"{len(lines)} row(s) with a missing or bad date (line {shown}): use YYYY-MM-DD"
    return out.loc[~broken, list(COLUMNS)], why
