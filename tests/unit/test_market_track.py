"""Market-track chunks carry the store's own numbers, with honest date ranges."""

from __future__ import annotations

import re
from datetime import date

import pytest

from fintrade_tui.retrieval.chunks import Chunk
from fintrade_tui.retrieval.market_track import market_chunks
from fintrade_tui.store.queries import snapshot
from tests.conftest import needs_bundle

pytestmark = needs_bundle


def _by_id(chunks: list[Chunk]) -> dict[str, Chunk]:
    return {c.id: c for c in chunks}


@pytest.fixture
def aapl(con) -> dict[str, Chunk]:
    return _by_id(list(market_chunks(con, ["AAPL"], since=date(2024, 1, 1))))


def test_month_range_is_the_trading_days_of_the_month(con, aapl) -> None:
    c = aapl["mkt:AAPL:2025-08"]
    first, last = con.execute(
        "SELECT min(date), max(date) FROM prices WHERE ticker = 'AAPL'"
        " AND date BETWEEN DATE '2025-08-01' AND DATE '2025-08-31'"
    ).fetchone()
    assert (c.start, c.end, c.period_end, c.available_from) == (first, last, last, last)
    assert (c.track, c.form, c.period, c.source_path) == (
        "market",
        "monthly",
        "2025-08",
        "store:prices+signals",
    )
    assert c.text.startswith(f"AAPL daily prices and signals, August 2025 ({first} to {last})")
    assert c.embed_text == f"Apple Inc. (AAPL) market data 2025-08 {first} to {last}\n{c.text}"
    assert (c.char_start, c.char_end) == (0, len(c.text))
    q = aapl["mkt:AAPL:2025-Q3"]
    assert (c.parent_id, c.parent_text) == (q.id, q.text)


def test_daily_close_matches_the_store(con, aapl) -> None:
    text = aapl["mkt:AAPL:2025-08"].text
    close, adj = con.execute(
        "SELECT close, adj_close FROM prices WHERE ticker = 'AAPL' AND date = DATE '2025-08-29'"
    ).fetchone()
    line = next(ln for ln in text.splitlines() if ln.startswith("2025-08-29 "))
    assert line.split()[1:3] == [f"{close:.2f}", f"{adj:.2f}"]


def test_month_end_signals_match_the_snapshot(con, aapl) -> None:
    text = aapl["mkt:AAPL:2025-08"].text
    sig = snapshot(con, "AAPL", date(2025, 8, 31))["signals"]
    summary = text.splitlines()[1]  # the summary follows the header line
    assert "month-end signals 2025-08-29:" in summary
    rsi = re.search(r"RSI \(rsi_14\) (\S+);", summary).group(1)
    ma = re.search(r"MA \(ma_20\) (\S+);", summary).group(1)
    assert rsi == f"{sig['rsi_14']:.2f}"
    assert ma == f"{sig['ma_20']:.2f}"
    # the month return starts from July's last adjusted close
    jul = con.execute(
        "SELECT date, adj_close FROM prices WHERE ticker = 'AAPL' AND date < DATE '2025-08-01'"
        " ORDER BY date DESC LIMIT 1"
    ).fetchone()
    aug = con.execute(
        "SELECT adj_close FROM prices WHERE ticker = 'AAPL' AND date = DATE '2025-08-29'"
    ).fetchone()[0]
    ret, base_day, base = re.search(
        r"month return (\S+) \(adj close (\S+) (\S+) to", summary
    ).groups()
    assert (base_day, base) == (str(jul[0]), f"{jul[1]:.2f}")
    assert float(ret) == pytest.approx(aug / jul[1] - 1, rel=1e-3)


def test_quarter_fundamentals_are_point_in_time(con, aapl) -> None:
    q = aapl["mkt:AAPL:2024-Q4"]
    assert (q.end, q.available_from, q.form, q.period) == (
        date(2024, 12, 31),
        date(2024, 12, 31),
        "quarterly",
        "2024-Q4",
    )
    assert (q.parent_id, q.parent_text) == (q.id, q.text)
    filed = [date.fromisoformat(d) for d in re.findall(r"filed (\d{4}-\d\d-\d\d)", q.text)]
    assert filed and all(d <= q.end for d in filed)
    roa = re.search(r"ROA \(roa\) (\S+) \[([^\]]*)\]", q.text)
    assert "10-K" in roa.group(2) and "filed 2024-11-01" in roa.group(2)
    assert "0000320193-24-000123" in roa.group(2)
    assert float(roa.group(1)) == pytest.approx(0.04037, abs=5e-5)


def test_range_bounds_and_in_progress_periods(con) -> None:
    since, until = date(2025, 7, 15), date(2025, 8, 15)
    chunks = list(market_chunks(con, ["AAPL", "msft"], since=since, until=until))
    assert {c.ticker for c in chunks} == {"AAPL", "MSFT"}
    assert all(since <= c.start <= c.end <= until for c in chunks)
    assert all(c.available_from == c.end == c.period_end for c in chunks)
    ids = _by_id(chunks)
    assert len(ids) == len(chunks)
    last = con.execute(
        "SELECT max(date) FROM prices WHERE ticker = 'AAPL' AND date <= ?", [until]
    ).fetchone()[0]
    assert ids["mkt:AAPL:2025-Q3"].end == ids["mkt:AAPL:2025-08"].end == last
    # a month cut by `since` measures its return from its own first day
    jul = ids["mkt:AAPL:2025-07"]
    assert f"(adj close {jul.start} " in jul.text.splitlines()[1]


@pytest.mark.long  # a sweep: every ticker's market chunks over a year
def test_whole_store_ids_unique_and_available_on_last_day(con) -> None:
    # every ticker of the store from the default start to the end of that year: the same
    # all-tickers path and 3,000 chunks, at a third of the whole store's cost
    chunks = list(market_chunks(con, until=date(2023, 12, 31)))
    (priced,) = con.execute(
        "SELECT count(DISTINCT ticker) FROM prices WHERE date BETWEEN '2023-01-01' AND '2023-12-31'"
    ).fetchone()
    assert len({c.ticker for c in chunks}) == priced > 100
    assert len({c.id for c in chunks}) == len(chunks) > 1000
    assert all(c.available_from == c.end and c.start >= date(2023, 1, 1) for c in chunks)
    assert all(c.id == f"mkt:{c.ticker}:{c.period}" for c in chunks)


def test_no_prices_in_range_yields_nothing(con) -> None:
    assert list(market_chunks(con, ["AAPL"], since=date(2099, 1, 1))) == []
    assert list(market_chunks(con, ["NOSUCHTICKER"])) == []
    assert list(market_chunks(con, [])) == []
