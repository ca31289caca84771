"""`pull` against hand-written EDGAR and Yahoo fixtures served by a fake fetcher (no network)."""

from __future__ import annotations

import gzip
import io
import json
import urllib.error
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.cli import pull as cli_pull
from fintrade_tui.errors import UserError
from fintrade_tui.ingest import filings as filing_io
from fintrade_tui.ingest import prices as price_io
from fintrade_tui.ingest.http import FetchError, HttpFetcher
from fintrade_tui.ingest.pull import chart_rows, pull
from tests.conftest import write_config

DATA = Path(__file__).resolve().parent.parent / "data" / "pull"
ARCHIVE = "https://www.sec.gov/Archives/edgar/data/1234567"
CHART = "https://query1.finance.yahoo.com/v8/finance/chart/ACME"
ROUTES = {
    "https://www.sec.gov/files/company_tickers.json": "company_tickers.json",
    "https://data.sec.gov/submissions/CIK0001234567.json": "CIK0001234567.json",
    f"{ARCHIVE}/000123456724000012/acme-20240330.htm": "acme-20240330.htm.txt",
    f"{ARCHIVE}/000123456723000044/acme-20230930.htm": "acme-20230930.htm.txt",
    CHART: "chart_ACME.json",
}
TEN_K = "fintradebench/filings/ACME/10-K_2023-11-03_0001234567-23-000044.htm"
TEN_Q = "fintradebench/filings/ACME/10-Q_2024-05-03_0001234567-24-000012.htm"
ALL_FILES = {"reference/company_tickers.json", TEN_K, TEN_Q, "prices-yahoo/ACME.csv"}
TODAY = date(2024, 4, 15)


class FakeFetcher:
    """Serves fixture files by URL (query string ignored) and records every request."""

    def __init__(self, overrides: dict[str, bytes | FetchError] | None = None) -> None:
        self.calls: list[str] = []
        self.overrides = overrides or {}

    def get(self, url: str) -> bytes:
        self.calls.append(url)
        key = url.split("?")[0]
        hit = self.overrides.get(key)
        if isinstance(hit, FetchError):
            raise hit
        if hit is not None:
            return hit
        if key not in ROUTES:
            raise FetchError(url, 404, "Not Found")
        return (DATA / ROUTES[key]).read_bytes()


def _files(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}


def test_pull_writes_the_bundle_layout(tmp_path: Path) -> None:
    fake = FakeFetcher()
    res = pull(fake, tmp_path, ["acme"], today=TODAY)
    assert _files(tmp_path) == ALL_FILES  # no temp files left behind
    assert {str(f.path.relative_to(tmp_path)) for f in res.written} == ALL_FILES
    assert (tmp_path / "reference/company_tickers.json").read_bytes() == (
        DATA / "company_tickers.json"
    ).read_bytes()
    # the 8-K is filtered from the submissions list, never downloaded
    assert not any("8k" in u for u in fake.calls)
    assert len(fake.calls) == 5
    chart_url = next(u for u in fake.calls if u.startswith(CHART))
    assert "period1=0&period2=1713225600&interval=1d" in chart_url  # 2024-04-16 00:00 UTC
    # ingest's own discovery finds what pull wrote
    assert [p.name for p in filing_io.discover(tmp_path)] == [Path(TEN_K).name, Path(TEN_Q).name]
    assert price_io.discover(tmp_path) == [
        ("prices-yahoo", "ACME", tmp_path / "prices-yahoo/ACME.csv")
    ]


