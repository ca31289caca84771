"""SEC point-in-time fundamentals for the whole index: values read from the bundle's CSVs in the
tests (never constants copied from the code), available from their filing date and not a day
earlier, agreeing with the filings where both exist, stale rows withheld with the reason, the
seeds' coverage before and after, and 500 snapshots (random days, filing days and the days
before them) that never see the future."""

from __future__ import annotations

import csv
import random
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.store.company import quarter_view
from fintrade_tui.store.company_text import display_rows
from fintrade_tui.store.queries import fundamentals_as_of, snapshot
from tests.conftest import BUNDLE, needs_bundle, write_config

SEC = BUNDLE / "fundamentals-sec"
SEEDS = BUNDLE / "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"
D = date.fromisoformat


def _csv(ticker: str) -> list[dict[str, str]]:
    return list(csv.DictReader((SEC / f"{ticker}.csv").open(encoding="utf-8")))


def _row(ticker: str, period_end: str) -> dict[str, str]:
    return next(r for r in _csv(ticker) if r["period_end"] == period_end)


def test_msft_quarter_to_2025_06_30_roa_from_the_file_available_from_its_filing(con) -> None:
    r = _row("MSFT", "2025-06-30")
    filed = D(r["available_date"])
    view = quarter_view(con, "MSFT", "2025-06-30")
    assert view["quarter"]["period_end"] == D("2025-06-30") and view["as_of"] == filed
    roa = next(x for x in view["rows"] if x["ratio"] == "roa")
    assert roa["value"] == pytest.approx(float(r["net_income"]) / float(r["total_assets"]))
    assert (roa["source"], roa["filed"], roa["period_end"]) == ("sec_pit", filed, D("2025-06-30"))
    # the day before its filing, the quarter's ROA does not exist yet
    before = fundamentals_as_of(con, "MSFT", filed - timedelta(days=1))["roa"]
    assert before["period_end"] < D("2025-06-30") and before["filed"] < filed


@pytest.mark.parametrize("ticker", ["MSFT", "COST", "PEP", "QCOM"])
def test_members_without_filings_show_roa_and_roe_for_their_2025_quarters(con, ticker) -> None:
    rows = [r for r in _csv(ticker) if r["period_end"].startswith("2025")]
    assert rows
    for r in rows:
        view = quarter_view(con, ticker, r["period_end"])
        got = {x["ratio"]: x for x in view["rows"]}
        assert got["roa"]["value"] == pytest.approx(
            float(r["net_income"]) / float(r["total_assets"])
        )
        assert got["roa"]["source"] == "sec_pit" and got["roa"]["filed"] == D(r["available_date"])
        text = {cells[0]: cells for cells in display_rows(view)}
        assert text["ROA"][5] == f"vendor, filed {r['available_date']}"
        if ticker == "QCOM":  # its equity is carried forward unchanged: no ROE, and why
            assert got["roe"]["value"] is None and "stale_carry_forward" in got["roe"]["gap"]
            assert text["ROE"][6].startswith("∅") and "unchanged for" in text["ROE"][6]
        else:
            assert got["roe"]["value"] == pytest.approx(float(r["net_income"]) / float(r["equity"]))


def test_avgo_has_no_sec_rows_after_2019_and_says_so(con) -> None:
    assert max(r["period_end"] for r in _csv("AVGO")) < "2020"
    view = quarter_view(con, "AVGO", "2025-08-03")
    got = {x["ratio"]: x for x in view["rows"]}
    assert got["roa"]["value"] is None and "no source has a newer one" in got["roa"]["gap"]
    assert got["earnings_price"]["source"] == "polygon"  # the vendor that does have 2025


def test_sec_pit_agrees_with_the_filings_for_aapl_and_nvda(con) -> None:
    rows = con.execute(
        """SELECT ticker, item, status, value_a, value_b FROM reconciliation
        WHERE source_a = 'filing' AND source_b = 'sec_pit' AND ticker IN ('AAPL', 'NVDA')
          AND item IN ('net_income', 'total_assets')"""
    ).fetchall()
    assert {(t, i) for t, i, *_ in rows} == {
        (t, i) for t in ("AAPL", "NVDA") for i in ("net_income", "total_assets")
    }
    assert all(status == "agree" for _, _, status, _, _ in rows), rows
    # the bundle README's own figures for AAPL 2024-09-28 are in both
    r = _row("AAPL", "2024-09-28")
    assert (float(r["net_income"]), float(r["total_assets"])) == (14_736e6, 364_980e6)
    (ni,) = con.execute(
        """SELECT value FROM quarter_inputs WHERE ticker = 'AAPL' AND item = 'net_income'
        AND period_end = DATE '2024-09-28'"""
    ).fetchone()
    assert ni == 14_736e6
    rank = dict(con.execute("SELECT source, rate FROM source_rank").fetchall())
    assert rank["sec_pit"] == 1.0


