"""SEC filer directory: names normalized the way people write them, any US filer in a question
resolves with its CIK (flagged when the store has no data for it), a named company is never
turned into a market scan, and the seeds resolve exactly as before (tickers, as_of, oracle)."""

from __future__ import annotations

import json
from datetime import date

import duckdb
import pytest

from fintrade_tui.config import Config
from fintrade_tui.questions.filers import FilerDirectory, normalize
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.workspace.questions import Question
from tests.conftest import BUNDLE


@pytest.mark.parametrize(
    "name, want",
    [
        ("NVIDIA CORP /DE/", "nvidia"),
        ("Procter & Gamble Co", "procter and gamble"),
        ("AMAZON COM INC", "amazon"),
        ("Booking Holdings Inc.", "booking"),
        ("The Home Depot, Inc.", "home depot"),
        ("JPMORGAN CHASE & CO", "jpmorgan chase"),
        ("McDonald's", "mcdonald"),
        ("Alphabet Inc.", "alphabet"),
    ],
)
def test_normalize(name: str, want: str) -> None:
    assert normalize(name) == want


@pytest.fixture(scope="module")
def sec() -> dict[str, tuple[int, str]]:
    rows = json.loads((BUNDLE / "reference" / "company_tickers.json").read_text())
    return {r["ticker"]: (r["cik_str"], r["title"]) for r in rows.values()}


@pytest.fixture(scope="module")
def directory(built_store: Config) -> FilerDirectory:
    con = duckdb.connect(str(built_store.store), read_only=True)
    try:
        return FilerDirectory(con)
    finally:
        con.close()


@pytest.mark.parametrize(
    "text, tickers",
    [
        ("How did JPMorgan Chase's net interest income change in fiscal 2023?", ["JPM"]),
        ("What was Procter & Gamble's organic sales growth?", ["PG"]),
        ("Compare Home Depot and Lowe's margins.", ["HD", "LOW"]),
        ("Did Target's gross margin shrink in 2023?", ["TGT"]),
        ("Analysts raised their Target prices for many stocks.", []),  # an everyday word
        ("What does the CEO say about EPS?", []),  # capitals that are not companies
        ("Which NASDAQ stocks are in strong uptrends?", []),  # the index, not Nasdaq, Inc.
    ],
)
def test_mentions_find_filers(directory: FilerDirectory, sec, text: str, tickers) -> None:
    found = directory.mentions(text)
    assert [m.filer.ticker for m in found] == tickers
    for m in found:  # each with SEC's own CIK and title
        assert (m.filer.cik, m.filer.title) == sec[m.filer.ticker]
        assert text[m.span[0] : m.span[1]] == m.phrase


def test_a_filer_outside_the_store_resolves_flagged_and_is_not_a_scan(built_store, con, sec):
    r = Resolver(con, date(2025, 9, 30))
    q = r.resolve(
        Question(
            "X1",
            "jsonl",
            "other",
            "As of June 30, 2024, is JPMorgan Chase a growth stock compared with tech stocks?",
        )
    )
    assert q.tickers == ["JPM"] and q.scope == "company" and q.status == "resolved"
    assert q.as_of == date(2024, 6, 30)
    assert q.reasons == [f"JPMorgan Chase (JPM, CIK {sec['JPM'][0]}): no data in store"]
    (m,) = q.extra["company_mentions"]
    assert m["in_store"] is False and m["sec_title"] == sec["JPM"][1]
    # the seeds' own scan wording, naming no company, still scans the index
    scan = r.resolve(Question("T1", "fintradebench", "T", "As of August 2025, which NASDAQ 100 "
                              "stocks are in strong uptrends?"))  # fmt: skip
    assert scan.scope == "market_scan" and len(scan.tickers) > 50


def test_a_store_built_before_the_filer_table_still_resolves() -> None:
    con = duckdb.connect()  # no sec_filers table: an older store
    try:
        assert FilerDirectory(con).mentions("How did JPMorgan Chase's income change?") == []
    finally:
        con.close()
