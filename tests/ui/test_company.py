"""Universe and Company screens: the core queries (store/company.py) and the screens (Pilot,
one SVG snapshot). The store is the session's `built_store` (the sample bundle)."""

from __future__ import annotations

import csv
from datetime import date, timedelta
from pathlib import Path

import pytest

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.store.company import (
    RATIO_LABELS,
    display_rows,
    filter_universe,
    find_quarter,
    quarter_view,
    quarters,
    question_counts,
    universe,
)
from fintrade_tui.store.company_chart import CHART_FIELDS, LEAD_DAYS, chart_series
from fintrade_tui.store.queries import fundamentals_as_of, signals_between, snapshot
from fintrade_tui.ui.screenshots import tables_measured
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import Question, save_questions
from tests.conftest import BUNDLE
from tests.ui.conftest import goto, notices, settle, until

# -- core ----------------------------------------------------------------------------------


def test_quarters_of_aapl_include_fy2024_q4(con) -> None:
    qs = quarters(con, "AAPL")
    assert [q["period_end"] for q in qs] == sorted(q["period_end"] for q in qs)
    q4 = qs[find_quarter(qs, "FY2024 Q4")]
    assert (q4["fiscal_year"], q4["fiscal_period"]) == (2024, "Q4")
    assert q4["period_end"] == date(2024, 9, 28)
    assert (q4["form"], q4["filed"], q4["as_of"]) == ("10-K", date(2024, 11, 1), date(2024, 11, 1))
    assert q4["accession"] == "0000320193-24-000123" and not q4["estimated"]
    # other spellings and a period end find the same quarter; the default is the latest
    assert find_quarter(qs, "fy2024q4") == find_quarter(qs, "2024-09-28") == qs.index(q4)
    assert find_quarter(qs, None) == len(qs) - 1
    with pytest.raises(UserError):
        find_quarter(qs, "FY1990 Q1")


