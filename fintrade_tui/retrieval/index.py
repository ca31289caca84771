"""Index room: LanceDB tables of embedded chunks (one per track) and their parents.

Build or refresh is incremental: a filing is re-chunked and re-embedded only when its section
text (parsed once at ingest into the store's `filing_sections`, read by `stored_text.py`), the
chunking settings or the model changed; a market chunk only when its text changed. A manifest
beside the tables records what each filing and chunk was built from.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from typing import Any, cast

import duckdb
import numpy as np
import pyarrow as pa

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.kill_points import stop_at
from fintrade_tui.retrieval.chunks import Chunk
from fintrade_tui.retrieval.stored_text import filing_rows, stored_sections, text_keys

TRACKS = ("filing", "market")
TABLE = {"filing": "filing_chunks", "market": "market_chunks", "parents": "parents"}
Progress = Callable[[str, int | None], Callable[[int], None]]


@dataclass
class IndexSummary:
    filings: int = 0
    filings_embedded: int = 0
    filing_chunks: int = 0
    market_chunks: int = 0
    chunks_embedded: int = 0
    chunks_shared: int = 0  # word-for-word repeats of a passage the company filed before
    removed: int = 0
    seconds_embedding: float = 0.0


def _schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            ("id", pa.string()),
            ("track", pa.string()),
            ("ticker", pa.string()),
            ("text", pa.string()),
            ("parent_id", pa.string()),
            ("form", pa.string()),
            ("accession", pa.string()),
            ("filed", pa.date32()),
            ("section_key", pa.string()),
            ("section", pa.string()),
            ("period", pa.string()),
            ("period_end", pa.date32()),
            ("start", pa.date32()),
            ("end", pa.date32()),
            ("available_from", pa.date32()),
            ("source_path", pa.string()),
            ("char_start", pa.int64()),
            ("char_end", pa.int64()),
            ("text_hash", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


def _tables(db) -> list[str]:
    return list(db.list_tables().tables)


def _hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def shared_vectors(
    db, filing_chunks: list[Chunk], market_chunks: list[Chunk]
) -> tuple[list[str], list[int | np.ndarray]]:
    """What to embed for these chunks (filing chunks, then market chunks), and where each
    chunk's vector comes from: an index into those texts, or a vector already in the index.

    A passage one company repeats word for word in later filings (a 10-Q's risk factors copied
    from the 10-K, an unchanged accounting note) is embedded once, newest filing first; its
    copies share that vector and keep their own text, filing and dates. The index holds one
    model's vectors only (another model drops every table), so a stored vector is current."""
    known: dict[tuple[str, str], np.ndarray] = {}
    tickers = sorted({c.ticker for c in filing_chunks})
    if tickers and TABLE["filing"] in _tables(db):
        tbl = db.open_table(TABLE["filing"])
        names = ", ".join("'" + t.replace("'", "''") + "'" for t in tickers)
        got = (
            tbl.search()
            .where(f"ticker IN ({names})")
            .select(["ticker", "text_hash", "vector"])
            .limit(tbl.count_rows() or 1)
            .to_arrow()
        )
        if len(got):
            vecs = got["vector"].combine_chunks().flatten().to_numpy().reshape(len(got), -1)
            keys = zip(got["ticker"].to_pylist(), got["text_hash"].to_pylist(), strict=True)
            known = dict(zip(keys, vecs, strict=True))
    texts: list[str] = []
    source: list[int | np.ndarray] = [0] * (len(filing_chunks) + len(market_chunks))
    first: dict[tuple[str, str], int] = {}
    # a filing chunk carries its filing's date (Chunk.filed is None for market chunks only)
    newest_first = sorted(
        range(len(filing_chunks)), key=lambda i: cast(date, filing_chunks[i].filed), reverse=True
    )
    for i in newest_first:
        c = filing_chunks[i]
        key = (c.ticker, _hash(c.text))
        if key in known:
            source[i] = known[key]
        elif key in first:
            source[i] = first[key]
        else:
            first[key] = len(texts)
            source[i] = len(texts)
            texts.append(c.embed_text)
    for j, c in enumerate(market_chunks):
        source[len(filing_chunks) + j] = len(texts)
        texts.append(c.embed_text)
    return texts, source


_THREADS = threading.Lock()


