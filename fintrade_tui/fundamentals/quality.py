"""Data-quality room: checks on the vendor series (`sec_pit` rows, polygon rows) that name the
rows they hit and why, and change nothing. Each finding is one row of `FINDING_COLUMNS`; a
finding about a `sec_pit` row points at its CSV `file` and `line`. The checks (`CHECKS`):
- `stale_carry_forward` (sec_pit `equity`, `total_assets`): within a ticker ordered by
  `period_end`, a run of >= `STALE_MIN_RUN` consecutive quarters with the exact same non-null
  value while net income or the other stock item takes >= 2 different values over the run;
  every row of the run but the first (the genuine value of its own period) is flagged.
- `scale_error`: a value whose ratio to another is within `SCALE_TOLERANCE` of 1e3 or 1e6
  (either direction) against BOTH its neighbours (previous and next reported quarter of the same
  ticker and item; sec_pit net income, total assets and equity, polygon quarterly net income
  and revenue), or a sec_pit quarter's net income against polygon's for the same quarter.
- `sign_flip`: sec_pit and polygon net income of the same quarter are both non-zero, of opposite
  signs, and their sizes within `SIGN_TOLERANCE` of the larger.
- `flow_sum` (sec_pit `net_income`, `operating_cf`): the four consecutive quarters of a fiscal
  year (the one ending within `YEAR_END_DAYS` of the annual period end and the three before it,
  each `QUARTER_GAP_DAYS` apart, all after annual end - `YEAR_SPAN_DAYS`) do not add up to the
  annual value within `FLOW_TOLERANCE` of |annual|; the annual value is the filings' (`annual`)
  or, for a year-end they lack, polygon's FY net income. One finding, on the fourth quarter.
- `available_date` (sec_pit rows): available before the period ended, or more than `LATE_DAYS`
  after it (a later filing's comparative, not the original report).
A polygon row belongs to the sec_pit row of the same ticker whose `available_date` is its
`filing_date`; when several share that date, the one with the latest period end (the filing's
own quarter; the earlier ones are the comparatives it restates, which polygon does not carry).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

FINDING_COLUMNS = (
    "check",
    "ticker",
    "source",
    "item",
    "period_end",
    "available_date",
    "value",
    "other_source",
    "other_value",
    "reason",
    "file",
    "line",
)
CHECKS = ("stale_carry_forward", "scale_error", "sign_flip", "flow_sum", "available_date")
SEC, POLYGON, FILINGS = "sec_pit", "polygon", "filings"

STALE_ITEMS = {"equity": "total_assets", "total_assets": "equity"}  # item -> the other stock
STALE_MIN_RUN = 4  # a year of one unchanged balance is not a coincidence; 3 quarters may be
STALE_MIN_MOVES = 2  # the company's other figures took >= 2 values: it did report each quarter
SCALE_FACTORS = (1e3, 1e6)  # thousands vs units, millions vs units: the usual unit slips
SCALE_TOLERANCE = 0.15  # the true value also moves between quarters, so only roughly x1000
SCALE_SEC_ITEMS = ("net_income", "total_assets", "equity")
SCALE_POLYGON_ITEMS = ("net_income", "revenue")
SIGN_TOLERANCE = 0.10  # same size, other sign: a sign convention slip, not a different number
FLOW_ITEMS = ("net_income", "operating_cf")
FLOW_TOLERANCE = 0.02  # rounding of four reported quarters stays far below 2 % of the year
YEAR_END_DAYS = 20  # a 52/53-week fiscal year ends within days of the nominal year end
YEAR_SPAN_DAYS = 380  # four quarters of a 53-week year end less than 380 days before year end
QUARTER_GAP_DAYS = (80, 115)  # 12- to 16-week fiscal quarters; more means a missing quarter
LATE_DAYS = 150  # original 10-Qs are due within 45 days, 10-Ks within 90; 150 leaves slack
_VALUES = ("net_income", "operating_cf", "total_assets", "equity")  # checked sec_pit items
_ITEM_NAMES = {"net_income": "net income", "operating_cf": "operating cash flow"}
_ITEM_NAMES |= {"total_assets": "total assets", "equity": "equity", "revenue": "revenue"}


def run_checks(sec: pd.DataFrame, polygon: pd.DataFrame, annual: pd.DataFrame) -> pd.DataFrame:
    """Every finding of every check in `CHECKS`, one row per (check, row hit, item)."""
    if sec is None or sec.empty:  # every check compares a sec_pit series with something
        return pd.DataFrame(columns=list(FINDING_COLUMNS))
    s = _sec(sec)
    quarters, years = _polygon(polygon, s)
    parts = [
        _stale(s),
        _scale_neighbours(s, SEC, SCALE_SEC_ITEMS),
        _scale_neighbours(quarters, POLYGON, SCALE_POLYGON_ITEMS),
        _scale_sources(quarters),
        _sign_flip(quarters),
        _flow_sum(s, annual, years),
        _available_date(s),
    ]
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=list(FINDING_COLUMNS))
    out = pd.concat(parts, ignore_index=True)
    order = out["check"].map({c: i for i, c in enumerate(CHECKS)})
    out = out.assign(_o=order).sort_values(["_o", "ticker", "period_end", "item"], kind="stable")
    out = out.drop(columns="_o").reset_index(drop=True)[list(FINDING_COLUMNS)]
    for c in ("value", "other_value"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    for c, kind in (("line", int), ("file", str)):  # None, not NaN, where no sec_pit row
        out[c] = pd.Series([None if pd.isna(x) else kind(x) for x in out[c]], dtype=object)
    return out


# ------------------------------------------------------------------------------- inputs


def _sec(sec: pd.DataFrame) -> pd.DataFrame:
    cols = ("ticker", "period_end", "available_date", "file", "line")
    s = sec.reindex(columns=[*cols, *_VALUES]).copy()
    for c in _VALUES:
        s[c] = pd.to_numeric(s[c], errors="coerce").astype(float)
    s["pe"] = pd.to_datetime(s["period_end"])
    s["ad"] = pd.to_datetime(s["available_date"])
    return s.sort_values(["ticker", "pe"], kind="stable").reset_index(drop=True)


def _polygon(polygon: pd.DataFrame, s: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Polygon quarter rows (Qn) and FY rows, each with its sec_pit row's columns when matched."""
    cols = ("ticker", "period", "filing_date", "revenue", "net_income")
    p = polygon.reindex(columns=list(cols)).copy()
    for c in ("revenue", "net_income"):
        p[c] = pd.to_numeric(p[c], errors="coerce").astype(float)
    parts = p["period"].astype("string").str.extract(r"^\s*(Q[1-4]|FY)\s+(\d{4})\s*$")
    p["kind"], p["year"] = parts[0], pd.to_numeric(parts[1])
    p = p[p["kind"].notna()].copy()
    p["fd"] = pd.to_datetime(p["filing_date"])
    own = s[s["pe"] < s["ad"]].sort_values("pe").drop_duplicates(["ticker", "ad"], keep="last")
    own = own[["ticker", "ad", "period_end", "pe", "file", "line", "net_income"]]
    m = p.merge(own.rename(columns={"ad": "fd", "net_income": "sec_net_income"}), how="left")
    m["available_date"] = m["filing_date"]
    m = m.sort_values(["ticker", "year", "kind", "fd"], kind="stable").reset_index(drop=True)
    return m[m["kind"] != "FY"].reset_index(drop=True), m[m["kind"] == "FY"].reset_index(drop=True)


