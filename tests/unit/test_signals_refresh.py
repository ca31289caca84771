"""An incremental signal refresh gives exactly what a full rebuild gives."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from fintrade_tui.config import load_config
from fintrade_tui.ingest.pipeline import run_ingest
from fintrade_tui.signals.compute import SIGNALS, STATE, build, refresh
from tests.conftest import write_config


def test_refresh_equals_full_build(tmp_path, mini_bundle) -> None:
    cfg = load_config(write_config(tmp_path / "cfg", mini_bundle))
    run_ingest(cfg)
    con = duckdb.connect(str(cfg.store))
    full = con.execute("SELECT * FROM signals ORDER BY ticker, date").df()
    # forget each ticker's last 7 days of signals, then refresh
    con.execute(
        "DELETE FROM signals WHERE (ticker, date) IN (SELECT ticker, date FROM signals"
        " QUALIFY row_number() OVER (PARTITION BY ticker ORDER BY date DESC) <= 7)"
    )
    assert refresh(con) == 14
    assert refresh(con) == 0  # nothing new the second time
    again = con.execute("SELECT * FROM signals ORDER BY ticker, date").df()
    pd.testing.assert_frame_equal(again, full, rtol=1e-12, check_dtype=False)
    # and the refreshed values are real: the last day's 5-day momentum by hand
    p = full[full["ticker"] == "AAPL"]["adj_close"].to_numpy()
    last = full[full["ticker"] == "AAPL"].iloc[-1]
    assert np.isclose(last["momentum_5d"], p[-1] / p[-6] - 1, rtol=1e-12)
    assert build(con) == len(full)
    assert set(SIGNALS + STATE) <= set(full.columns)
