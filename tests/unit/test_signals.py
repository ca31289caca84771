"""The SQL signals equal the paper's precomputed columns for all 7 FinTradeBench companies."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from tests.conftest import BUNDLE, needs_bundle

PAPER_COLUMNS = {
    "MA_20": "ma_20",
    "EMA_20": "ema_20",
    "MACD": "macd",
    "MACD_Signal": "macd_signal",
    "RSI": "rsi_14",
    "OBV": "obv",
    "One_Day_Reversal": "one_day_reversal",
    "Max_Return_20D": "max_return_20d",
    "Momentum_5D": "momentum_5d",
    "Momentum_20D": "momentum_20d",
    "Mean_Reversal_60D": "mean_reversal_60d",
    "Short_Term_Reversal_1month": "short_term_reversal_1m",
    "Long_Term_Reversal_13month_to_60month": "long_term_reversal",
}
TICKERS = ["AAPL", "ADSK", "AMZN", "GOOG", "META", "NVDA", "TSLA"]


def printed_unit(text: str) -> float:
    """Half a unit in the last digit the CSV printed (some values were written with 3 digits)."""
    return 0.5 * 10.0 ** Decimal(text).as_tuple().exponent


@needs_bundle
@pytest.mark.parametrize("ticker", TICKERS)
def test_signals_equal_paper_columns(con, ticker: str) -> None:
    path = BUNDLE / "fintradebench" / "precomputed" / f"{ticker}-daily_with_fundamentals.csv"
    paper = pd.read_csv(path, dtype=str, usecols=["Date", *PAPER_COLUMNS])
    paper["date"] = pd.to_datetime(paper["Date"], format="mixed").dt.date
    ours = con.execute("SELECT * FROM signals WHERE ticker = ?", [ticker]).df()
    ours["date"] = pd.to_datetime(ours["date"]).dt.date
    both = paper.merge(ours, on="date")
    assert len(both) == len(paper), "every paper date is in the store"
    for col, name in PAPER_COLUMNS.items():
        have = both[col].notna() & both[name].notna()
        # where one side has a value, so must the other (same warm-up lengths)
        assert (both[col].notna() == both[name].notna()).all(), f"{ticker} {col} null pattern"
        theirs = both.loc[have, col].astype(float).to_numpy()
        mine = both.loc[have, name].to_numpy(dtype=float)
        slack = np.array([printed_unit(s) for s in both.loc[have, col]])
        err = np.abs(mine - theirs) - (2e-5 * np.abs(theirs) + slack)
        worst = int(np.argmax(err)) if len(err) else 0
        assert len(err) and err[worst] <= 0, (
            f"{ticker} {col}: ours {mine[worst]!r} vs paper {theirs[worst]!r} "
            f"on {both.loc[have, 'date'].iloc[worst]}"
        )