def _findings(
    check: str, rows: pd.DataFrame, source: str, item: str | pd.Series, **cols: Any
) -> pd.DataFrame:
    """Finding rows for `rows` (period_end, available_date, file, line taken from them)."""
    n = len(rows)
    out = pd.DataFrame(
        {
            "check": [check] * n,
            "ticker": rows["ticker"].to_numpy(),
            "source": [source] * n,
            "item": item.to_numpy() if isinstance(item, pd.Series) else [item] * n,
            "period_end": rows["period_end"].to_numpy(),
            "available_date": rows["available_date"].to_numpy(),
        }
    )
    for c in ("value", "other_source", "other_value", "reason"):
        v = cols.get(c)
        out[c] = v.to_numpy() if isinstance(v, pd.Series) else (list(v) if v is not None else None)
    sec_row = source == SEC and "file" in rows
    out["file"] = rows["file"].to_numpy() if sec_row else None
    out["line"] = rows["line"].astype("Int64").to_numpy() if sec_row else None
    out["period_end"] = [None if pd.isna(d) else d for d in out["period_end"]]
    return out


def _n(v: float) -> str:
    if pd.isna(v):
        return "empty"
    return f"{v:,.0f}" if abs(v) >= 1000 or v == int(v) else f"{v:,.4g}"


# ------------------------------------------------------------------------------- checks


