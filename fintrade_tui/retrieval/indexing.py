"""Indexing room: what a question needs indexed first, and the background indexer that does
the rest of its companies one filing at a time.

A RAG question on an unindexed ticker embeds only what it can use first: the newest filing
filed on or before its `as_of`, and the ticker's market chunks (about 200 + 40 chunks, a few
seconds). The rest follows in the background, newest first. Each filing is its own index
build, committed with the manifest, so a kill loses at most the filing in hand and the next
start resumes where it stopped; a question that needs indexing now waits for at most that one
filing (the index has one writer).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

from fintrade_tui.config import Config
from fintrade_tui.retrieval.index import Index
from fintrade_tui.retrieval.stored_text import text_keys


def first_filings(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date | None) -> list[str]:
    """The accession a question as of `as_of` uses first: the newest filing filed by then
    (the 10-K before it and the older filings follow in the background, newest first)."""
    rows = eligible(con, ticker, as_of)
    return rows[:1]


def eligible(con: duckdb.DuckDBPyConnection, ticker: str, as_of: date | None) -> list[str]:
    """Every filing of `ticker` filed on or before `as_of`, newest first."""
    return eligible_by_ticker(con, [ticker], as_of)[ticker]


def eligible_all(
    con: duckdb.DuckDBPyConnection, tickers: list[str], as_of: date | None
) -> list[str]:
    """`eligible` of each ticker in turn (in one query)."""
    return [a for acc in eligible_by_ticker(con, tickers, as_of).values() for a in acc]


def eligible_by_ticker(
    con: duckdb.DuckDBPyConnection, tickers: list[str], as_of: date | None
) -> dict[str, list[str]]:
    """Each ticker's filings filed on or before `as_of`, newest first, in one query (a
    universe question names ~100)."""
    rows = con.execute(
        "SELECT ticker, accession FROM filings WHERE list_contains(?, ticker)"
        " AND (? IS NULL OR filed <= ?) ORDER BY filed DESC, accession",
        [list(tickers), as_of, as_of],
    ).fetchall()
    out: dict[str, list[str]] = {t: [] for t in tickers}
    for t, acc in rows:
        out[t].append(acc)
    return out


_KEYS: dict[tuple, dict[str, str]] = {}  # text_keys of a store as it is on disk
_KEYS_LOCK = threading.Lock()


def _store_state(store: Path) -> tuple | None:
    """What changes when the store's content does: the file (a rebuild renames a new one in)
    and its write-ahead log (an in-place write before its checkpoint)."""
    try:
        st = store.stat()
    except OSError:
        return None
    wal = store.with_name(store.name + ".wal")
    w = wal.stat() if wal.exists() else None
    return (str(store), st.st_ino, st.st_mtime_ns, st.st_size, w and (w.st_mtime_ns, w.st_size))


def cached_text_keys(con: duckdb.DuckDBPyConnection, cfg: Config, accessions: list[str]) -> dict:
    """`text_keys`, kept per store state: every RAG run asks it for the same filings (the md5
    of their whole text, ~0.1 s for the bundle's 55, twice a run before this)."""
    r = cfg.retrieval
    path = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    state = _store_state(Path(path[0])) if path and path[0] else None
    if state is None:
        return text_keys(con, cfg, accessions)
    key = (state, tuple(accessions), r.parent_tokens, r.child_tokens, r.overlap_tokens)
    with _KEYS_LOCK:
        if key in _KEYS:
            return _KEYS[key]
    keys = text_keys(con, cfg, accessions)
    with _KEYS_LOCK:
        if len(_KEYS) > 256:  # a long session over many questions: start again
            _KEYS.clear()
        _KEYS[key] = keys
    return keys


def unindexed(index: Index, con: duckdb.DuckDBPyConnection, accessions: list[str]) -> list[str]:
    """The accessions whose current text is not in the index (new, changed, or never built)."""
    m = index.manifest()
    model_ok = m.get("model") in (None, index.model_key())
    keys = cached_text_keys(con, index.cfg, accessions)
    done = m.get("filings", {}) if model_ok else {}
    return [a for a in accessions if done.get(a) != keys.get(a, "no sections")]


def needs_market(index: Index, con: duckdb.DuckDBPyConnection, tickers: list[str]) -> list[str]:
    """The tickers whose market track the index lacks, of those with prices to build it from:
    a ticker without any (KFT, PCLN in the seeds' universe) never gets one, and counting it
    missing rebuilt the track of every ticker of a universe question on each RAG run."""
    from fintrade_tui.retrieval.market_track import priced

    m = index.manifest()
    held = index.tickers() if m.get("model") in (None, index.model_key()) else set()
    lacking = [t for t in tickers if t not in held]
    can = priced(con, lacking, index.cfg.retrieval.market_since) if lacking else set()
    return [t for t in lacking if t in can]


def coverage(cfg: Config, con: duckdb.DuckDBPyConnection, tickers: list[str], as_of: date) -> str:
    """A note for the evidence when retrieval could not yet see every eligible filing."""
    index = Index(cfg)
    want = eligible_all(con, tickers, as_of)
    missing = unindexed(index, con, want)
    if not missing:
        return ""
    return (
        f"retrieval searched {len(want) - len(missing)} of the {len(want)} filings filed by"
        f" {as_of} (the newest first; the older ones were still being indexed)"
    )


@dataclass
class Status:
    """What the background indexer is doing, for a status line."""

    done: int = 0  # filings indexed by this indexer since it started
    total: int = 0  # filings it has been asked to index
    current: str = ""  # e.g. "NVDA 10-Q filed 2025-05-28"
    error: str = ""
    running: bool = False
    tickers: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.error:
            return f"indexing stopped: {self.error}"
        if not self.total:
            return ""
        if not self.running:
            n = len(self.tickers)
            return f"RAG index: {self.total} filings of {n} compan{'y' if n == 1 else 'ies'} ready"
        return f"indexing for RAG {self.done}/{self.total} filings · {self.current}"


class Background:
    """One daemon thread per index folder that indexes queued tickers, filing by filing."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.status = Status()
        self._queue: list[str] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._ticker = ""  # the one being indexed

    def add(self, tickers: list[str]) -> None:
        """Queue tickers (a ticker indexed before is checked again: cheap when complete)."""
        with self._lock:
            for t in tickers:
                if t not in self._queue and t != self._ticker:
                    self._queue.append(t)
                if t not in self.status.tickers:
                    self.status.tickers.append(t)
            if not self.status.running:  # under the lock: a finishing thread takes no more
                self._stop.clear()
                self.status.running, self.status.error = True, ""
                self._thread = threading.Thread(target=self._run, name="index-bg", daemon=True)
                self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        t = self._thread
        if t is not None:
            t.join(timeout)
        return t is None or not t.is_alive()

    def _run(self) -> None:
        from fintrade_tui.store.db import connect

        try:
            with connect(self.cfg.store) as con:
                while not self._stop.is_set():
                    with self._lock:
                        if not self._queue:
                            self.status.running = False  # from here on, add() starts anew
                            break
                        self._ticker = self._queue.pop(0)
                    self._index_ticker(con, self._ticker)
        except Exception as exc:  # shown in the status line; the app carries on
            self.status.error = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        finally:
            with self._lock:
                if self._thread is threading.current_thread():  # not a successor's state
                    self.status.running, self.status.current, self._ticker = False, "", ""

    def _progress(self, label: str, total: int | None):
        """The build's progress hook: where the indexer yields to model runs and stops."""

        def tick(n: int = 1) -> None:
            if self._stop.is_set() or _BUSY[0]:
                raise _Stopped  # drop this filing (and the index's lock) at once

        return tick

    def _index_ticker(self, con: duckdb.DuckDBPyConnection, ticker: str) -> None:
        index = Index(self.cfg)
        todo = unindexed(index, con, eligible(con, ticker, None))
        self.status.total += len(todo)
        if not todo and needs_market(index, con, [ticker]):
            index.build(con, tickers=[ticker], accessions=[])
        for acc in todo:
            if self._stop.is_set():
                return
            row = con.execute(
                "SELECT form, filed FROM filings WHERE accession = ?", [acc]
            ).fetchone()
            if row is None:  # listed from `filings` above: there unless removed since
                raise LookupError(f"filing {acc} is not in the store")
            form, filed = row
            self.status.current = f"{ticker} {form} filed {filed}"
            while True:
                while _BUSY[0] and not self._stop.is_set():
                    time.sleep(0.2)  # a model is answering (or a question indexing): wait
                if self._stop.is_set():
                    return
                try:
                    index.build(con, self._progress, [ticker], accessions=[acc])
                    break
                except _Stopped:
                    continue  # nothing of this filing was written; retried when idle
            self.status.done += 1


class _Stopped(Exception):
    pass


_BACKGROUND: dict[str, Background] = {}
_GUARD = threading.Lock()
_BUSY = [0]  # model runs streaming in this process


def pause_background() -> None:
    """A model starts answering: background indexing drops the filing in hand at its next
    embedding batch (releasing the index for a question's own indexing) and waits."""
    with _GUARD:
        _BUSY[0] += 1


def resume_background() -> None:
    with _GUARD:
        _BUSY[0] = max(0, _BUSY[0] - 1)


@contextmanager
def busy() -> Iterator[None]:
    pause_background()
    try:
        yield
    finally:
        resume_background()


def stop_all(timeout: float) -> None:
    """Stop every background indexer of this process, each within `timeout` seconds."""
    for bg in list(_BACKGROUND.values()):
        bg.stop()
    for bg in list(_BACKGROUND.values()):
        bg.wait(timeout)


def background(cfg: Config) -> Background:
    """The process's background indexer for this config's index folder."""
    key = str(cfg.retrieval.index.resolve())
    with _GUARD:
        if key not in _BACKGROUND:
            _BACKGROUND[key] = Background(cfg)
        return _BACKGROUND[key]


def filing_companies(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute("SELECT DISTINCT ticker FROM filings ORDER BY 1").fetchall()]


_INDEXING = threading.Lock()  # concurrent RAG runs of one process build the index once


def ensure_index(
    cfg: Config,
    tickers: list[str],
    say: Callable[[str], None],
    progress: Any = None,
    as_of: date | None = None,
    staged: bool = False,
) -> None:
    """Index what RAG needs for `tickers` that the index does not hold yet (others stay as
    they are). Staged (the Arena): only the filings a question as of `as_of` uses first, the
    rest queued for the background indexer; otherwise every filing of the tickers."""
    from fintrade_tui.store.db import connect

    with _INDEXING, connect(cfg.store) as con:
        index = Index(cfg)
        # one query for every ticker (a universe question names ~100); staged: the newest
        # filing by as_of of each (`first_filings`), else all of them
        by = eligible_by_ticker(con, tickers, as_of if staged else None)
        if staged:
            by = {t: acc[:1] for t, acc in by.items()}
        todo = unindexed(index, con, [a for acc in by.values() for a in acc])
        market = needs_market(index, con, tickers)
        if todo or market:
            # only the tickers with something to index: the market track of each ticker
            # named is rebuilt (and compared) whole, ~0.1 s a ticker
            new = set(todo)
            some = [t for t in tickers if t in market or new.intersection(by.get(t, ()))]
            names = ", ".join(some[:8]) + ("..." if len(some) > 8 else "")
            first = " it uses first (newest first)" if staged else ""
            say(f"indexing {len(todo)} filings of {names}{first} for RAG")
            # the index takes a (label, total) -> tick callable, as the `index` command gives it
            start = (lambda label, total: progress.start(label, total)) if progress else None
            index.build(con, start, some, accessions=todo)
    if staged:
        background(cfg).add(list(tickers))