def test_prices_round_trip_through_read_price_file(tmp_path: Path) -> None:
    pull(FakeFetcher(), tmp_path, ["ACME"], filings=False, today=TODAY)
    pf = price_io.read_price_file("prices-yahoo", "ACME", tmp_path / "prices-yahoo/ACME.csv")
    df = pf.frame
    # 30 bars, the one of 2024-03-15 (index 10) has a null close and is dropped
    assert len(df) == 29
    assert date(2024, 3, 15) not in set(df["date"])
    first, last = df.iloc[0], df.iloc[-1]
    assert first["date"] == date(2024, 3, 1)
    assert list(first[price_io.COLUMNS]) == [99.5, 101.0, 99.0, 100.0, 98.0, 1_000_000]
    assert last["date"] == date(2024, 4, 12)  # bar 29: close 100 + 29
    assert list(last[price_io.COLUMNS]) == [128.5, 130.0, 128.0, 129.0, 127.0, 1_029_000]
    assert date(2024, 3, 29) not in set(df["date"])  # Good Friday: no bar in the fixture
    header = (tmp_path / "prices-yahoo/ACME.csv").read_text().splitlines()[0]
    assert header == "Date,Open,High,Low,Close,Adj Close,Volume"


def test_pulled_filing_parses(tmp_path: Path) -> None:
    pull(FakeFetcher(), tmp_path, ["ACME"], prices=False, today=TODAY)
    filing, facts = filing_io.parse_filing(tmp_path / TEN_Q)
    assert filing["accession"] == "0001234567-24-000012"
    assert (filing["form"], filing["filed"], filing["ticker"]) == ("10-Q", date(2024, 5, 3), "ACME")
    assert (filing["fiscal_year"], filing["fiscal_period"], filing["cik"]) == (2024, "Q2", 1234567)
    assert filing["period_end"] == date(2024, 3, 30)
    by = {f["concept"]: f["value"] for f in facts}
    assert by["RevenueFromContractWithCustomerExcludingAssessedTax"] == 1_234_000_000
    assert by["Assets"] == 5_678_000_000
    k, _ = filing_io.parse_filing(tmp_path / TEN_K)
    assert (k["form"], k["fiscal_period"], k["period_end"]) == ("10-K", "FY", date(2023, 9, 30))


def test_second_run_writes_nothing(tmp_path: Path) -> None:
    pull(FakeFetcher(), tmp_path, ["ACME"], today=TODAY)
    mtimes = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    fake = FakeFetcher()
    res = pull(fake, tmp_path, ["ACME"], today=TODAY)
    assert res.written == []
    assert len(res.skipped) == len(ALL_FILES)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == mtimes
    # only the submissions list is asked for: it is what names the filings
    assert fake.calls == ["https://data.sec.gov/submissions/CIK0001234567.json"]
    forced = pull(FakeFetcher(), tmp_path, ["ACME"], today=TODAY, force=True)
    assert len(forced.written) == len(ALL_FILES)


def test_since_filters_filings_and_prices(tmp_path: Path) -> None:
    fake = FakeFetcher()
    pull(fake, tmp_path, ["ACME"], since=date(2024, 1, 1), today=TODAY)
    assert TEN_K not in _files(tmp_path) and TEN_Q in _files(tmp_path)
    assert any("period1=1704067200&" in u for u in fake.calls)  # 2024-01-01 00:00 UTC


def test_unknown_ticker_names_it(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="NOPE") as exc:
        pull(FakeFetcher(), tmp_path, ["ACME", "nope"], today=TODAY)
    assert "company_tickers.json" in str(exc.value)
    # every ticker is resolved before any download
    assert _files(tmp_path) == {"reference/company_tickers.json"}


def test_http_errors_name_ticker_url_and_fix(tmp_path: Path) -> None:
    gone = FakeFetcher({CHART: FetchError(CHART, 404, "Not Found")})
    with pytest.raises(UserError) as exc:
        pull(gone, tmp_path, ["ACME"], filings=False, today=TODAY)
    msg = str(exc.value)
    assert "ACME prices" in msg and CHART in msg and "--no-prices" in msg and "\n" not in msg
    url = "https://www.sec.gov/files/company_tickers.json"
    denied = FakeFetcher({url: FetchError(url, 403, "Forbidden")})
    with pytest.raises(UserError, match="pull.user_agent"):
        pull(denied, tmp_path, ["ACME"], today=TODAY)