def test_quarter_view_values_equal_snapshot_at_as_of(con) -> None:
    for ticker in ("AAPL", "NVDA", "AMD"):
        qs = quarters(con, ticker)
        for i in sorted({0, 1, len(qs) // 2, len(qs) - 1}):
            view = quarter_view(con, ticker, qs[i]["key"])
            assert view["quarter"] == qs[i] and view["as_of"] == qs[i]["as_of"]
            snap = snapshot(con, ticker, view["as_of"])["fundamentals"]
            before = fundamentals_as_of(con, ticker, qs[i - 1]["as_of"]) if i else {}
            assert [r["ratio"] for r in view["rows"]] == list(RATIO_LABELS)
            for r in view["rows"]:
                want, old = snap[r["ratio"]], before.get(r["ratio"])
                assert r["value"] == (want["value"] if want else None)
                assert r["previous"] == (old["value"] if old else None)
                if want:
                    assert (r["source"], r["accession"], r["filed"]) == (
                        want["source"],
                        want["accession"],
                        want["filed"],
                    )
                    assert r["filed"] <= view["as_of"]
                if r["change"] is not None:
                    assert r["change"] == pytest.approx(r["value"] - r["previous"])


def test_aapl_fy2024_q4_view(con) -> None:
    view = quarter_view(con, "AAPL", "FY2024 Q4")
    assert view["name"] == "Apple Inc."
    assert view["badge"] == "as of 2024-11-01: filings up to 10-K filed 2024-11-01"
    got = {r["ratio"]: r for r in view["rows"]}
    # DESIGN.md: the 10-K's figures give D/E 1.8723, D/A 0.2922, S/A 0.2601, CF/A 0.0735
    for ratio, want in (
        ("debt_equity", 1.8723),
        ("debt_assets", 0.2922),
        ("sales_assets", 0.2601),
        ("cashflow_assets", 0.0735),
    ):
        assert got[ratio]["value"] == pytest.approx(want, abs=5e-5)
        assert (got[ratio]["source"], got[ratio]["form"]) == ("filing", "10-K")
        assert got[ratio]["accession"] == "0000320193-24-000123"
    assert view["previous"]["key"] == "FY2024 Q3"
    assert display_rows(view)[6][:2] == ("Debt/Equity", "1.8723")


def test_tickers_without_filings_get_sec_pit_fiscal_quarters_from_their_filing_dates(con) -> None:
    # AMD has no filings in the bundle but fundamentals-sec rows: the CSV, read here, gives
    # each quarter's period end and the day it became available
    rows = list(csv.DictReader((BUNDLE / "fundamentals-sec" / "AMD.csv").open()))
    qs = quarters(con, "AMD", lag_days=90)
    assert qs and all(q["basis"] == "fiscal" and not q["estimated"] for q in qs)
    got = {str(q["period_end"]): q["as_of"] for q in qs}
    for r in rows:  # every quarter of the file, visible by its date (polygon's can be earlier)
        end, avail = date.fromisoformat(r["period_end"]), date.fromisoformat(r["available_date"])
        assert got[r["period_end"]] <= avail
        if (avail - end).days <= 150:  # the original report, not a later comparative
            assert got[r["period_end"]] == avail
    q = qs[find_quarter(qs, "FY2024 Q4")]  # AMD's fiscal year ends in December
    assert str(q["period_end"]).startswith("2024-12") and q["accession"] is None
    view = quarter_view(con, "AMD", "FY2024 Q4")
    assert view["badge"].startswith(
        f"as of {q['as_of']}: no filings in the store; polygon, sec_pit"
    )


def test_tickers_without_filings_or_sec_rows_get_calendar_quarters(con) -> None:
    qs = quarters(con, "DOCU", lag_days=90)
    assert qs and all(q["basis"] == "calendar" and q["estimated"] for q in qs)
    assert all(q["as_of"] == q["period_end"] + timedelta(days=90) for q in qs)
    assert all(q["period_end"].month in (3, 6, 9, 12) for q in qs)
    q = qs[find_quarter(qs, "CY2023 Q2")]
    assert q["period_end"] == date(2023, 6, 30) and q["accession"] is None
    view = quarter_view(con, "DOCU", "CY2023 Q2")
    assert view["badge"].startswith("as of 2023-09-28: no filings in the store")


def test_chart_series_never_goes_past_as_of(con) -> None:
    for q in quarters(con, "AAPL"):
        s = chart_series(con, "AAPL", quarter=q["key"])
        assert s["dates"], q["key"]
        assert s["dates"][-1] <= min(q["period_end"], q["as_of"])
        assert s["dates"][0] >= q["period_end"] - timedelta(days=LEAD_DAYS)
        assert all(len(s[f]) == len(s["dates"]) for f in CHART_FIELDS)
    # an explicit end after as_of is cut at as_of
    s = chart_series(con, "AAPL", date(2024, 6, 1), date(2025, 6, 1), as_of=date(2024, 11, 1))
    assert s["dates"][-1] == date(2024, 11, 1)
    ref = signals_between(con, "AAPL", date(2024, 6, 1), date(2024, 11, 1))
    assert s["dates"] == [r["date"] for r in ref]
    assert s["macd"] == [r["macd"] for r in ref] and s["rsi_14"] == [r["rsi_14"] for r in ref]
    assert all(v and v > 0 for v in s["volume"])


def test_universe_and_filter(con, tmp_path: Path) -> None:
    ws = open_workspace(tmp_path / "ws.duckdb")
    save_questions(
        ws,
        [
            Question(id="T1", source="jsonl", category="F", text="a", tickers=["AAPL", "NVDA"]),
            Question(id="T2", source="jsonl", category="F", text="b", tickers=["AAPL"]),
        ],
    )
    counts = question_counts(ws)
    assert counts == {"AAPL": 2, "NVDA": 1}
    rows = universe(con, counts)
    by = {r["ticker"]: r for r in rows}
    assert [r["ticker"] for r in rows] == sorted(by)
    assert by["AAPL"]["name"] == "Apple Inc." and by["AAPL"]["sector"] == "Technology"
    assert by["AAPL"]["filings"] == 8 and by["AAPL"]["questions"] == 2
    assert by["AMD"]["filings"] == 0 and by["AMD"]["questions"] == 0
    assert by["AAPL"]["first_price"] < by["AAPL"]["last_price"]
    assert universe(con)[0]["questions"] is None
    assert filter_universe(rows, "nvda")[0]["ticker"] == "NVDA"
    semis = filter_universe(rows, "semiconductor")
    assert "NVDA" in {r["ticker"] for r in semis} and "AAPL" not in {r["ticker"] for r in semis}


# -- screens -------------------------------------------------------------------------------


@pytest.fixture
def cfg(built_store: Config, tmp_path: Path) -> Config:
    return built_store.model_copy(update={"workspace": tmp_path / "ws.duckdb"})


def _table_rows(screen) -> list[tuple[str, ...]]:
    table = screen.query_one("#company-fundamentals")
    return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]


def _palette_highlight(app) -> str | None:
    """The command palette's highlighted command (its title), if the palette shows one."""
    from textual.command import CommandList

    lists = app.screen.query(CommandList)
    if not lists or lists.first().highlighted is None:
        return None
    option = lists.first().highlighted_option
    return str(option.prompt).splitlines()[0] if option else None


async def test_universe_to_company_and_quarter_steps(cfg: Config, con) -> None:
    from fintrade_tui.ui.app import FinTradeApp
    from fintrade_tui.ui.charts import SeriesChart

    app = FinTradeApp(cfg)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        assert type(app.screen).__name__ == "UniverseScreen"
        assert app.screen.query_one("#universe-table").row_count > 100
        await pilot.press(*"NVDA")  # typed on the table: goes to the filter
        assert app.screen.query_one("#universe-filter").value == "NVDA"
        assert [r["ticker"] for r in app.screen.shown][0] == "NVDA"
        await pilot.press("enter")
        await settle(pilot)

        screen = app.screen
        assert type(screen).__name__ == "CompanyScreen" and screen.ticker == "NVDA"
        qs = quarters(con, "NVDA")
        latest = qs[-1]["key"]
        label = str(screen.query_one("#company-quarter").content)
        assert latest in label and str(qs[-1]["period_end"]) in label
        assert screen.view["quarter"]["key"] == latest
        assert "PIT as of" in str(screen.query_one("#company-badge").content)
        view = quarter_view(con, "NVDA", latest)
        assert _table_rows(screen) == display_rows(view)
        for cells, r in zip(_table_rows(screen), view["rows"], strict=True):
            if r["value"] is not None:
                assert float(cells[1]) == pytest.approx(r["value"], abs=5e-5)
        charts = list(screen.query(SeriesChart))
        assert len(charts) == 4 and all(c.points > 0 for c in charts)
        assert all(c.series["dates"][-1] <= view["as_of"] for c in charts)

        await pilot.press("left")
        await settle(pilot)
        assert screen.view["quarter"]["key"] == qs[-2]["key"]
        assert qs[-2]["key"] in str(screen.query_one("#company-quarter").content)
        assert _table_rows(screen) == display_rows(quarter_view(con, "NVDA", qs[-2]["key"]))
        await pilot.press("left", "left", "right")
        await settle(pilot)
        assert screen.view["quarter"]["key"] == qs[-3]["key"]
        await pilot.press("right", "right", "right")  # past the latest: stays there
        await settle(pilot)
        assert screen.view["quarter"]["key"] == latest
        assert ("q", "company.questions") in {(b.key, b.id) for b in screen.BINDINGS}

        await pilot.press("escape")  # back to the universe
        assert type(app.screen).__name__ == "UniverseScreen"


async def test_unknown_ticker_is_shown_in_place(cfg: Config) -> None:
    from fintrade_tui.ui.app import FinTradeApp

    app = FinTradeApp(cfg)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        sent = notices(app)
        await goto(pilot, "company", ticker="ZZZZ")
        assert type(app.screen).__name__ == "CompanyScreen"
        assert "not in the store" in str(app.screen.query_one("#company-quarter").content)
        assert any("ZZZZ" in m for m in sent)
        await pilot.press("left", "right")  # nothing loaded: the keys do nothing, no crash
        assert app.is_running


async def test_every_key_is_a_palette_command(cfg: Config) -> None:
    """ctrl+p lists the screen's and the app's keys (hidden ones too); choosing one runs it."""
    from fintrade_tui.ui.app import FinTradeApp

    app = FinTradeApp(cfg)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        await goto(pilot, "company", ticker="AAPL", quarter="FY2024 Q4")
        names = {c.title: c.help for c in app.get_system_commands(app.screen)}
        for title in ("Prev quarter", "Latest", "Questions", "Results", "Quit"):
            assert title in names, title
        assert names["Latest"] == "key end"
        before = app.screen.view["quarter"]["key"]
        await pilot.press("ctrl+p")
        await pilot.press(*"Prev quarter")
        await until(pilot, lambda: _palette_highlight(app) == "Prev quarter", what="the match")
        await pilot.press("enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "CompanyScreen"
        assert app.screen.view["quarter"]["key"] != before
        assert app.screen.view["quarter"]["key"] < before


def test_company_snapshot(cfg: Config, snap_compare) -> None:
    """AAPL FY2024 Q4: header with the PIT badge, fundamentals table, four charts."""
    from fintrade_tui.ui.app import FinTradeApp

    app = FinTradeApp(cfg)

    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.screen.query_one("#universe-filter").cursor_blink = False
        await goto(pilot, "company", ticker="AAPL", quarter="FY2024 Q4")
        await tables_measured(pilot)  # every table has drawn its rows before the picture

    assert snap_compare(app, terminal_size=(160, 48), run_before=run_before)