def _stale(s: pd.DataFrame) -> pd.DataFrame:
    out = []
    for item, other in STALE_ITEMS.items():
        v, t = s[item], s["ticker"]
        new = t.ne(t.shift()) | v.ne(v.shift()) | v.isna()
        g = s.groupby(new.cumsum(), sort=False)
        size = g[item].transform("size")
        ni_moves = g["net_income"].transform("nunique")
        other_moves = g[other].transform("nunique")
        moved = (ni_moves >= STALE_MIN_MOVES) | (other_moves >= STALE_MIN_MOVES)
        hit = ~new & (size >= STALE_MIN_RUN) & moved
        if not hit.any():
            continue
        first, last = g["period_end"].transform("first"), g["period_end"].transform("last")
        rows = s[hit]
        what = np.where(ni_moves[hit] >= STALE_MIN_MOVES, "net income", _ITEM_NAMES[other])
        reason = [
            f"{_ITEM_NAMES[item]} {_n(x)} unchanged for {k} quarters ({a} .. {b}) while {w} moved"
            for x, k, a, b, w in zip(
                rows[item], size[hit], first[hit], last[hit], what, strict=True
            )
        ]
        out.append(
            _findings("stale_carry_forward", rows, SEC, item, value=rows[item], reason=reason)
        )
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _factor(ratio: pd.Series) -> pd.Series:
    """+f when the ratio is within SCALE_TOLERANCE of f, -f when of 1/f; NaN otherwise."""
    r = ratio.abs().replace([np.inf, 0.0], np.nan)
    out = pd.Series(np.nan, index=ratio.index)
    for f in SCALE_FACTORS:
        out = out.mask((r / f - 1).abs() <= SCALE_TOLERANCE, f)
        out = out.mask((1 / (r * f) - 1).abs() <= SCALE_TOLERANCE, -f)
    return out


def _times(f: float) -> str:
    return f"{abs(f):,.0f} times" + (" larger" if f > 0 else " smaller")


def _scale_neighbours(frame: pd.DataFrame, source: str, items: tuple[str, ...]) -> pd.DataFrame:
    out = []
    for item in items:
        rows = frame[frame[item].notna() & frame[item].ne(0)]
        by = rows.groupby("ticker", sort=False)[item]
        prev, nxt = by.shift(1), by.shift(-1)
        fp, fn = _factor(rows[item] / prev), _factor(rows[item] / nxt)
        hit = fp.notna() & fp.eq(fn)
        if not hit.any():
            continue
        h = rows[hit]
        reason = [
            f"{_ITEM_NAMES[item]} {_n(x)} is about {_times(f)} than both neighbouring quarters "
            f"({_n(a)} before, {_n(b)} after)"
            for x, f, a, b in zip(h[item], fp[hit], prev[hit], nxt[hit], strict=True)
        ]
        out.append(_findings("scale_error", h, source, item, value=h[item], reason=reason))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _pairs(q: pd.DataFrame) -> pd.DataFrame:
    """Polygon quarters matched to a sec_pit row, both net incomes present and non-zero."""
    q = q[q["line"].notna() & q["net_income"].notna() & q["sec_net_income"].notna()]
    return q[q["net_income"].ne(0) & q["sec_net_income"].ne(0)]


def _scale_sources(q: pd.DataFrame) -> pd.DataFrame:
    pairs = _pairs(q)
    f = _factor(pairs["sec_net_income"] / pairs["net_income"])
    h, f = pairs[f.notna()], f[f.notna()]
    reason = [
        f"net income {_n(a)} is about {_times(k)} than polygon's {_n(b)} for {p} (filed {fd})"
        for a, k, b, p, fd in zip(
            h["sec_net_income"], f, h["net_income"], h["period"], h["filing_date"], strict=True
        )
    ]
    return _against_polygon("scale_error", h, reason)


def _sign_flip(q: pd.DataFrame) -> pd.DataFrame:
    pairs = _pairs(q)
    a, b = pairs["sec_net_income"], pairs["net_income"]
    big = np.maximum(a.abs(), b.abs())
    h = pairs[(np.sign(a) != np.sign(b)) & ((a.abs() - b.abs()).abs() <= SIGN_TOLERANCE * big)]
    reason = [
        f"net income {_n(x)} but polygon has {_n(y)} for {p} (filed {fd}): same size, other sign"
        for x, y, p, fd in zip(
            h["sec_net_income"], h["net_income"], h["period"], h["filing_date"], strict=True
        )
    ]
    return _against_polygon("sign_flip", h, reason)


def _against_polygon(check: str, h: pd.DataFrame, reason: list[str]) -> pd.DataFrame:
    """Findings on sec_pit net income rows, each against polygon's value for the quarter."""
    return _findings(
        check,
        h,
        SEC,
        "net_income",
        value=h["sec_net_income"],
        other_source=[POLYGON] * len(h),
        other_value=h["net_income"],
        reason=reason,
    )