def test_malformed_json_and_truncated_filing(tmp_path: Path) -> None:
    bad = FakeFetcher({CHART: b"<html>rate limited</html>"})
    with pytest.raises(UserError, match="ACME prices.*malformed JSON"):
        pull(bad, tmp_path, ["ACME"], filings=False, today=TODAY)
    odd = FakeFetcher({CHART: b'{"chart": {"result": [{"timestamp": [1]}]}}'})
    with pytest.raises(UserError, match="unexpected JSON layout"):
        pull(odd, tmp_path, ["ACME"], filings=False, today=TODAY)
    cut = (DATA / "acme-20240330.htm.txt").read_bytes()[:-200]
    short = FakeFetcher({f"{ARCHIVE}/000123456724000012/acme-20240330.htm": cut})
    with pytest.raises(UserError, match="truncated"):
        pull(short, tmp_path, ["ACME"], prices=False, today=TODAY)
    assert TEN_Q not in _files(tmp_path)


def test_chart_rows_keep_last_bar_per_day_and_drop_bad_ones() -> None:
    day = 1712583000  # 2024-04-08 13:30 UTC
    doc = {
        "chart": {
            "result": [
                {
                    "meta": {"gmtoffset": -14400},
                    "timestamp": [day, day + 86400, day + 86400 + 3600, day + 2 * 86400],
                    "indicators": {
                        "quote": [
                            {
                                "open": [1.0, 2.0, 2.5, 0.0],
                                "high": [1.0, 2.0, 2.5, 3.0],
                                "low": [1.0, 2.0, 2.5, 3.0],
                                "close": [1.0, 2.0, 2.5, 3.0],
                                "volume": [10, 20, 25, 30],
                            }
                        ],
                        "adjclose": [{"adjclose": [1.0, 2.0, 2.5, 3.0]}],
                    },
                }
            ]
        }
    }
    rows = chart_rows(doc, "u", "X")
    assert rows == [
        ["2024-04-08", 1.0, 1.0, 1.0, 1.0, 1.0, 10],
        ["2024-04-09", 2.5] + [2.5] * 4 + [25],
    ]
    doc["chart"] = {"result": None, "error": {"code": "Not Found", "description": "delisted"}}
    with pytest.raises(UserError, match="Yahoo says delisted"):
        chart_rows(doc, "u", "X")


class _Resp(io.BytesIO):
    def __init__(self, body: bytes, encoding: str | None = None) -> None:
        super().__init__(body)
        self.headers = {"Content-Encoding": encoding} if encoding else {}


def test_http_fetcher_user_agent_rate_limit_and_errors() -> None:
    seen, sleeps, now = [], [], [100.0]

    def opener(req, timeout):
        seen.append(req)
        if "missing" in req.full_url:
            raise urllib.error.HTTPError(req.full_url, 404, "Not Found", {}, None)
        return _Resp(gzip.compress(b"{}"), "gzip")

    clock = lambda: now[0]  # noqa: E731
    f = HttpFetcher("Jane <jane@example.com>", 50, opener=opener, clock=clock, sleep=sleeps.append)
    assert f.get("https://data.sec.gov/submissions/CIK0000000001.json") == b"{}"
    assert f.get("https://query1.finance.yahoo.com/v8/finance/chart/X") == b"{}"
    assert seen[0].get_header("User-agent") == "Jane <jane@example.com>"
    assert "Jane" in seen[1].get_header("User-agent")
    assert sleeps == [pytest.approx(0.1)]  # 50/s asked, SEC's 10/s enforced
    with pytest.raises(FetchError) as exc:
        f.get("https://www.sec.gov/missing")
    assert exc.value.status == 404


def _cli(monkeypatch, *args: str, fake: FakeFetcher | None = None):
    monkeypatch.setattr(cli_pull, "make_fetcher", lambda cfg: fake or FakeFetcher())
    return CliRunner().invoke(main, ["pull", *args])


