"""Pull room (needs internet): SEC EDGAR 10-K/10-Q filings and Yahoo daily prices, written in
the bundle layout ingest reads: `fintradebench/filings/<T>/<form>_<filed>_<accession>.htm`,
`prices-yahoo/<T>.csv` and `reference/company_tickers.json` (SEC's own format).

All network access goes through a `Fetcher` (`get(url) -> bytes`) so tests inject a fake.
Files are written atomically and existing ones skipped unless `force`, so an interrupted pull
resumes by running it again.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.ingest.filings import NAME
from fintrade_tui.ingest.http import Fetcher, FetchError, write_atomic

TICKERS_URL = "https://www.sec.gov/files/company_tickers.json"
SUBMISSIONS_URL = "https://data.sec.gov/submissions/{name}"
ARCHIVE_URL = "https://www.sec.gov/Archives/edgar/data/{cik}/{folder}/{document}"
CHART_URL = (
    "https://query1.finance.yahoo.com/v8/finance/chart/{symbol}"
    "?period1={start}&period2={end}&interval=1d&events=div,split"
)
FORMS = ("10-K", "10-Q")  # amendments (10-K/A) do not fit the bundle's file-name pattern
PRICE_HEADER = ["Date", "Open", "High", "Low", "Close", "Adj Close", "Volume"]
# Inline XBRL started with filings for periods ending after 2019-06-15; older submission pages
# cannot hold a filing ingest could parse, so they are not fetched.
IXBRL_START = date(2019, 6, 15)
AGAIN = "run pull again later"  # transient failures: a rerun resumes where this one stopped
_TICKER = re.compile(r"^[A-Z0-9.\-]{1,6}$")  # what prices.discover accepts as a file stem


@dataclass
class Outcome:
    ticker: str
    kind: str  # "filing", "prices" or "reference"
    path: Path
    status: str  # "written" or "skipped"
    detail: str = ""


@dataclass
class PullResult:
    out: Path
    files: list[Outcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def written(self) -> list[Outcome]:
        return [f for f in self.files if f.status == "written"]

    @property
    def skipped(self) -> list[Outcome]:
        return [f for f in self.files if f.status == "skipped"]


@dataclass
class _Run:
    fetcher: Fetcher
    out: Path
    since: date | None
    today: date
    force: bool
    result: PullResult
    progress: Callable[[str], None]


def _fetch(fetcher: Fetcher, url: str, where: str, fix_404: str) -> bytes:
    """GET, turning a failure into one line naming what was fetched and how to fix it."""
    try:
        return fetcher.get(url)
    except FetchError as exc:
        fix = {
            None: "check the internet connection",
            403: "set pull.user_agent in config.yaml to 'name email' as SEC requires",
            404: fix_404,
            429: "wait a few minutes, lower pull.requests_per_second, run pull again",
        }.get(exc.status, AGAIN)
        problem = (
            f"HTTP {exc.status} {exc.reason}" if exc.status else f"network error ({exc.reason})"
        )
        raise UserError(f"{where}: {url}", problem, fix) from None


def _json(data: bytes, url: str, where: str) -> Any:
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"{where}: {url}", "returned malformed JSON", AGAIN) from None


def _layout_error(url: str, where: str, what: str) -> UserError:
    return UserError(f"{where}: {url}", f"unexpected JSON layout ({what})", AGAIN)


def cik_map(fetcher: Fetcher, path: Path, fetch: bool) -> dict[str, int]:
    """ticker -> CIK from SEC's company_tickers.json: the copy at `path`, or SEC's (then saved)."""
    url = TICKERS_URL if fetch else str(path)
    data = _fetch(fetcher, url, "SEC ticker map", AGAIN) if fetch else path.read_bytes()
    rows = _json(data, url, "SEC ticker map")
    try:
        mapping = {str(r["ticker"]).upper(): int(r["cik_str"]) for r in rows.values()}
    except (AttributeError, KeyError, TypeError, ValueError):
        raise _layout_error(url, "SEC ticker map", "want {n: {cik_str, ticker, title}}") from None
    if fetch:
        write_atomic(path, data)  # kept byte for byte: SEC's own format
    return mapping


def _cik(mapping: dict[str, int], ticker: str) -> int | None:
    # SEC spells share classes with a dash (BRK-B); users often type a dot
    return mapping.get(ticker) or mapping.get(ticker.replace(".", "-"))


def resolve_ciks(
    fetcher: Fetcher, out: Path, tickers: list[str], result: PullResult, force: bool
) -> dict[str, int]:
    """CIK per ticker; a local map lacking one is refreshed once (it may predate a listing)."""
    path = out / "reference" / "company_tickers.json"
    fetch = force or not path.is_file()
    mapping = cik_map(fetcher, path, fetch)
    if not fetch and any(_cik(mapping, t) is None for t in tickers):
        mapping, fetch = cik_map(fetcher, path, True), True
    result.files.append(Outcome("*", "reference", path, "written" if fetch else "skipped"))
    for t in tickers:
        if _cik(mapping, t) is None:
            raise UserError(
                f"ticker {t}",
                "is not in SEC's company_tickers.json",
                "check the symbol; renamed, delisted and foreign-only tickers are not listed",
            )
    return {t: mapping.get(t) or mapping[t.replace(".", "-")] for t in tickers}


def _rows(table: dict[str, list], url: str, where: str) -> list[dict[str, Any]]:
    """Column-wise EDGAR filing table -> one dict per filing."""
    cols = ("form", "filingDate", "accessionNumber", "primaryDocument")
    try:
        n = len(table["accessionNumber"])
        optional = [c for c in ("reportDate", "isInlineXBRL") if len(table.get(c) or []) == n]
        return [{c: table[c][i] for c in (*cols, *optional)} for i in range(n)]
    except (KeyError, TypeError, IndexError):
        raise _layout_error(url, where, "filings.recent columns") from None


def list_filings(
    fetcher: Fetcher, ticker: str, cik: int, since: date | None
) -> tuple[list[dict[str, Any]], int]:
    """10-K/10-Q filings with inline XBRL filed on or after `since`; and how many lacked it."""
    where = f"{ticker} submissions"
    url = SUBMISSIONS_URL.format(name=f"CIK{cik:010d}.json")
    doc = _json(_fetch(fetcher, url, where, "check the ticker's CIK"), url, where)
    try:
        rows = _rows(doc["filings"]["recent"], url, where)
        pages = doc["filings"].get("files") or []
    except (KeyError, TypeError, AttributeError):
        raise _layout_error(url, where, "no filings.recent") from None
    floor = max(since or IXBRL_START, IXBRL_START)
    # prolific filers (many 424B2 or Form 4) overflow `recent` into extra pages
    for page in pages:
        if not isinstance(page, dict) or not page.get("name"):
            raise _layout_error(url, where, "filings.files entry without a name")
        if str(page.get("filingTo", "9999")) < floor.isoformat():
            continue
        page_url = SUBMISSIONS_URL.format(name=page["name"])
        page_doc = _json(_fetch(fetcher, page_url, where, AGAIN), page_url, where)
        rows += _rows(page_doc, page_url, where)
    wanted, no_ixbrl = [], 0
    for r in rows:
        if r["form"] not in FORMS or (since and r["filingDate"] < since.isoformat()):
            continue
        if not r.get("isInlineXBRL", 1):  # ingest reads facts from inline XBRL only
            no_ixbrl += 1
            continue
        wanted.append(r)
    wanted.sort(key=lambda r: (r["filingDate"], r["accessionNumber"]))
    return wanted, no_ixbrl


def _ticker_dir(root: Path, ticker: str) -> Path:
    """Reuse an existing folder spelled in another case (the sample bundle has `Goog`)."""
    if root.is_dir():
        for p in root.iterdir():
            if p.is_dir() and p.name.upper() == ticker:
                return p
    return root / ticker


def _pull_filings(run: _Run, ticker: str, cik: int) -> None:
    result = run.result
    rows, no_ixbrl = list_filings(run.fetcher, ticker, cik, run.since)
    if no_ixbrl:
        result.notes.append(f"{ticker}: {no_ixbrl} 10-K/10-Q without inline XBRL skipped")
    if not rows and not no_ixbrl:
        result.notes.append(f"{ticker}: no 10-K/10-Q filings (foreign filers file 20-F/6-K)")
    folder = _ticker_dir(run.out / "fintradebench" / "filings", ticker)
    for r in rows:
        name = f"{r['form']}_{r['filingDate']}_{r['accessionNumber']}.htm"
        if not NAME.match(name) or not r["primaryDocument"]:
            result.notes.append(f"{ticker}: filing {r['accessionNumber']} skipped (odd metadata)")
            continue
        path = folder / name
        if path.exists() and not run.force:
            result.files.append(Outcome(ticker, "filing", path, "skipped", "exists"))
            continue
        run.progress(f"{ticker}: {r['form']} filed {r['filingDate']}")
        url = ARCHIVE_URL.format(
            cik=cik, folder=r["accessionNumber"].replace("-", ""), document=r["primaryDocument"]
        )
        body = _fetch(run.fetcher, url, f"{ticker} {r['form']}", AGAIN)
        # the same check ingest makes, so a cut-off download never lands in the bundle
        if not re.search(rb"</html>\s*$", body[-2000:], re.IGNORECASE):
            raise UserError(f"{ticker} {r['form']}: {url}", "download is truncated", AGAIN)
        write_atomic(path, body)
        result.files.append(Outcome(ticker, "filing", path, "written", r.get("reportDate", "")))


def chart_rows(doc: Any, url: str, ticker: str) -> list[list[Any]]:
    """Yahoo chart JSON -> CSV rows; bars with a null or non-positive value are dropped."""
    where = f"{ticker} prices"
    try:
        chart = doc["chart"]
        if chart.get("error"):
            err = chart["error"]
            raise UserError(
                f"{where}: {url}",
                f"Yahoo says {err.get('description') or err.get('code')}",
                "check the symbol on finance.yahoo.com or pass --no-prices",
            )
        res = chart["result"][0]
        stamps = res.get("timestamp") or []
        quote = res["indicators"]["quote"][0]
        adj = res["indicators"]["adjclose"][0]["adjclose"]
        cols = [quote["open"], quote["high"], quote["low"], quote["close"], adj, quote["volume"]]
        offset = int(res.get("meta", {}).get("gmtoffset") or 0)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError):
        raise _layout_error(url, where, "want chart.result[0] with quote and adjclose") from None
    if any(len(c) != len(stamps) for c in cols):
        raise _layout_error(url, where, "columns differ in length")
    by_day: dict[str, list[Any]] = {}
    for i, ts in enumerate(stamps):
        values = [c[i] for c in cols]
        if any(v is None for v in values):
            continue
        if not all(isinstance(v, int | float) for v in values):
            raise _layout_error(url, where, f"non-numeric value in bar {i}")
        if any(v <= 0 for v in values[:5]):  # read_price_file rejects them; volume may be 0
            continue
        # the exchange's local date, not UTC (bars are stamped at the local open)
        day = datetime.fromtimestamp(ts + offset, UTC).date().isoformat()
        by_day[day] = [day, *values[:5], int(values[5])]  # a later bar (live quote) wins
    return [by_day[d] for d in sorted(by_day)]


def _pull_prices(run: _Run, ticker: str) -> None:
    path, result = run.out / "prices-yahoo" / f"{ticker}.csv", run.result
    if path.exists() and not run.force:
        result.files.append(Outcome(ticker, "prices", path, "skipped", "exists"))
        return
    run.progress(f"{ticker}: daily prices")

    def stamp(d: date) -> int:
        return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp())

    url = CHART_URL.format(
        symbol=ticker.replace(".", "-"),  # Yahoo spells share classes BRK-B
        start=stamp(run.since) if run.since else 0,
        end=stamp(run.today + timedelta(days=1)),
    )
    where = f"{ticker} prices"
    fix = "check the symbol on finance.yahoo.com or pass --no-prices"
    rows = chart_rows(_json(_fetch(run.fetcher, url, where, fix), url, where), url, ticker)
    if not rows:
        result.notes.append(f"{ticker}: Yahoo returned no daily bars; no price file written")
        return
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([PRICE_HEADER, *rows])
    write_atomic(path, buf.getvalue().encode())
    result.files.append(Outcome(ticker, "prices", path, "written", f"{len(rows)} days"))


def normalize_tickers(tickers: list[str]) -> list[str]:
    """Upper-case, de-duplicated in order; a malformed symbol is a UserError naming it."""
    seen: list[str] = []
    for t in tickers:
        u = t.strip().upper()
        if not _TICKER.match(u):
            raise UserError(
                f"ticker {t!r}", "is not a ticker symbol", "use 1-6 letters, digits, '.' or '-'"
            )
        if u not in seen:
            seen.append(u)
    return seen


def pull(
    fetcher: Fetcher,
    out: Path,
    tickers: list[str],
    *,
    since: date | None = None,
    filings: bool = True,
    prices: bool = True,
    force: bool = False,
    today: date | None = None,
    progress: Callable[[str], None] | None = None,
) -> PullResult:
    """Fetch filings and/or prices of `tickers` into the bundle at `out`."""
    names = normalize_tickers(tickers)
    if not names:
        raise UserError("--ticker", "no ticker given", "pass --ticker AAPL (repeatable)")
    if not (filings or prices):
        raise UserError("--no-filings --no-prices", "leave nothing to pull", "drop one of them")
    result, report = PullResult(out), progress or (lambda msg: None)
    run = _Run(fetcher, out, since, today or date.today(), force, result, report)
    ciks: dict[str, int] = {}
    if filings:  # every ticker is resolved before any download
        ciks = resolve_ciks(fetcher, out, names, result, force)
    for t in names:
        if filings:
            _pull_filings(run, t, ciks[t])
        if prices:
            _pull_prices(run, t)
    return result