@needs_bundle
def test_ingest_prints_each_sources_agreement_with_the_filings(tmp_path: Path, mini_bundle) -> None:
    # the mini bundle's one AAPL 10-Q, and the real AAPL fundamentals-sec file beside it
    (mini_bundle / "fundamentals-sec").mkdir()
    (mini_bundle / "fundamentals-sec" / "AAPL.csv").write_bytes((SEC / "AAPL.csv").read_bytes())
    cfg = write_config(tmp_path / "cfg", mini_bundle)
    res = CliRunner().invoke(main, ["--config", str(cfg), "ingest"])
    assert res.exit_code == 0, res.output
    assert "agreement with the filings" in res.output
    line = next(x for x in res.output.splitlines() if x.strip().startswith("sec_pit"))
    agreed, compared = line.split()[2].split("/")
    assert int(compared) > 0 and agreed == compared and "(100.0%)" in line


def test_stale_rows_really_repeat_and_their_roe_is_never_computed(con) -> None:
    found = con.execute(
        """SELECT ticker, period_end, file, line FROM quality_findings
        WHERE "check" = 'stale_carry_forward' AND item = 'equity'"""
    ).fetchall()
    tickers = {t for t, *_ in found}
    assert {"QCOM", "CSX"} <= tickers
    for _, end, file, line in found:
        rows = list(csv.reader(Path(file).read_text(encoding="utf-8").splitlines()))
        header, row, prev = rows[0], rows[line - 1], rows[line - 2]
        assert row[header.index("period_end")] == str(end)
        eq = header.index("equity")
        assert row[eq] and float(row[eq]) == float(prev[eq])  # the value of the quarter before
    computed = con.execute(
        """SELECT count(*) FROM fundamentals f JOIN quality_findings q
          ON q.ticker = f.ticker AND q.period_end = f.period_end AND q.item = 'equity'
         AND q."check" = 'stale_carry_forward'
        WHERE f.source = 'sec_pit' AND f.ratio IN ('roe', 'book_price') AND f.value IS NOT NULL"""
    ).fetchone()[0]
    assert computed == 0


