"""Search room: point-in-time retrieval over both tracks, dense, full-text or hybrid (RRF),
with an optional rerank stage, per-track quotas, parent de-duplication and a token budget.

Point-in-time: a filing passage is eligible only if filed on or before `as_of`; a market chunk
only if it ends on or before `as_of` and overlaps the window. The filters run inside LanceDB
(prefilter), so nothing from the future is ever ranked.

Recency (`recency.py`): by default the filing candidates are de-duplicated across filings and
get a prior on filing age, so that among near-equal passages the latest filing by `as_of` comes
first; `recency=False` ranks as before, a float sets the prior's strength.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from typing import Any

import numpy as np

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.retrieval import recency as recency_prior
from fintrade_tui.retrieval.index import Index
from fintrade_tui.workspace.evidence import approx_tokens

MODES = ("dense", "text", "hybrid", "hybrid_rerank")
RRF_K = 60  # the usual reciprocal-rank-fusion constant
CANDIDATES = 40  # per search list, before fusion and quotas
_TICKER = re.compile(r"^[A-Z0-9.\-]{1,10}$")
_COLUMNS = [
    "id",
    "track",
    "ticker",
    "text",
    "parent_id",
    "form",
    "accession",
    "filed",
    "section",
    "section_key",
    "period",
    "period_end",
    "start",
    "end",
    "available_from",
    "source_path",
    "char_start",
    "char_end",
]


def _where(track: str, tickers: list[str], as_of: date, window_start: date) -> str:
    """The eligibility filter; values are validated, never pasted from free text."""
    for t in tickers:
        if not _TICKER.match(t):
            raise UserError(f"ticker {t!r}", "is not a ticker symbol", "use e.g. AAPL")
    names = ", ".join(f"'{t}'" for t in tickers)
    if track == "filing":
        return f"ticker IN ({names}) AND filed <= date '{as_of.isoformat()}'"
    return (
        f"ticker IN ({names}) AND \"end\" <= date '{as_of.isoformat()}'"
        f" AND \"end\" >= date '{window_start.isoformat()}'"
    )


def _search(tbl, mode: str, query: str, vec: np.ndarray, where: str, n: int) -> list[dict]:
    if mode == "dense":
        q = tbl.search(vec, query_type="vector").distance_type("cosine")
        score = "_distance"
    else:
        q = tbl.search(query, query_type="fts")
        score = "_score"
    return q.where(where, prefilter=True).select([*_COLUMNS, score]).limit(n).to_list()


def _fuse(dense: list[dict], text: list[dict]) -> list[dict]:
    """Reciprocal-rank fusion of the two lists, keeping each list's own score."""
    rows: dict[str, dict] = {}
    for rank, r in enumerate(dense):
        d = rows.setdefault(r["id"], r | {"scores": {}})
        d["scores"]["dense"] = 1.0 - float(r["_distance"])  # cosine similarity
        d["scores"]["fused"] = d["scores"].get("fused", 0.0) + 1.0 / (RRF_K + rank + 1)
    for rank, r in enumerate(text):
        d = rows.setdefault(r["id"], r | {"scores": {}})
        d["scores"]["text"] = float(r["_score"])
        d["scores"]["fused"] = d["scores"].get("fused", 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(rows.values(), key=lambda d: -d["scores"]["fused"])


def _rerank(cfg: Config, query: str, vec: np.ndarray, rows: list[dict], tbl) -> list[dict]:
    """Rescore candidates: a configured cross-encoder, else the bi-encoder's cosine."""
    if not rows:
        return rows
    if cfg.retrieval.reranker:
        from sentence_transformers import CrossEncoder

        model = CrossEncoder(cfg.retrieval.reranker, device="cpu")
        scores = model.predict([(query, r["text"]) for r in rows])
    else:
        ids = ", ".join("'" + r["id"].replace("'", "''") + "'" for r in rows)
        found = (
            tbl.search().where(f"id IN ({ids})").select(["id", "vector"]).limit(len(rows)).to_list()
        )
        vectors = {f["id"]: np.asarray(f["vector"]) for f in found}
        scores = [float(vectors[r["id"]] @ vec) for r in rows]
    for r, s in zip(rows, scores, strict=True):
        r["scores"]["rerank"] = float(s)
    return sorted(rows, key=lambda d: -d["scores"]["rerank"])


def _ranked(cfg: Config, tbl, track: str, mode: str, query: str, vec, where: str) -> list[dict]:
    if mode == "dense":
        return _fuse(_search(tbl, "dense", query, vec, where, CANDIDATES), [])
    if mode == "text":
        return _fuse([], _search(tbl, "text", query, vec, where, CANDIDATES))
    # the two searches run at once: LanceDB releases the GIL while it scans
    text = _POOL.submit(_search, tbl, "text", query, vec, where, CANDIDATES)
    fused = _fuse(_search(tbl, "dense", query, vec, where, CANDIDATES), text.result())
    if mode == "hybrid_rerank" and track == "filing":  # market chunks skip the rerank stage
        return _rerank(cfg, query, vec, fused[:CANDIDATES], tbl)
    return fused


def retrieve(
    cfg: Config,
    question: str,
    tickers: list[str],
    as_of: date,
    window: tuple[date, date] | None = None,
    k: int | None = None,
    token_budget: int | None = None,
    mode: str = "hybrid",
    recency: bool | float | None = None,
) -> list[dict[str, Any]]:
    """Evidence items for `question` about `tickers`, as visible after the close of `as_of`.

    `recency`: True = de-duplicate filing passages repeated across filings and apply the
    filing-age prior at `recency.STRENGTH`; a float = that strength (0: de-duplication only);
    False = neither (the plain fused or reranked order)."""
    if not question or not question.strip():
        raise UserError("query", "is empty", "give the question text")
    if mode not in MODES:
        raise UserError(f"mode {mode!r}", "is unknown", f"use one of {', '.join(MODES)}")
    if not tickers:
        raise UserError("tickers", "none given", "pass --ticker")
    r = cfg.retrieval
    k = k or r.k
    budget = token_budget or r.token_budget
    start = window[0] if window else as_of - timedelta(days=90)
    index = Index(cfg)
    from fintrade_tui.retrieval.embed import embed_query, settings

    vec = embed_query(question.strip(), **settings(r)) if mode != "text" else None
    quota = {"filing": math.ceil(k * r.filing_share)}
    quota["market"] = k - quota["filing"]
    ranked: dict[str, list[dict]] = {"filing": [], "market": []}
    tables = _tables(index)
    for t in tickers:
        _where("filing", [t], as_of, start)  # validates the symbol
        if t not in tables["tickers"]:
            raise UserError(
                f"ticker {t!r}",
                "has nothing in the retrieval index",
                "check the ticker or run `fintrade-tui index`",
            )
    for track in ("filing", "market"):
        if quota[track] == 0 and mode != "text":
            continue  # nothing of this track would be kept
        tbl = tables[track]
        where = _where(track, tickers, as_of, start)
        rows = _ranked(cfg, tbl, track, mode, question, vec, where)
        if recency is None:
            recency = r.recency  # the config's: by default the measured STRENGTH
        if track == "filing" and recency is not False:
            strength = recency_prior.STRENGTH if recency is True else float(recency)
            rows = recency_prior.apply(
                rows, tables["filed"], as_of, strength, recency_prior.DUP_JACCARD
            )
        ranked[track] = _dedup_parents(rows) if track == "filing" else rows
    # a track with too few results lends its quota to the other
    for a, b in (("filing", "market"), ("market", "filing")):
        spare = quota[a] - len(ranked[a])
        if spare > 0:
            quota[b] += spare
    picked = ranked["filing"][: quota["filing"]] + ranked["market"][: quota["market"]]
    picked.sort(key=lambda d: -_score(d))
    return _with_parents(tables["parents"], _budget(picked, budget), as_of)


def _score(d: dict) -> float:
    s = d["scores"]
    return s.get("recency", s.get("rerank", s["fused"]))


_OPEN: dict[tuple[str, float], dict[str, Any]] = {}
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="retrieve")


