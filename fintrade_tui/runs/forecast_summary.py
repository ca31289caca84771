"""Forecast-summary room: each ticker's price series up to `as_of`, summarised by a statistical
forecaster (statsforecast's AutoETS), as one compact evidence item labelled a model forecast,
not data.

AutoETS chooses, by AICc, among the additive-error exponential-smoothing models without
seasonality (`model="AZN"`: no trend, additive trend, damped additive trend), fitted by maximum
likelihood on the natural log of the adjusted close of the last `WINDOW` trading days on or
before `as_of` (the store's `prices`, dates <= as_of only). Log prices make a trend a growth
rate and the intervals multiplicative; on a year of daily closes AICc usually picks no trend
(a random walk: a flat forecast), which the item says. The item gives:

- the last close and its date (and the adjusted close the model sees);
- the point forecast 5 and 20 trading days ahead, exp of the log-scale mean (the median price
  under the model), with 80 % and 95 % intervals (exp of statsforecast's log-scale bounds);
- the chosen model and its trend: the last trend state b (log per day; 0 without a trend),
  shown as exp(b)-1 per day and exp(252 b)-1 per year, with the damping phi when damped;
- the volatility regime: the store's `signals.realized_vol_20d` on the last close against its
  own last `VOL_DAYS` values: percentile = share of those days at or below it; under
  `LOW_PCT` low, over `HIGH_PCT` high, else normal.

Rounding: prices to 2 decimals (4 significant digits under 1), the daily trend to 3 decimals of
a percent, the yearly trend and the volatility to 1 decimal of a percent, the percentile to a
whole number. Full-precision values are kept in the item's meta.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any

import duckdb

from fintrade_tui.runs.indicator_rag import some_names
from fintrade_tui.workspace.evidence import EvidenceItem, item_tokens

WINDOW = 252  # trading days fitted: one year, enough for a trend, short enough to be current
MIN_DAYS = 60  # fewer closes than this: no forecast (the ETS fit is not meaningful)
HORIZONS = (5, 20)  # trading days ahead: a week and a month
LEVELS = (80, 95)  # prediction interval coverage, percent
VOL_DAYS = 252  # the realized-vol history its percentile is taken in
MIN_VOL_DAYS = 60
LOW_PCT, HIGH_PCT = 20, 80
SPACE = "AZN"  # AutoETS: additive error, trend chosen (none / additive / damped), no season


def closes(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date, n: int = WINDOW) -> list:
    """The last `n` (date, close, adj_close) rows of `ticker` dated on or before `as_of`,
    oldest first (rows without a positive adjusted close are skipped: log needs it)."""
    rows = con.execute(
        "SELECT date, close, adj_close FROM prices WHERE ticker = ? AND date <= ?"
        " AND adj_close > 0 ORDER BY date DESC LIMIT ?",
        [ticker, as_of, n],
    ).fetchall()
    return rows[::-1]


def model_name(components: str) -> str:
    """statsforecast's components code ("AAdN" style: error, trend, season, damped) as the
    usual ETS(error,trend,season) name, Ad for a damped trend."""
    error, trend, season, damped = tuple(components[:4])
    return f"ETS({error},{trend}{'d' if damped == 'D' else ''},{season})"


def fit_forecast(adj: list[float]) -> dict[str, Any]:
    """AutoETS over SPACE on log(adj) and its forecasts at HORIZONS with LEVELS intervals, on
    the price scale; also the chosen model, its last trend state and its parameters."""
    import numpy as np  # lazy: statsforecast imports pandas and more
    from statsforecast.models import AutoETS

    y = np.log(np.asarray(adj, dtype=float))
    model = AutoETS(model=SPACE).fit(y)
    fc = model.predict(h=max(HORIZONS), level=list(LEVELS))
    fit = model.model_
    components = str(fit["components"])
    out: dict[str, Any] = {}
    for h in HORIZONS:
        row = {"mean": math.exp(float(fc["mean"][h - 1]))}
        for lv in LEVELS:
            row[f"lo{lv}"] = math.exp(float(fc[f"lo-{lv}"][h - 1]))
            row[f"hi{lv}"] = math.exp(float(fc[f"hi-{lv}"][h - 1]))
        out[str(h)] = row
    alpha, beta, _gamma, phi = (float(v) for v in fit["par"][:4])
    has_trend = components[1] != "N"
    return {
        "model": model_name(components),
        "forecast": out,
        "trend": float(fit["states"][-1][1]) if has_trend else 0.0,
        "params": {
            "alpha": alpha,
            "beta": beta if has_trend else None,
            "phi": phi if components[3] == "D" else None,
            "sigma2": float(fit["sigma2"]),
        },
        "aicc": float(fit["aicc"]),
    }


def vol_regime(
    con: duckdb.DuckDBPyConnection, ticker: str, day: date
) -> tuple[float, float, str] | None:
    """(realized_vol_20d on `day`, its percentile among the last VOL_DAYS values to `day`,
    regime); None when the store has no value on `day` or too short a history."""
    vols = [
        r[0]
        for r in con.execute(
            "SELECT realized_vol_20d FROM signals WHERE ticker = ? AND date <= ?"
            " AND realized_vol_20d IS NOT NULL ORDER BY date DESC LIMIT ?",
            [ticker, day, VOL_DAYS],
        ).fetchall()
    ]
    last = con.execute(
        "SELECT realized_vol_20d FROM signals WHERE ticker = ? AND date = ?", [ticker, day]
    ).fetchone()
    if not last or last[0] is None or len(vols) < MIN_VOL_DAYS:
        return None
    now = last[0]
    pct = 100 * sum(v <= now for v in vols) / len(vols)
    regime = "low" if pct < LOW_PCT else "high" if pct > HIGH_PCT else "normal"
    return now, pct, regime


def _px(v: float) -> str:
    return f"{v:.2f}" if abs(v) >= 1 else f"{v:.4g}"


def _pct(v: float, digits: int) -> str:
    return f"{100 * v:+.{digits}f}%"


def forecast_text(ticker: str, s: dict[str, Any]) -> str:
    """The item's text: what the prompt shows, numbers rounded by the module's rules."""
    lines = [
        f"{ticker}: model forecast, not data. {s['model']} chosen by AICc (statsforecast"
        " AutoETS: additive error, no seasonality) and fitted on the log adjusted close of"
        f" {s['days']} trading days, {s['first_date']} to {s['last_date']}; forecasts are on"
        " the adjusted-close basis.",
        f"Last close {s['last_date']}: {_px(s['last_close'])} (adjusted {_px(s['last_adj'])}).",
    ]
    for h in HORIZONS:
        f = s["forecast"][str(h)]
        bands = "; ".join(f"{lv}%: {_px(f[f'lo{lv}'])} to {_px(f[f'hi{lv}'])}" for lv in LEVELS)
        lines.append(f"In {h} trading days: {_px(f['mean'])} ({bands}).")
    if s["params"]["beta"] is None:
        lines.append("Fitted trend: none (the chosen model has no trend: the forecast is flat).")
    else:
        damped = "" if s["params"]["phi"] is None else f", damped by {s['params']['phi']:.3f}"
        lines.append(
            f"Fitted trend: {_pct(s['trend_day'], 3)} per day ({_pct(s['trend_year'], 1)} per"
            f" year annualised{damped})."
        )
    if s.get("vol") is None:
        lines.append("Volatility regime: not known (too little realized-volatility history).")
    else:
        lines.append(
            f"Volatility regime: {s['vol_regime']}; 20-day realized volatility"
            f" {100 * s['vol']:.1f}% annualised, percentile {s['vol_percentile']:.0f} of its"
            f" last {s['vol_days']} trading days."
        )
    return "\n".join(lines)


def summarise(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date) -> dict[str, Any] | None:
    """Everything the item says about `ticker` as of `as_of`, at full precision; None when it
    has fewer than MIN_DAYS closes."""
    rows = closes(con, ticker, as_of)
    if len(rows) < MIN_DAYS:
        return None
    fit = fit_forecast([r[2] for r in rows])
    s: dict[str, Any] = {
        "days": len(rows),
        "first_date": rows[0][0],
        "last_date": rows[-1][0],
        "last_close": rows[-1][1],
        "last_adj": rows[-1][2],
        **fit,
        "trend_day": math.expm1(fit["trend"]),
        "trend_year": math.expm1(252 * fit["trend"]),
        "vol": None,
    }
    if vr := vol_regime(con, ticker, rows[-1][0]):
        s.update(vol=vr[0], vol_percentile=vr[1], vol_regime=vr[2], vol_days=VOL_DAYS)
    return s


def forecast_items(
    con: duckdb.DuckDBPyConnection,
    tickers: list[str],
    as_of: date,
    budget_tokens: int,
    notes: list[str],
) -> list[EvidenceItem]:
    """One forecast item per ticker in question order until the next would pass the budget (the
    first always goes in, as the prompt does); the rest are named in `notes`."""
    items: list[EvidenceItem] = []
    short: list[str] = []
    used = 0
    tickers = list(dict.fromkeys(tickers))
    for n, t in enumerate(tickers):
        s = summarise(con, t, as_of)
        if s is None:
            short.append(t)
            continue
        title = f"{t} model forecast ({s['model']} on {s['days']} closes to {s['last_date']})"
        item = EvidenceItem(
            f"forecast:{t}:{s['last_date']}", "forecast", forecast_text(t, s), title, t,
            s["last_date"], s,
        )  # fmt: skip
        cost = item_tokens(item)
        if items and used + cost > budget_tokens:
            rest = [x for x in tickers[n:] if x not in short]
            notes.append(f"forecasts left out to fit the budget: {some_names(rest)}")
            break
        items.append(item)
        used += cost
    if short:
        notes.append(f"fewer than {MIN_DAYS} closes on or before {as_of}: {some_names(short)}")
    return items