@contextmanager
def writer_lock(folder: Path) -> Iterator[None]:
    """The index's single writer: a thread lock inside this process, a file lock across
    processes (the TUI's background indexer and an `ask` in another terminal)."""
    import fcntl

    with _THREADS, open(folder / ".writer.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class Index:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.path = cfg.retrieval.index
        self.manifest_path = self.path / "manifest.json"

    def db(self):
        import lancedb  # heavy: only when the index is used

        return lancedb.connect(str(self.path))

    def manifest(self) -> dict[str, Any]:
        if not self.manifest_path.is_file():
            return {"filings": {}, "model": None}
        return json.loads(self.manifest_path.read_text())

    def model_key(self) -> str:
        """The embedding model and how it runs: another one means a rebuild."""
        from fintrade_tui.retrieval import embed

        r = self.cfg.retrieval
        return f"{r.model}:{embed.precision(r.precision)}:{r.embed_tokens}"

    def tickers(self) -> set[str]:
        """Tickers the index holds (every indexed ticker has market chunks)."""
        return {k.split(":")[1] for k in self.manifest().get("market", {})}

    def open_table(self, track: str):
        """A table as the manifest committed it: rows a build in progress (or one killed
        before its manifest) added or deleted are not seen."""
        db = self.db()
        name = TABLE[track]
        if not self.manifest_path.is_file() or name not in _tables(db):
            raise UserError(
                str(self.path), "the retrieval index was never built", "run `fintrade-tui index`"
            )
        tbl = db.open_table(name)
        version = self.manifest().get("versions", {}).get(name)
        if version is not None and version != tbl.version:
            tbl.checkout(version)
        return tbl

    def _roll_back(self, db, old: dict[str, Any]) -> None:
        """Undo what a killed build wrote after the last manifest (its tables' later
        versions): the index is then exactly as that manifest describes it. Under the lock."""
        for stale in self.path.glob("manifest.*.tmp"):
            stale.unlink(missing_ok=True)  # a killed writer's half-written manifest
        versions = old.get("versions")
        names = _tables(db)
        if versions is not None and any(n not in names for n in versions):
            # a killed model change dropped tables the manifest still names: start afresh
            self.manifest_path.unlink()
            old.update(filings={}, market={}, versions={})
        if not self.manifest_path.is_file():
            for name in TABLE.values():  # never committed: a killed first build
                if name in names:
                    db.drop_table(name)
            old.pop("versions", None)
            return
        if versions is None:  # a manifest from before versions were recorded
            return
        for name in TABLE.values():
            if name not in versions:
                if name in names:
                    db.drop_table(name)
                continue
            tbl = db.open_table(name)
            if tbl.version != versions[name]:
                tbl.restore(versions[name])

    def build(
        self,
        con: duckdb.DuckDBPyConnection,
        progress: Progress | None = None,
        tickers: list[str] | None = None,
        accessions: list[str] | None = None,
    ) -> IndexSummary:
        """Build or refresh both tracks from the store's text; with `tickers`, only theirs
        (what is indexed for other tickers stays as it is); with `accessions` too, only those
        filings of theirs (the rest of a ticker is indexed by a later call). One writer at a
        time, across threads and processes."""
        self.path.mkdir(parents=True, exist_ok=True)
        with writer_lock(self.path):
            return self._build(con, progress, tickers, accessions)

    def _build(self, con, progress, tickers, accessions) -> IndexSummary:
        import time

        from fintrade_tui.retrieval import embed, filing_text, market_track

        progress = progress or (lambda label, total: lambda n=1: None)
        r = self.cfg.retrieval
        old = self.manifest()
        self._roll_back(self.db(), old)
        model = self.model_key()
        if old.get("model") not in (None, model):
            # another model or option: no vector of the old one may stay beside the new ones
            # (a staged build would rebuild one filing and leave the rest searchable)
            db = self.db()
            for name in TABLE.values():
                if name in _tables(db):
                    db.drop_table(name)
            old = {"filings": {}, "model": model, "market": {}}
        s = IndexSummary()
        filings = filing_rows(con)
        in_store = {f["accession"] for f in filings}
        if tickers:
            filings = [f for f in filings if f["ticker"] in tickers]
        if accessions is not None:
            chosen = set(accessions)  # once, not per filing
            filings = [f for f in filings if f["accession"] in chosen]
        s.filings = len(filings)
        current = text_keys(con, self.cfg, [f["accession"] for f in filings])  # these only
        keys = {f["accession"]: current.get(f["accession"], "no sections") for f in filings}
        stale = [f for f in filings if old["filings"].get(f["accession"]) != keys[f["accession"]]]
        gone = sorted(set(old["filings"]) - in_store)
        tick = progress("index: chunk filings", len(stale))
        new_chunks: list[Chunk] = []
        for f in stale:
            found = stored_sections(con, f["accession"])
            new_chunks += filing_text.chunk_sections(
                found, f, f["company"], r.parent_tokens, r.child_tokens, r.overlap_tokens
            )
            tick(1)
        stop_at("index.chunked")  # chunked, nothing embedded or written yet
        # no tickers: every ticker's track (market_chunks reads [] as none)
        wanted = list(tickers) if tickers else None
        market = list(market_track.market_chunks(con, tickers=wanted, since=r.market_since))
        old_market: dict[str, str] = old.get("market", {})
        market_new = [c for c in market if old_market.get(c.id) != _hash(c.embed_text)]
        mine = {k for k in old_market if not tickers or k.split(":")[1] in tickers}
        market_gone = sorted(mine - {c.id for c in market})
        todo = new_chunks + market_new
        db = self.db()
        texts, source = shared_vectors(db, new_chunks, market_new)
        tick = progress("index: embed chunks", len(texts))
        t0 = time.perf_counter()
        embedded = embed.embed(texts, progress=tick, **embed.settings(r))
        picked = [embedded[k] if isinstance(k, int) else k for k in source]
        vectors = np.stack(picked) if picked else embedded
        s.seconds_embedding = time.perf_counter() - t0
        s.chunks_embedded, s.filings_embedded = len(texts), len(stale)
        s.chunks_shared = len(todo) - len(texts)
        # the model is loaded only when there is something to embed or a table to create
        dim = vectors.shape[1] if len(todo) else None
        changed_acc = [f["accession"] for f in stale] + gone
        self._replace(
            db, "filing", dim, changed_acc, "accession", new_chunks, vectors[: len(new_chunks)]
        )
        stop_at("index.filing-rows-written", filings=len(stale))  # rows not in the manifest
        self._replace(
            db,
            "market",
            dim,
            [c.id for c in market_new] + market_gone,
            "id",
            market_new,
            vectors[len(new_chunks) :],
        )
        self._parents(db, new_chunks + market_new, changed_acc, market_new, market_gone)
        s.removed = len(gone) + len(market_gone)
        changed = {"filing": bool(changed_acc), "market": bool(market_new or market_gone)}
        for track in TRACKS:
            tbl = db.open_table(TABLE[track])
            if changed[track] or not tbl.list_indices():  # a track unchanged keeps its index
                from lancedb.index import FTS

                tbl.create_index("text", config=FTS(), replace=True)
        s.filing_chunks = db.open_table(TABLE["filing"]).count_rows()
        s.market_chunks = db.open_table(TABLE["market"]).count_rows()
        kept_filings = {a: k for a, k in old["filings"].items() if a not in gone}
        kept_market = {k: h for k, h in old_market.items() if k not in mine}
        manifest = {
            "model": model,
            "filings": kept_filings | keys,
            "market": kept_market | {c.id: _hash(c.embed_text) for c in market},
            # what readers check out, and what the next build rolls back to after a kill
            "versions": {name: db.open_table(name).version for name in TABLE.values()},
        }
        # last, and atomically: a crash or a kill before this means "embed those again"
        tmp = self.manifest_path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(manifest))
        stop_at("index.manifest-staged")  # tables and text index built, manifest not swapped
        os.replace(tmp, self.manifest_path)
        return s

    def _replace(
        self, db, track: str, dim: int | None, keys: list[str], column: str, chunks, vectors
    ) -> None:
        name = TABLE[track]
        if name not in _tables(db):
            from fintrade_tui.retrieval.embed import dimension, settings

            dim = dim or dimension(**settings(self.cfg.retrieval))
            db.create_table(name, schema=_schema(dim))
        tbl = db.open_table(name)
        for i in range(0, len(keys), 500):
            part = ", ".join("'" + k.replace("'", "''") + "'" for k in keys[i : i + 500])
            tbl.delete(f"{column} IN ({part})")
        if chunks:
            assert dim is not None  # chunks to write were embedded: the build knows their width
            rows = []
            for c, v in zip(chunks, vectors, strict=True):
                d = asdict(c)
                d.pop("parent_text")
                d.pop("embed_text")
                d["text_hash"] = _hash(c.text)
                d["vector"] = v
                rows.append(d)
            tbl.add(pa.Table.from_pylist(rows, schema=_schema(dim)))

    def _parents(self, db, chunks: list[Chunk], accessions, market_new, market_gone) -> None:
        schema = pa.schema([("id", pa.string()), ("accession", pa.string()), ("text", pa.string())])
        if TABLE["parents"] not in _tables(db):
            db.create_table(TABLE["parents"], schema=schema)
        tbl = db.open_table(TABLE["parents"])
        market_parents = sorted({c.parent_id for c in market_new} | set(market_gone))
        for column, keys in (("accession", accessions), ("id", market_parents)):
            for i in range(0, len(keys), 500):
                part = ", ".join("'" + k.replace("'", "''") + "'" for k in keys[i : i + 500])
                tbl.delete(f"{column} IN ({part})")
        seen: dict[str, dict] = {}
        for c in chunks:
            seen.setdefault(
                c.parent_id,
                {"id": c.parent_id, "accession": c.accession or "", "text": c.parent_text},
            )
        if seen:
            tbl.add(pa.Table.from_pylist(list(seen.values()), schema=schema))