def _year_of_quarters(s: pd.DataFrame, item: str) -> pd.DataFrame:
    """Per sec_pit row: the sum of it and the three quarters before it, and whether they chain."""
    g = s.groupby("ticker", sort=False)
    pes = [s["pe"], *(g["pe"].shift(k) for k in (1, 2, 3))]
    vals = [s[item], *(g[item].shift(k) for k in (1, 2, 3))]
    lo, hi = QUARTER_GAP_DAYS
    chained = pd.Series(True, index=s.index)
    for later, earlier in zip(pes, pes[1:], strict=False):
        gap = (later - earlier).dt.days
        chained &= gap.between(lo, hi)
    total = sum(vals[1:], vals[0])  # NaN when any quarter lacks the value
    return pd.DataFrame({"q_sum": total, "first_pe": pes[3], "chained": chained})


def _annual_targets(annual: pd.DataFrame, years: pd.DataFrame) -> pd.DataFrame:
    cols = ["ticker", "period_end", "item", "value", "source"]
    a = annual.reindex(columns=cols).copy()
    a["source"] = a["source"].fillna(FILINGS)
    a["ticker"] = a["ticker"].astype("string").str.upper()  # filings folders: Goog, Meta
    a = a[a["item"].isin(FLOW_ITEMS) & pd.to_numeric(a["value"], errors="coerce").notna()]
    fy = years[years["net_income"].notna() & years["line"].notna()]
    fy = pd.DataFrame(
        {
            "ticker": fy["ticker"],
            "period_end": fy["period_end"],
            "item": "net_income",
            "value": fy["net_income"],
            "source": POLYGON,
        }
    )
    if len(a) and len(fy):  # polygon only for a year-end the filings do not give
        near = fy.reset_index().merge(a[["ticker", "period_end", "item"]], on=["ticker", "item"])
        days = (pd.to_datetime(near["period_end_x"]) - pd.to_datetime(near["period_end_y"])).dt.days
        fy = fy.drop(index=near.loc[days.abs() <= YEAR_END_DAYS, "index"].unique().tolist())
    t = pd.concat([x for x in (a, fy) if len(x)], ignore_index=True) if len(a) + len(fy) else a
    t = t.drop_duplicates(["ticker", "period_end", "item", "source"])
    return t.assign(value=t["value"].astype(float), end=pd.to_datetime(t["period_end"]))


def _flow_sum(s: pd.DataFrame, annual: pd.DataFrame, years: pd.DataFrame) -> pd.DataFrame:
    targets = _annual_targets(annual, years)
    out = []
    for item in FLOW_ITEMS:
        t = targets[targets["item"] == item].drop(columns="period_end")
        if t.empty or s.empty:
            continue
        quarters = pd.concat([s, _year_of_quarters(s, item)], axis=1)
        m = t.reset_index().merge(quarters, on="ticker")
        m["off"] = (m["pe"] - m["end"]).dt.days.abs()
        m = m[m["off"] <= YEAR_END_DAYS].sort_values(["index", "off"], kind="stable")
        m = m.drop_duplicates("index")  # the quarter ending nearest the year end
        span = m["first_pe"] > m["end"] - pd.Timedelta(days=YEAR_SPAN_DAYS)
        m = m[m["chained"] & span & m["q_sum"].notna()]
        h = m[(m["q_sum"] - m["value"]).abs() > FLOW_TOLERANCE * m["value"].abs()]
        reason = [
            f"{_ITEM_NAMES[item]} of the four quarters {a.date()} .. {b.date()} sums to {_n(x)}, "
            f"the year's {_n(y)} ({src}); off by {_n(x - y)}"
            for a, b, x, y, src in zip(
                h["first_pe"], h["pe"], h["q_sum"], h["value"], h["source"], strict=True
            )
        ]
        out.append(
            _findings(
                "flow_sum",
                h,
                SEC,
                item,
                value=h["q_sum"],
                other_source=h["source"],
                other_value=h["value"],
                reason=reason,
            )
        )
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


def _available_date(s: pd.DataFrame) -> pd.DataFrame:
    lag = (s["ad"] - s["pe"]).dt.days
    h = s[(lag < 0) | (lag > LATE_DAYS)]
    lag = lag[h.index]
    reason = [
        f"available {-k} days before the period ended ({a} < {p})"
        if k < 0
        else f"available {k} days after the period end ({p} -> {a}): a later filing's "
        "comparative, not the original report"
        for k, a, p in zip(lag, h["available_date"], h["period_end"], strict=True)
    ]
    return _findings(
        "available_date", h, SEC, "available_date", value=lag.astype(float), reason=reason
    )
