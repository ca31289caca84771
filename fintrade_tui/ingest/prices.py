"""Price ingest room: read the three bundle price sources, validate, quarantine, merge.

Sources differ by split and dividend adjustment basis. Each ticker gets one series on its
preferred source's basis; rows a lower-priority source adds after that coverage are rescaled
at the junction and appended. A file whose closes do not keep a constant ratio with a better source
for the same ticker (another ticker's prices, a broken basis) is quarantined, never mixed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fintrade_tui.errors import Quarantined, UserError

COLUMNS = ["open", "high", "low", "close", "adj_close", "volume"]
_RENAME = {
    "Date": "date",
    "Open": "open",
    "High": "high",
    "Low": "low",
    "Close": "close",
    "Adj Close": "adj_close",
    "Adj. Close": "adj_close",
    "Volume": "volume",
}
_TICKER = re.compile(r"^[A-Z0-9.\-]{1,6}$")
JUNCTION_DAYS = 20  # overlap days averaged (median) to set the rescaling factor


@dataclass
class PriceFile:
    source: str
    ticker: str
    path: Path
    frame: pd.DataFrame  # date, open, high, low, close, adj_close, volume; sorted by date


def discover(bundle: Path) -> list[tuple[str, str, Path]]:
    """(source, ticker, path) for every price file in the bundle layout."""
    found: list[tuple[str, str, Path]] = []
    for p in sorted((bundle / "fintradebench" / "prices").glob("*-history.xlsx")):
        found.append(("fintradebench", p.name.removesuffix("-history.xlsx").upper(), p))
    for source in ("prices-2020", "prices-yahoo"):
        for p in sorted((bundle / source).glob("*.csv")):
            if _TICKER.match(p.stem):  # skips VALIDATION.csv and other notes
                found.append((source, p.stem.upper(), p))
    return found


def read_price_file(source: str, ticker: str, path: Path) -> PriceFile:
    """Read and validate one file; any defect is a UserError naming the file and row."""
    try:
        if path.suffix == ".xlsx":
            raw = pd.read_excel(path)
        else:
            raw = pd.read_csv(path, dtype={"Date": str})
    except Exception as exc:  # unreadable file: name it, no traceback
        raise UserError(str(path), f"cannot be read ({type(exc).__name__})", "replace it") from None
    # errors name columns as the file spells them
    names = {v: k for k, v in _RENAME.items() if k != "Adj. Close"}
    names |= {v: k for k, v in _RENAME.items() if k in raw.columns}
    raw = raw.rename(columns=_RENAME)
    missing = [c for c in ["date", *COLUMNS] if c not in raw.columns]
    if missing:
        cols = ", ".join(names[m] for m in missing)
        raise UserError(str(path), f"missing column(s) {cols}", "add them or remove the file")
    df = raw[["date", *COLUMNS]].copy()
    dates = pd.to_datetime(df["date"].astype(str), errors="coerce", format="mixed")
    bad = dates.isna()
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise UserError(
            f"{path} row {i + 2}", f"unparseable date {df['date'].iloc[i]!r}", "use YYYY-MM-DD"
        )
    df["date"] = dates.dt.date
    dup = df["date"].duplicated()
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise UserError(
            f"{path} row {i + 2}", f"duplicated date {df['date'].iloc[i]}", "keep one row per day"
        )
    for col in COLUMNS:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    prices = df[["open", "high", "low", "close", "adj_close"]]
    bad = (prices.isna() | (prices <= 0)).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        row = prices.iloc[i]
        col = next(c for c in prices.columns if not (row[c] > 0))
        raise UserError(
            f"{path} row {i + 2}",
            f"non-positive or missing price {names[col]}={row[col]}",
            "fix or drop that row",
        )
    df = df.sort_values("date", kind="stable").reset_index(drop=True)
    return PriceFile(source, ticker, path, df)


def _ratio(a: pd.DataFrame, b: pd.DataFrame, col: str) -> pd.Series:
    """b[col] / a[col] on the dates both cover, indexed by date."""
    m = a[["date", col]].merge(b[["date", col]], on="date", suffixes=("_a", "_b"))
    return pd.Series((m[f"{col}_b"] / m[f"{col}_a"]).to_numpy(), index=m["date"])


def agreement(a: pd.DataFrame, b: pd.DataFrame, tol: float) -> tuple[float, int]:
    """Share of overlapping days whose close ratio is within `tol` of the median; overlap size."""
    r = _ratio(a, b, "close")
    if r.empty:
        return 0.0, 0
    ok = (r / r.median() - 1).abs() <= tol
    return float(ok.mean()), len(r)


def _returns(pf: PriceFile) -> pd.Series:
    s = pd.Series(np.log(pf.frame["close"].to_numpy()), index=pf.frame["date"])
    return s.diff().dropna()


def _same_series(a: PriceFile, b: PriceFile, tol: float, min_agree: float) -> bool:
    share, n = agreement(a.frame, b.frame, tol)
    return n >= JUNCTION_DAYS and share >= min_agree


def check_sources(
    files: list[PriceFile], priority: list[str], tol: float, min_agree: float
) -> tuple[list[PriceFile], list[Quarantined]]:
    """Keep the files that belong together per ticker; quarantine the others with a reason."""
    rank = {s: i for i, s in enumerate(priority)}
    by_ticker: dict[str, list[PriceFile]] = {}
    for f in files:
        if f.source in rank:
            by_ticker.setdefault(f.ticker, []).append(f)
    kept: list[PriceFile] = []
    bad: list[Quarantined] = []
    for ticker, group in sorted(by_ticker.items()):
        group.sort(key=lambda f: rank[f.source])
        accepted: list[PriceFile] = []
        for f in group:
            if not accepted:
                accepted.append(f)
                continue
            ref = accepted[0]
            share, n = agreement(ref.frame, f.frame, tol)
            if n >= JUNCTION_DAYS and share >= min_agree:
                accepted.append(f)
                continue
            suspect, other = _which_is_wrong(ref, f, files, tol, min_agree)
            why = (
                f"close ratio vs {other.path.name} ({other.source}) constant on only "
                f"{share:.0%} of {n} shared days"
                if n
                else f"no shared days with {other.source} to reconcile the basis"
            )
            owner = _owner(suspect, files, tol, min_agree)
            if owner:
                why = f"holds {owner}'s prices, not {ticker}'s; " + why
            bad.append(Quarantined(str(suspect.path), suspect.source, ticker, why))
            if suspect is ref:
                accepted[0] = f
        kept.extend(accepted)
    return kept, bad


def _which_is_wrong(
    ref: PriceFile, f: PriceFile, files: list[PriceFile], tol: float, min_agree: float
) -> tuple[PriceFile, PriceFile]:
    """Of two disagreeing files, the one holding another ticker's prices; else the lower one."""
    if _owner(ref, files, tol, min_agree) and not _owner(f, files, tol, min_agree):
        return ref, f
    return f, ref


