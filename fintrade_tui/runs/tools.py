"""Tool room: read-only, point-in-time tools for the Tool-Use condition.

`TOOL_SPECS` are OpenAI function-calling schemas; `call_tool` runs one call against the store
as visible after the close of `as_of` (later dates are clamped, never honoured) and always
returns a small JSON-serialisable dict, an `{"error": ...}` one for bad input. Models without
native tool calling get their calls from the deterministic router (runs/router.py).
"""

from __future__ import annotations

import json
import math
import re
from datetime import date, timedelta
from typing import Any

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.fundamentals.concepts import RATIOS
from fintrade_tui.questions.companies import index_members
from fintrade_tui.questions.indicators import KIND, LABEL, SYNONYMS, canonical
from fintrade_tui.signals.compute import SIGNALS
from fintrade_tui.store.queries import best_many, check_ticker, fundamentals_as_of
from fintrade_tui.workspace.evidence import EvidenceItem

MAX_WINDOW_ROWS = 60
MAX_CALLS = 12
SCREEN_TOP = 10
SCREEN_TOP_MAX = 25
STALE_DAYS = 7  # as in questions.resolve: an older close does not describe `as_of`
DEFAULT_NAMES = ["momentum_20d", "rsi_14", "roe", "earnings_price"]
_TICKER = re.compile(r"^[A-Za-z0-9.\-]{1,10}$")


def long_label(name: str) -> str:
    """ "ROA (Return on Assets)" — the abbreviation and the spelled-out name when both exist."""
    names = SYNONYMS.get(name, [name])
    if len(names) > 1 and len(names[1]) > len(names[0]) and names[0].isupper():
        return f"{names[0]} ({names[1]})"
    return LABEL.get(name, name)


def _enum_text(names: list[str]) -> str:
    return "; ".join(f"{n} = {long_label(n)}" for n in names)


_DATE = {"type": "string", "description": "ISO date YYYY-MM-DD; omitted = the question's as-of"}
_TICKER_ARG = {"type": "string", "description": "ticker symbol, e.g. AAPL"}


def _fn(name: str, description: str, props: dict, required: list[str]) -> dict[str, Any]:
    params = {"type": "object", "properties": props, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": params},
    }


TOOL_SPECS: list[dict[str, Any]] = [
    _fn(
        "get_signal",
        "A trading signal of one stock on the last trading day on or before `date` (adjusted "
        "close basis). Signals: " + _enum_text(SIGNALS),
        {"ticker": _TICKER_ARG, "name": {"type": "string", "enum": list(SIGNALS)}, "date": _DATE},
        ["ticker", "name"],
    ),
    _fn(
        "get_fundamental",
        "The latest value of a fundamental ratio of one stock filed on or before `date`, with "
        "its fiscal period and filing. Ratios: "
        + "; ".join(f"{k}: {v}" for k, v in RATIOS.items()),
        {"ticker": _TICKER_ARG, "name": {"type": "string", "enum": list(RATIOS)}, "date": _DATE},
        ["ticker", "name"],
    ),
    _fn(
        "get_price_window",
        "Daily close, adjusted close and volume of one stock between two dates; at most "
        f"{MAX_WINDOW_ROWS} rows (longer windows are evenly downsampled, first and last day kept).",
        {
            "ticker": _TICKER_ARG,
            "start": {"type": "string", "description": "ISO date YYYY-MM-DD"},
            "end": _DATE,
        },
        ["ticker", "start", "end"],
    ),
    _fn(
        "screen",
        "Rank the NASDAQ-100 members on `date` by one indicator (a signal on the last close on "
        "or before `date`, or the latest ratio filed by then); optionally one sector or "
        "industry only. Indicators: " + _enum_text([*SIGNALS, *RATIOS]),
        {
            "date": _DATE,
            "indicator": {"type": "string", "enum": [*SIGNALS, *RATIOS]},
            "top": {
                "type": "integer",
                "description": f"rows to return (default {SCREEN_TOP}, at most {SCREEN_TOP_MAX})",
            },
            "ascending": {
                "type": "boolean",
                "description": "true = lowest values first (default false: highest first)",
            },
            "sector": {"type": "string", "description": "e.g. Technology"},
            "industry": {"type": "string", "description": "e.g. Semiconductor"},
        },
        ["indicator"],
    ),
]
_PARAMS = {
    s["function"]["name"]: set(s["function"]["parameters"]["properties"]) for s in TOOL_SPECS
}