def test_cli_pull_json_and_default_out(tmp_path: Path, monkeypatch) -> None:
    cfg = write_config(tmp_path / "cfg", tmp_path / "ro-bundle", tmp_path / "cfg/data/s.duckdb")
    monkeypatch.setattr(cli_pull, "make_fetcher", lambda cfg: FakeFetcher())
    res = CliRunner().invoke(
        main, ["--config", str(cfg), "pull", "-t", "ACME", "--since", "2024-01-01", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = tmp_path / "cfg/data/bundle"  # next to the store, never the configured bundle
    data = json.loads(res.stdout)
    assert data["out"] == str(out) and data["skipped"] == []
    assert sorted(data["written"]) == sorted(str(out / p) for p in ALL_FILES if p != TEN_K)
    again = CliRunner().invoke(main, ["--config", str(cfg), "pull", "-t", "ACME"])
    assert again.exit_code == 0, again.output
    assert "written" in again.output and "Traceback" not in again.output


@pytest.mark.parametrize(
    "args, needle",
    [
        (["-t", "ACME", "-t", "bad!"], "'bad!'"),
        (["-t", "NOPE", "--no-prices"], "NOPE"),
        (["-t", "ACME", "--since", "2024-13-01"], "--since"),
        (["-t", "ACME", "--no-prices", "--no-filings"], "nothing to pull"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path, monkeypatch, args, needle) -> None:
    res = _cli(monkeypatch, "--out", str(tmp_path / "b"), *args)
    assert res.exit_code == 2, res.output
    line = res.output.strip()
    assert line.startswith("error:") and "\n" not in line and "Traceback" not in res.output
    assert needle in line


def test_stale_local_map_is_refreshed_once(tmp_path: Path) -> None:
    ref = tmp_path / "reference/company_tickers.json"
    ref.parent.mkdir(parents=True)
    ref.write_text('{"0": {"cik_str": 1111111, "ticker": "GLBX", "title": "Globex Corp"}}')
    fake = FakeFetcher()
    pull(fake, tmp_path, ["ACME"], prices=False, today=TODAY)
    assert fake.calls[0] == "https://www.sec.gov/files/company_tickers.json"
    assert ref.read_bytes() == (DATA / "company_tickers.json").read_bytes()


def test_older_submission_pages_and_non_inline_filings(tmp_path: Path) -> None:
    sub = json.loads((DATA / "CIK0001234567.json").read_text())
    sub["filings"]["files"] = [
        {"name": "CIK0001234567-submissions-001.json", "filingTo": "2018-12-31"},
        {"name": "CIK0001234567-submissions-002.json", "filingTo": "2020-03-01"},
    ]
    page = {  # a 10-K from before the filer adopted inline XBRL: ingest could not parse it
        "accessionNumber": ["0001234567-19-000031"],
        "filingDate": ["2019-11-01"],
        "form": ["10-K"],
        "primaryDocument": ["acme-10k2019.htm"],
        "isInlineXBRL": [0],
    }
    base = "https://data.sec.gov/submissions/"
    fake = FakeFetcher(
        {
            f"{base}CIK0001234567.json": json.dumps(sub).encode(),
            f"{base}CIK0001234567-submissions-002.json": json.dumps(page).encode(),
        }
    )
    res = pull(fake, tmp_path, ["ACME"], prices=False, today=TODAY)
    assert f"{base}CIK0001234567-submissions-002.json" in fake.calls
    assert not any("submissions-001" in u or "10k2019" in u for u in fake.calls)  # pre-iXBRL
    assert res.notes == ["ACME: 1 10-K/10-Q without inline XBRL skipped"]
    assert {str(f.path.relative_to(tmp_path)) for f in res.written} - {
        "reference/company_tickers.json"
    } == {TEN_K, TEN_Q}