def _coverage(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    r = Resolver(con, date(2025, 9, 30))
    return {q.id: r.evidence(r.resolve(q)).coverage for q in read_questions(SEEDS)}


def _without_sec_pit(store: Path) -> duckdb.DuckDBPyConnection:
    """The store as it was before sec_pit: the same tables, without its rows."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{store}' AS s (READ_ONLY)")
    for (name,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = 's'"
    ).fetchall():
        if name == "sec_pit_rows":
            continue
        where = " WHERE source <> 'sec_pit'" if name == "fundamentals" else ""
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM s.{name}{where}")
    return con


@pytest.mark.long  # resolves every seed against two stores (tests/conftest.py LONG_FILES)
def test_seed_coverage_rises_and_no_seed_loses_any(built_store, con) -> None:
    before = _coverage(_without_sec_pit(built_store.store))
    after = _coverage(con)
    order = {"none": 0, "partial": 1, "full": 2}
    full_before = sum(v == "full" for v in before.values())
    full_after = sum(v == "full" for v in after.values())
    assert full_before <= 40 and full_after >= 55, (full_before, full_after)
    assert [q for q in before if order[after[q]] < order[before[q]]] == []


@pytest.mark.long  # a sweep: snapshots of every SEC ticker at random days
def test_random_snapshots_never_use_a_sec_row_filed_after_their_date(con) -> None:
    first: dict[tuple[str, str], str] = {}  # (ticker, period_end) -> the earliest day the file
    for p in SEC.glob("*.csv"):  # makes the row available
        for r in csv.DictReader(p.open(encoding="utf-8")):
            key = (p.stem, r["period_end"])
            first[key] = min(first.get(key, r["available_date"]), r["available_date"])
    known = {t for (t,) in con.execute("SELECT DISTINCT ticker FROM prices").fetchall()}
    tickers = sorted({t for t, _ in first} & known)
    rng = random.Random(15)
    # 200 days at random, and 150 rows' filing days with the day before each: a row used a day
    # early shows on exactly those days, so these 500 snapshots probe harder than 1,000 at random
    days = [(rng.choice(tickers), date(2010, 1, 1) + timedelta(days=rng.randrange(16 * 365)), "")
            for _ in range(200)]  # fmt: skip
    for t, end, filed in rng.sample(
        sorted((*k, d) for k, d in first.items() if k[0] in known), 150
    ):
        days += [(t, D(filed) - timedelta(days=1), ""), (t, D(filed), end)]
    seen = fresh = 0
    for t, day, end in days:
        used = set()
        for name, v in snapshot(con, t, day)["fundamentals"].items():
            if v and v["source"] == "sec_pit":
                seen += 1
                used.add(str(v["period_end"]))
                assert v["filed"] <= day, (t, day, name)
                assert first[(t, str(v["period_end"]))] <= str(day), (t, day, name)
        fresh += end in used  # on its filing day the row is used
    assert seen > len(days)  # the property was exercised, not vacuous
    assert fresh > 100, fresh  # and the filing days do reach the rows filed on them


def test_the_oracle_and_the_audit_say_when_a_value_was_contested(con) -> None:
    from fintrade_tui.audits.numeric import audit
    from fintrade_tui.workspace.questions import Question

    nov1 = date(2024, 11, 1)
    (paper,) = con.execute(  # the paper's own ROE for the same report, which differs
        """SELECT value FROM fundamentals WHERE ticker = 'AAPL' AND ratio = 'roe'
        AND source = 'fintradebench_precomputed' AND available_from = ?""",
        [nov1],
    ).fetchone()
    roe = snapshot(con, "AAPL", nov1)["fundamentals"]["roe"]
    assert (
        roe["source"] == "filing" and f"fintradebench_precomputed {paper:.4g}" in roe["contested"]
    )
    q = Question("q", "jsonl", "F", "How profitable is Apple?", tickers=["AAPL"], as_of=nov1)
    (c,) = audit(f"Apple's ROE is {roe['value']:.4f}.", q, con)["claims"]
    assert c["verdict"] == "SUPPORTED" and "contested: fintradebench_precomputed" in c["source"]
    r = Resolver(con, date(2025, 9, 30))
    oracle = r.evidence(r.resolve(Question("o", "jsonl", "F", "Apple's ROE as of Nov 1, 2024?",
                                           golden_raw=["ROE"]))).oracle  # fmt: skip
    assert oracle["AAPL"]["roe"]["contested"] == roe["contested"]


def test_quality_lists_each_finding_with_its_file_line_and_reason(built_store) -> None:
    import json

    config = ["--config", str(built_store.source_file)]
    res = CliRunner().invoke(main, [*config, "quality", "QCOM", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    stale = [f for f in out["findings"] if f["check"] == "stale_carry_forward"]
    assert out["counts"]["stale_carry_forward"] == len(stale) > 0
    for f in stale:  # the line it names is that quarter's row of QCOM.csv
        assert f["file"].endswith("QCOM.csv") and "unchanged for" in f["reason"]
        line = (SEC / "QCOM.csv").read_text(encoding="utf-8").splitlines()[f["line"] - 1]
        assert line.split(",")[1] == f["period_end"]
    assert out["agreement"][0]["source"] == "filing"
    bad = CliRunner().invoke(main, [*config, "quality", "--check", "x"])
    assert bad.exit_code == 2 and "is not a check" in bad.output


def test_bad_sec_files_and_rows_are_quarantined_the_rest_kept(tmp_path: Path) -> None:
    from fintrade_tui.fundamentals import sec_pit

    folder = tmp_path / "fundamentals-sec"
    folder.mkdir()
    (folder / "NODATE.csv").write_text("ticker,period_end,net_income\nNODATE,2024-03-31,1\n")
    (folder / "SOME.csv").write_text(
        "ticker,period_end,available_date,net_income,total_assets\n"
        "SOME,2024-03-31,2024-04-30,5,100\n"
        "SOME,2024-06-31,2024-07-30,6,110\n"  # June has 30 days
        "SOME,2024-09-30,2024-10-30,,120\n"
    )
    rows, bad = sec_pit.read(tmp_path)
    assert sorted(rows["period_end"].astype(str)) == ["2024-03-31", "2024-09-30"]
    assert rows["equity"].isna().all() and rows["net_income"].isna().sum() == 1  # NULL, not 0
    reasons = {b.ticker: b.reason for b in bad}
    assert reasons["NODATE"].startswith("no available_date column")
    assert reasons["SOME"].startswith("1 row(s) with a missing or bad date (line 3)")


def test_a_store_of_another_format_is_refused_and_rebuilt_only_when_outdated(
    tmp_path: Path, mini_bundle
) -> None:
    from fintrade_tui.errors import UserError
    from fintrade_tui.store.db import STORE_VERSION, connect, current

    # the format is the store's, not the filings': prices alone build it, without the ~2 s
    # parse of the mini bundle's filing at each of the two builds
    for filing in (mini_bundle / "fintradebench/filings/AAPL").glob("*.htm"):
        filing.unlink()
    cfg = write_config(tmp_path / "cfg", mini_bundle)
    store = tmp_path / "cfg" / "store.duckdb"
    run = lambda *a: CliRunner().invoke(main, ["--config", str(cfg), *a])  # noqa: E731
    assert run("ingest", "--if-outdated").exit_code == 0 and current(store)
    again = run("ingest", "--if-outdated")
    assert "not rebuilt" in again.output
    with duckdb.connect(str(store)) as con:  # as a store of the previous format says
        con.execute("UPDATE meta SET value = '1' WHERE key = 'store_version'")
    with pytest.raises(UserError, match="run `fintrade-tui ingest` to rebuild it"):
        connect(store)
    assert not current(store)
    assert "not rebuilt" not in run("ingest", "--if-outdated").output
    with connect(store) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone() == (
            STORE_VERSION,
        )