def _tables(index: Index) -> dict[str, Any]:
    """Open tables, the tickers they hold and the sorted filing dates (one per filing) of each
    ticker and each (ticker, form), kept per index folder until the manifest changes (opening
    them costs a few ms a query)."""
    stamp = index.manifest_path.stat().st_mtime if index.manifest_path.is_file() else 0.0
    key = (str(index.path), stamp)
    if key not in _OPEN:
        tables: dict[str, Any] = {t: index.open_table(t) for t in ("filing", "market")}
        tables["parents"] = index.open_table("parents")
        held: set[str] = set()
        for t in ("filing", "market"):
            tbl = tables[t]
            rows = tbl.search().select(["ticker"]).limit(tbl.count_rows() or 1).to_arrow()
            held |= set(rows.column("ticker").unique().to_pylist())
        tables["tickers"] = held
        tbl = tables["filing"]
        cols = ["ticker", "form", "accession", "filed"]
        got = tbl.search().select(cols).limit(tbl.count_rows() or 1).to_arrow()
        filed: dict[Any, list[date]] = {}  # by ticker and by (ticker, form)
        rows = zip(*(got.column(c).to_pylist() for c in cols), strict=True)
        for t, form, _, day in sorted(set(rows)):
            filed.setdefault(t, []).append(day)
            filed.setdefault((t, form), []).append(day)
        tables["filed"] = filed
        _OPEN.clear()
        _OPEN[key] = tables
    return _OPEN[key]


def _dedup_parents(rows: list[dict]) -> list[dict]:
    seen: set[str] = set()
    out = []
    for r in rows:
        if r["parent_id"] not in seen:
            seen.add(r["parent_id"])
            out.append(r)
    return out


def _budget(rows: list[dict], budget: int) -> list[dict]:
    out: list[dict] = []
    used = 0
    for r in rows:
        n = approx_tokens(r["text"])
        if out and used + n > budget:
            break
        out.append(r)
        used += n
    return out


def _quarter_end(parent_id: str) -> date | None:
    """Last day of a market quarter parent "mkt:<T>:<YYYY>-Q<q>" (None for other parents)."""
    m = re.search(r":(\d{4})-Q([1-4])$", parent_id)
    if not m:
        return None
    year, month = int(m.group(1)), 3 * int(m.group(2))
    return date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)


def _with_parents(tbl, rows: list[dict], as_of: date) -> list[dict]:
    if not rows:
        return []
    ids = ", ".join("'" + r["parent_id"].replace("'", "''") + "'" for r in rows)
    parents = {
        p["id"]: p["text"] for p in tbl.search().where(f"id IN ({ids})").limit(len(rows)).to_list()
    }
    out = []
    for r in rows:
        item = {c: r.get(c) for c in _COLUMNS}
        item["scores"] = {n: r["scores"].get(n) for n in ("dense", "text", "fused", "rerank")}
        item["parent_text"] = parents.get(r["parent_id"], "")
        end = _quarter_end(r["parent_id"]) if r["track"] == "market" else None
        if end is not None and end > as_of:
            # a month's parent is its quarter summary, which would show days after as_of
            item["parent_text"] = r["text"]
        out.append(item)
    return out