class _Bad(Exception):
    """A bad argument: becomes {"error": ...}."""


def _json_value(v: Any) -> Any:
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    """ISO dates, no NaN, and no None fields (results stay small)."""
    return {k: _json_value(v) for k, v in d.items() if v is not None}


def _date_arg(args: dict, key: str, as_of: date, flags: dict) -> date:
    raw = args.get(key)
    if raw in (None, ""):
        return as_of
    if isinstance(raw, date):
        d = raw
    else:
        try:
            d = date.fromisoformat(str(raw).strip()[:10])
        except ValueError:
            raise _Bad(f"{key} {raw!r} is not an ISO date (YYYY-MM-DD)") from None
    if d > as_of:  # the point-in-time rule: nothing after the question's as-of
        flags |= {"clamped_to_as_of": True, "as_of": as_of}
        return as_of
    return d


def _ticker_arg(con: duckdb.DuckDBPyConnection, args: dict) -> str:
    t = args.get("ticker")
    if not isinstance(t, str) or not _TICKER.match(t.strip()):
        raise _Bad(f"ticker {t!r} is not a ticker symbol (e.g. AAPL)")
    try:
        return check_ticker(con, t)
    except UserError as e:
        raise _Bad(str(e)) from None


def _name_arg(args: dict, key: str, kind: str | None) -> str:
    raw = args.get(key)
    name = canonical(str(raw)) if raw is not None else None
    if name is None or (kind and KIND.get(name) != kind) or name not in KIND:
        allowed = (
            SIGNALS if kind == "signal" else RATIOS if kind == "ratio" else [*SIGNALS, *RATIOS]
        )
        raise _Bad(f"{key} {raw!r} is not one of: {', '.join(allowed)}")
    return name


def _last_close(con, ticker: str, day: date) -> tuple | None:
    return con.execute(
        "SELECT date, source FROM prices WHERE ticker = ? AND date <= ? ORDER BY date DESC LIMIT 1",
        [ticker, day],
    ).fetchone()


def _get_signal(con, args: dict, as_of: date, flags: dict) -> dict[str, Any]:
    t = _ticker_arg(con, args)
    name = _name_arg(args, "name", "signal")
    day = _date_arg(args, "date", as_of, flags)
    out: dict[str, Any] = {"ticker": t, "indicator": name, "label": long_label(name)}
    px = _last_close(con, t, day)
    if px is None:
        return out | {"value": None, "note": f"no prices for {t} on or before {day}"}
    # the name is one of SIGNALS (checked above), never free text
    row = con.execute(
        f"SELECT {name} FROM signals WHERE ticker = ? AND date = ?", [t, px[0]]
    ).fetchone()
    out |= {
        "value": row[0] if row else None,
        "date": px[0],
        "source": f"signals on the adjusted close ({px[1]} prices)",
    }
    if out["value"] is None:
        out["note"] = f"not enough price history for {name} on {px[0]}"
    if px[0] < day - timedelta(days=STALE_DAYS):
        out["note"] = f"last close {px[0]} is more than {STALE_DAYS} days before {day}"
    return out


def _get_fundamental(con, args: dict, as_of: date, flags: dict) -> dict[str, Any]:
    t = _ticker_arg(con, args)
    name = _name_arg(args, "name", "ratio")
    day = _date_arg(args, "date", as_of, flags)
    f = fundamentals_as_of(con, t, day).get(name)
    out: dict[str, Any] = {"ticker": t, "indicator": name, "definition": RATIOS[name]}
    if not f:
        return out | {"value": None, "note": f"no value of {name} filed on or before {day}"}
    keep = ("value", "fiscal_year", "fiscal_period", "period_end", "source", "accession")
    return (
        out
        | {k: f[k] for k in keep}
        | {
            "date": f["filed"],  # the day it became available
            "estimated": f["estimated"] or None,
            "price_date": f["price_date"],
        }
    )


