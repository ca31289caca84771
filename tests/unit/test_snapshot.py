"""Point-in-time snapshots: nothing available after `as_of` is ever used."""

from __future__ import annotations

import random
from datetime import date, timedelta

import pytest

from fintrade_tui.errors import UserError
from fintrade_tui.store.queries import snapshot
from tests.conftest import needs_bundle

pytestmark = needs_bundle


def test_before_the_10k_uses_the_june_quarter(con) -> None:
    s = snapshot(con, "AAPL", date(2024, 10, 31))
    assert str(s["fundamentals"]["roa"]["period_end"]) == "2024-06-29"
    assert s["fundamentals"]["roa"]["source"] == "filing"
    assert str(s["price_date"]) == "2024-10-31"


def test_on_the_10k_filing_day_uses_the_fiscal_year(con) -> None:
    s = snapshot(con, "AAPL", date(2024, 11, 1))
    f = s["fundamentals"]
    assert str(f["roa"]["period_end"]) == "2024-09-28"
    assert f["roa"]["value"] == pytest.approx(0.04037, abs=5e-5)
    assert f["roa"]["accession"] == "0000320193-24-000123"


def test_weekend_as_of_uses_friday_close(con) -> None:
    s = snapshot(con, "AAPL", date(2024, 11, 3))
    assert str(s["price_date"]) == "2024-11-01"
    assert s["signals"]["ma_20"] is not None


def test_no_snapshot_uses_a_row_from_after_as_of(con) -> None:
    rng = random.Random(7)
    tickers = [
        r[0] for r in con.execute("SELECT DISTINCT ticker FROM fundamentals ORDER BY 1").fetchall()
    ]
    # the earliest availability of every stored value, read once (one query, not one per ratio
    # of each snapshot): the row a snapshot used must really be available by then in the store
    first = {
        tuple(k): got
        for *k, got in con.execute(
            "SELECT ticker, ratio, source, value, min(available_from) FROM fundamentals"
            " WHERE value IS NOT NULL GROUP BY ALL"
        ).fetchall()
    }
    for _ in range(300):
        t = rng.choice(tickers)
        d = date(2014, 1, 1) + timedelta(days=rng.randrange(12 * 365))
        s = snapshot(con, t, d)
        assert s["price_date"] is None or s["price_date"] <= d
        for name, f in s["fundamentals"].items():
            if f is None:
                continue
            assert f["filed"] <= d, (t, d, name, f)
            assert first[(t, name, f["source"], f["value"])] <= d


def test_unknown_ticker_is_a_user_error(con) -> None:
    with pytest.raises(UserError, match="ZZZZ"):
        snapshot(con, "ZZZZ", date(2024, 1, 2))
