"""Bad bundle input: one line naming the file/row (exit 2), and the previous store intact."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from tests.conftest import AAPL_10Q3, needs_bundle, write_config


def _ingest(cfg: Path, *extra: str):
    return CliRunner().invoke(main, ["--config", str(cfg), "ingest", *extra])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _bundle_digest(bundle: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(bundle.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(bundle)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def ingested() -> dict[str, Path]:
    """Good stores already ingested in this module, by their bundle's content."""
    return {}


@pytest.fixture
def good_store(
    tmp_path: Path,
    mini_bundle: Path,
    ingested: dict[str, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, str]:
    """The mini bundle's store, ingested by the first test; the others get a copy of it.
    `mini_bundle` is byte for byte the same in every test (seeded prices, the same filing), so
    the copy is the store an ingest here would build (only its filings' `path` names the first
    test's bundle, which no test reads); each test still edits its own bundle and store."""
    cfg = write_config(tmp_path / "cfg", mini_bundle)
    store = tmp_path / "cfg" / "store.duckdb"
    key = _bundle_digest(mini_bundle)
    if key in ingested:
        shutil.copyfile(ingested[key], store)
    else:
        res = _ingest(cfg)
        assert res.exit_code == 0, res.output
        ingested[key] = tmp_path_factory.mktemp("good-store") / "store.duckdb"
        shutil.copyfile(store, ingested[key])
    return cfg, store, _digest(store)


def _assert_fails_cleanly(cfg: Path, store: Path, digest: str, *needles: str, extra=()) -> None:
    res = _ingest(cfg, *extra)
    assert res.exit_code == 2, res.output
    line = res.output.strip()
    assert "\n" not in line and "Traceback" not in res.output
    for n in needles:
        assert n in line, (n, line)
    assert _digest(store) == digest  # the previous store is untouched
    assert not list(store.parent.glob(".store.duckdb.building*"))


def test_mini_bundle_builds_a_merged_series(good_store) -> None:
    _, store, _ = good_store
    con = duckdb.connect(str(store), read_only=True)
    rows = con.execute(
        "SELECT source, count(*), min(adj_factor), max(close_factor) FROM prices"
        " WHERE ticker = 'AAPL' GROUP BY 1 ORDER BY 1"
    ).fetchall()
    # yahoo first (days 0-1299), then prices-2020 adds days 1300-1499 rescaled by the 4:1 split
    assert rows[0][:2] == ("prices-2020", 200) and rows[1] == ("prices-yahoo", 1300, 1.0, 1.0)
    assert rows[0][3] == pytest.approx(4.0)
    assert rows[0][2] == pytest.approx(4 / 1.01)
    member = con.execute("SELECT * FROM index_membership ORDER BY ticker").fetchall()
    assert ("XYZ", None, pd.Timestamp("2010-01-04").date()) in member
    assert ("MSFT", pd.Timestamp("2010-01-04").date(), None) in member


def _edit_csv(path: Path, fn) -> None:
    df = pd.read_csv(path, dtype=str)
    fn(df).to_csv(path, index=False)


def test_missing_column(good_store, mini_bundle: Path) -> None:
    p = mini_bundle / "prices-yahoo" / "MSFT.csv"
    _edit_csv(p, lambda d: d.drop(columns=["Adj Close"]))
    _assert_fails_cleanly(*good_store, str(p), "Adj Close")


def test_unparseable_date(good_store, mini_bundle: Path) -> None:
    p = mini_bundle / "prices-yahoo" / "MSFT.csv"
    _edit_csv(p, lambda d: d.assign(Date=d["Date"].where(d.index != 9, "2019-13-45")))
    _assert_fails_cleanly(*good_store, str(p), "row 11", "2019-13-45")


def test_duplicated_date(good_store, mini_bundle: Path) -> None:
    p = mini_bundle / "prices-yahoo" / "MSFT.csv"
    _edit_csv(p, lambda d: d.assign(Date=d["Date"].where(d.index != 20, d["Date"][19])))
    _assert_fails_cleanly(*good_store, str(p), "row 22", "duplicated")


def test_non_positive_price(good_store, mini_bundle: Path) -> None:
    p = mini_bundle / "prices-2020" / "AAPL.csv"
    _edit_csv(p, lambda d: d.assign(Close=d["Close"].where(d.index != 4, "-1.5")))
    _assert_fails_cleanly(*good_store, str(p), "row 6", "Close")


@needs_bundle  # the truncated filing is a copy of a real one from the bundle
def test_truncated_filing(good_store, mini_bundle: Path) -> None:
    p = mini_bundle / "fintradebench/filings/AAPL" / AAPL_10Q3.name
    text = p.read_text(encoding="utf-8")
    p.write_text(text[: len(text) // 2], encoding="utf-8")
    _assert_fails_cleanly(*good_store, str(p), "truncated")


def test_other_tickers_prices_are_quarantined(good_store, mini_bundle: Path) -> None:
    cfg, store, digest = good_store
    # prices-2020/MSFT.csv now holds AAPL's rows
    wrong = mini_bundle / "prices-2020" / "MSFT.csv"
    wrong.write_bytes((mini_bundle / "prices-2020" / "AAPL.csv").read_bytes())
    _assert_fails_cleanly(cfg, store, digest, str(wrong), "AAPL's prices", extra=["--strict"])
    res = _ingest(cfg, "--json")
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(store), read_only=True)
    q = con.execute("SELECT file, ticker, reason FROM quarantine").fetchall()
    assert len(q) == 1 and q[0][0] == str(wrong) and q[0][1] == "MSFT"
    assert "holds AAPL's prices" in q[0][2]
    # never mixed in: MSFT's series is the yahoo file alone
    assert con.execute("SELECT DISTINCT source FROM prices WHERE ticker = 'MSFT'").fetchall() == [
        ("prices-yahoo",)
    ]


def test_unknown_ticker_exits_2(good_store) -> None:
    cfg, _, _ = good_store
    res = CliRunner().invoke(
        main, ["--config", str(cfg), "snapshot", "NOPE", "--as-of", "2020-01-02"]
    )
    assert res.exit_code == 2 and "NOPE" in res.output and "Traceback" not in res.output


def test_ingest_is_idempotent(good_store) -> None:
    cfg, store, _ = good_store
    con = duckdb.connect(str(store), read_only=True)
    before = con.execute("SELECT count(*), sum(adj_close) FROM prices").fetchone()
    con.close()
    assert _ingest(cfg).exit_code == 0
    con = duckdb.connect(str(store), read_only=True)
    assert con.execute("SELECT count(*), sum(adj_close) FROM prices").fetchone() == before