def _get_price_window(con, args: dict, as_of: date, flags: dict) -> dict[str, Any]:
    t = _ticker_arg(con, args)
    if args.get("start") in (None, ""):
        raise _Bad("start is required (ISO date YYYY-MM-DD)")
    start = _date_arg(args, "start", as_of, flags)
    end = _date_arg(args, "end", as_of, flags)
    if start > end:
        raise _Bad(f"start {start} is after end {end}")
    rows = con.execute(
        "SELECT date, close, adj_close, volume, source FROM prices"
        " WHERE ticker = ? AND date BETWEEN ? AND ? ORDER BY date",
        [t, start, end],
    ).fetchall()
    n = len(rows)
    if n > MAX_WINDOW_ROWS:  # evenly spaced, first and last day kept
        picks = sorted({round(i * (n - 1) / (MAX_WINDOW_ROWS - 1)) for i in range(MAX_WINDOW_ROWS)})
        rows = [rows[i] for i in picks]
    return dict(
        ticker=t, columns=["date", "close", "adj_close", "volume"],
        rows=[[r[0].isoformat(), _round(r[1]), _round(r[2]), _volume(r[3])] for r in rows],
        trading_days=n, downsampled=n > MAX_WINDOW_ROWS, date=rows[-1][0] if rows else None,
        source=", ".join(sorted({r[4] for r in rows})) + " prices" if rows else None,
    )  # fmt: skip


def _volume(v: float | None) -> float | int | None:
    return int(v) if v is not None and math.isfinite(v) and float(v).is_integer() else v


def _round(v: float | None, sig: int = 6) -> float | None:
    if v is None or not math.isfinite(v):
        return None
    return float(f"{v:.{sig}g}")


