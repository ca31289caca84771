"""Indicator room: canonical names of the store's signals and ratios, and their synonyms.

A golden indicator as written in a benchmark ("ROE", "Return on Equity", "Medium-term momentum")
maps to one canonical name the store computes, or is reported as unmapped.
"""

from __future__ import annotations

import re

from fintrade_tui.fundamentals.concepts import RATIOS
from fintrade_tui.signals.compute import SIGNALS

# canonical name -> the names and abbreviations analysts and benchmarks use for it
SYNONYMS: dict[str, list[str]] = {
    "roa": ["ROA", "Return on Assets"],
    "roe": ["ROE", "Return on Equity"],
    "earnings_price": ["Earnings/Price", "E/P", "Earnings to Price", "Earnings Yield"],
    "book_price": ["Book/Price", "B/P", "Book to Price", "Book-to-Market"],
    "sales_assets": ["Sales/Assets", "Asset Turnover", "Sales to Assets"],
    "debt_assets": ["Debt/Assets", "Debt to Assets", "Debt Ratio"],
    "debt_equity": ["Debt/Equity", "D/E", "Debt to Equity", "Leverage"],
    "cashflow_assets": ["Cash Flow/Assets", "Cash-flow/Assets", "Cash Flow to Assets", "CF/A"],
    "dividend_yield": ["Dividend Yield", "Yield"],
    "forecast_earnings_price": ["Forecast Earnings/Price", "Forward E/P", "Forward Earnings Yield"],
    "ma_20": ["MA", "Moving Average", "SMA", "MA20", "20-day Moving Average"],
    "ema_20": ["EMA", "Exponential Moving Average", "EMA20"],
    "macd": ["MACD"],
    "macd_signal": ["MACD Signal", "Signal Line"],
    "rsi_14": ["RSI", "Relative Strength Index", "RSI14"],
    "rsi_14_wilder": ["Wilder RSI"],
    "obv": ["OBV", "On-Balance Volume", "On Balance Volume"],
    "one_day_reversal": ["One Day Reversal", "1-Day Reversal", "Daily Reversal"],
    "max_return_20d": ["Max Return", "Maximum Return", "Max Daily Return"],
    "momentum_5d": ["5-day Momentum", "Momentum 5D"],
    # the paper's "short-term momentum" is the one-month (20 trading day) return
    "momentum_20d": ["Short Term Momentum", "Momentum", "20-day Momentum", "Momentum 20D"],
    "mean_reversal_60d": ["Mean Reversal", "Mean Reversion", "60-day Mean Reversal"],
    "short_term_reversal_1m": ["Short Term Reversal", "One Month Reversal"],
    "medium_term_momentum": ["Medium Term Momentum", "12-1 Momentum", "2-12 Month Momentum"],
    # "long-term (mean) reversal" in the factor literature is the 13-60 month reversal
    "long_term_reversal": ["Long Term Mean Reversal", "Long Term Reversal"],
    "drawdown": ["Drawdown", "Max Drawdown"],
    "realized_vol_20d": ["Volatility", "Realized Volatility", "Historical Volatility"],
}
KIND = {name: "ratio" for name in RATIOS} | {name: "signal" for name in SIGNALS}
LABEL = {name: names[0] for name, names in SYNONYMS.items()}


def _key(text: str) -> str:
    """Case, hyphens, underscores and spacing do not matter ("Medium-term" = "MEDIUM TERM")."""
    return re.sub(r"[\s_\-]+", " ", text.strip().lower())


_LOOKUP = {_key(s): name for name, names in SYNONYMS.items() for s in [name, *names]}


def canonical(indicator: str) -> str | None:
    """The store's name for an indicator as written, or None when the store does not compute it."""
    return _LOOKUP.get(_key(indicator))


def map_indicators(raw: list[str]) -> tuple[list[str], list[str]]:
    """(canonical names in order without repeats, the ones that did not map)."""
    names: list[str] = []
    unmapped: list[str] = []
    for r in raw:
        c = canonical(r)
        if c is None:
            unmapped.append(r)
        elif c not in names:
            names.append(c)
    return names, unmapped