def _owner(pf: PriceFile, files: list[PriceFile], tol: float, min_agree: float) -> str | None:
    """The other ticker whose file (in another source) moves exactly like `pf`, if any."""
    mine = _returns(pf)
    for other in files:
        if other.ticker == pf.ticker or other.source == pf.source:
            continue
        theirs = _returns(other)
        common = mine.index.intersection(theirs.index)
        if len(common) < JUNCTION_DAYS:
            continue
        if np.allclose(mine[common], theirs[common], atol=1e-3) and _same_series(
            pf, other, tol, min_agree
        ):
            return other.ticker
    return None


def merge_series(files: list[PriceFile]) -> pd.DataFrame:
    """One series: the first file's rows, then each next file's rows after the coverage so far,
    rescaled to the first file's basis at the junction (median ratio over the last
    JUNCTION_DAYS shared days). Rows a lower source has before the preferred one starts are
    not used: prepending would shift every EMA seed and warm-up away from the preferred source.
    """
    base = files[0]
    out = base.frame.assign(source=base.source, adj_factor=1.0, close_factor=1.0)
    for f in files[1:]:
        add = f.frame[f.frame["date"] > out["date"].max()].copy()
        if add.empty:
            continue
        # compare with `out` itself: it may already hold rescaled rows of another source
        near = out.merge(f.frame, on="date", suffixes=("", "_o")).sort_values("date")
        near = near.tail(JUNCTION_DAYS)
        adj_f = float((near["adj_close"] / near["adj_close_o"]).median())
        close_f = float((near["close"] / near["close_o"]).median())
        for col in ("open", "high", "low", "close"):
            add[col] = add[col] * close_f
        add["adj_close"] = add["adj_close"] * adj_f
        # split-adjusted volume moves inversely to price; shares stay whole
        add["volume"] = (add["volume"] / close_f).round()
        add = add.assign(source=f.source, adj_factor=adj_f, close_factor=close_f)
        out = pd.concat([out, add], ignore_index=True)
    out = out.sort_values("date", kind="stable").reset_index(drop=True)
    out.insert(0, "ticker", base.ticker)
    return out