def cross_section(
    con: duckdb.DuckDBPyConnection, tickers: list[str], as_of: date, names: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """One row per ticker with a close within STALE_DAYS before `as_of`: date, adj_close, the
    named signals, and the named ratios (value + provenance) as available on `as_of`. Returns
    (rows ordered by ticker, tickers left out for lack of a recent close)."""
    sig = [n for n in names if KIND.get(n) == "signal"]
    rat = [n for n in names if KIND.get(n) == "ratio"]
    cols = "".join(f", s.{n}" for n in sig)  # names come from SIGNALS only
    found = con.execute(
        f"""SELECT s.ticker, s.date, s.adj_close, p.source{cols}
        FROM signals s JOIN prices p ON p.ticker = s.ticker AND p.date = s.date
        WHERE list_contains(?::VARCHAR[], s.ticker) AND s.date <= ? AND s.date >= ?
        QUALIFY row_number() OVER (PARTITION BY s.ticker ORDER BY s.date DESC) = 1
        ORDER BY s.ticker""",
        [tickers, as_of, as_of - timedelta(days=STALE_DAYS)],
    ).fetchall()
    rows = {
        r[0]: {"ticker": r[0], "date": r[1], "adj_close": r[2], "price_source": r[3]}
        | dict(zip(sig, r[4:], strict=True))
        | {"fundamentals": {}}
        for r in found
    }
    if rat and rows:
        # the same choice as store.queries.fundamentals_as_of, for many tickers in one query
        keys = ("value", "fiscal_year", "fiscal_period", "period_end", "filed", "accession")
        for t, (best, _) in best_many(con, list(rows), as_of, rat).items():
            for ratio, v in best.items():
                rows[t]["fundamentals"][ratio] = {k: v[k] for k in (*keys, "source")}
    missing = sorted(set(tickers) - set(rows))
    return list(rows.values()), missing


def _screen(con, args: dict, as_of: date, flags: dict) -> dict[str, Any]:
    name = _name_arg(args, "indicator", None)
    day = _date_arg(args, "date", as_of, flags)
    top = args.get("top", SCREEN_TOP)
    if isinstance(top, bool) or not isinstance(top, int | float) or top < 1:
        raise _Bad(f"top {top!r} is not a positive whole number")
    top = min(int(top), SCREEN_TOP_MAX)
    asc = args.get("ascending", False)
    if not isinstance(asc, bool):
        raise _Bad(f"ascending {asc!r} is not true or false")
    filt = None
    for key in ("sector", "industry"):
        if args.get(key):
            filt = (key, str(args[key]))
    members = index_members(con, day, filt)
    rows, _ = cross_section(con, members, day, [name])
    scored = []
    for r in rows:
        if KIND[name] == "signal":
            v, when, src = r[name], r["date"], None
        else:
            f = r["fundamentals"].get(name)
            v, when, src = (f["value"], f["filed"], f["source"]) if f else (None, None, None)
        if v is not None and math.isfinite(v):
            scored.append(_clean({"ticker": r["ticker"], "value": v, "date": when, "source": src}))
    scored.sort(key=lambda s: s["value"], reverse=not asc)
    universe = f"NASDAQ-100 members on {day}" + (f" ({filt[0]} {filt[1]})" if filt else "")
    source = {
        "signal": "signals on the adjusted close",
        "ratio": "fundamentals, latest filed on or before the date (filings first)",
    }[KIND[name]]
    return dict(
        indicator=name, label=long_label(name), date=day, universe=universe,
        members=len(members), with_value=len(scored), ascending=asc, rows=scored[:top],
        source=source,
    )  # fmt: skip


_TOOLS = dict(
    get_signal=_get_signal, get_fundamental=_get_fundamental,
    get_price_window=_get_price_window, screen=_screen,
)  # fmt: skip


def call_tool(
    con: duckdb.DuckDBPyConnection, name: str, arguments: dict | str, as_of: date
) -> dict[str, Any]:
    """Run one tool call as visible after the close of `as_of`; never raises on bad input."""
    try:
        if name not in _TOOLS:
            raise _Bad(f"unknown tool {name!r} (tools: {', '.join(_TOOLS)})")
        args = arguments
        if isinstance(arguments, str):
            try:
                args = json.loads(arguments or "{}")
            except (json.JSONDecodeError, RecursionError):
                raise _Bad(f"arguments of {name} are not valid JSON") from None
        if not isinstance(args, dict):
            raise _Bad(f"arguments of {name} must be a JSON object")
        extra = sorted(set(args) - _PARAMS[name])
        if extra:
            raise _Bad(f"unexpected argument {extra[0]!r} for {name} ({', '.join(_PARAMS[name])})")
        flags: dict[str, Any] = {}
        result = _TOOLS[name](con, args, as_of, flags)
    except _Bad as e:
        return {"error": " ".join(str(e).split())}
    except duckdb.Error as e:  # a store problem is still one line for the model, not a crash
        return {"error": f"{name} failed: {' '.join(str(e).split())[:200]}"}
    return _clean(result | flags)


def tool_item(n: int, name: str, args: dict | str, result: dict) -> EvidenceItem:
    """One tool call and its result as evidence (the text is what the model saw)."""
    asked = args
    if isinstance(args, str):  # arguments as the model wrote them
        try:
            args = json.loads(args or "{}")
        except (json.JSONDecodeError, RecursionError):
            args = {}
    if not isinstance(args, dict):
        args = {}
    shown = {k: v for k, v in result.items() if k != "error"}
    when = result.get("date")
    try:
        available = date.fromisoformat(when) if isinstance(when, str) else when
    except ValueError:
        available = None
    cap = result.get("as_of") if result.get("clamped_to_as_of") else None
    if cap:  # the call as asked named a later date: show the date actually used
        args = {
            k: cap if k in ("date", "start", "end") and isinstance(v, str) and v[:10] > cap else v
            for k, v in args.items()
        }
    args_text = json.dumps(args, default=_json_value, sort_keys=True)
    body = f"error: {result['error']}" if "error" in result else json.dumps(shown, sort_keys=True)
    title = f"{name} " + " ".join(str(v) for v in args.values() if v is not None)
    ticker = args.get("ticker") if isinstance(args.get("ticker"), str) else None
    meta = {"name": name, "arguments": asked, "result": result}
    text = f"{name}({args_text}) -> {body}"
    return EvidenceItem(f"tool:{n}:{name}", "tool", text, title, ticker, available, meta)
