"""The labelled retrieval queries and how the retrieval benchmarks score what `retrieve`
returns: recall@5 / MRR@10 against a labelled target filing section, and the point-in-time
check (nothing filed, or ending, after as_of). Shared by bench_retrieval, bench_recency and
bench_embedding.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb

from benchmarks import harness
from benchmarks.harness import ROOT
from fintrade_tui.config import Config, load_config
from fintrade_tui.retrieval.search import MODES, retrieve

QUERIES = ROOT / "tests" / "data" / "retrieval_queries.jsonl"
K = 10
BIG_BUDGET = 10_000_000  # tokens: the budget never cuts a result list
RANDOM_DATES = 100
TICKERS = ["AAPL", "ADSK", "AMZN", "GOOG", "META", "NVDA", "TSLA"]
FILING_COLUMNS = ["accession", "ticker", "form", "filed", "fiscal_year", "fiscal_period"]


def store_filings(con: duckdb.DuckDBPyConnection) -> dict[str, dict]:
    """The store's filings by accession: ticker, form, filed, fiscal year and period."""
    rows = con.execute(f"SELECT {', '.join(FILING_COLUMNS)} FROM filings").fetchall()
    return {row[0]: dict(zip(FILING_COLUMNS, row, strict=True)) for row in rows}


def load_queries(path: Path, filings: dict[str, dict]) -> list[dict]:
    """The labelled queries; a bad line stops the run naming the line and the problem."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            q = json.loads(line)
            t = q["target"]
            q["as_of"] = date.fromisoformat(q["as_of"])
            for key in ("ticker", "form", "section_key", "fiscal_period", "fiscal_year"):
                t[key]  # noqa: B018 - presence check
        except (ValueError, KeyError, TypeError) as exc:
            sys.exit(f"{path} line {n}: not a labelled query ({type(exc).__name__}: {exc})")
        matches = [
            f
            for f in filings.values()
            if (f["ticker"], f["form"], f["fiscal_year"], f["fiscal_period"])
            == (t["ticker"], t["form"], t["fiscal_year"], t["fiscal_period"])
        ]
        if t.get("accession"):
            matches = [f for f in matches if f["accession"] == t["accession"]]
        if not matches:
            sys.exit(f"{path} line {n}: target filing is not in the store's filings table")
        if min(f["filed"] for f in matches) > q["as_of"]:
            sys.exit(f"{path} line {n}: target filing is filed after as_of {q['as_of']}")
        q["line"] = n
        out.append(q)
    if not out:
        sys.exit(f"{path}: no queries")
    return out


def bench_config(index_path: Path) -> Config:
    """The checkout's config with its index at `index_path` (never the project's own)."""
    cfg = load_config()
    project_index = cfg.retrieval.index.resolve()
    p = index_path.resolve()
    if p == project_index or project_index in p.parents:
        sys.exit(f"--index {index_path}: that is the project's own index; give another folder")
    cfg.retrieval.index = p
    return cfg


def run(cfg: Config, q: dict, mode: str, k: int = K, as_of: date | None = None) -> list[dict]:
    """`retrieve` for a labelled query (or a draw), with a budget that cuts nothing."""
    return retrieve(
        cfg,
        q["query"],
        [q["ticker"]] if isinstance(q["ticker"], str) else q["ticker"],
        as_of or q["as_of"],
        k=k,
        token_budget=BIG_BUDGET,
        mode=mode,
    )


def filing_items(items: list[dict]) -> list[dict]:
    """The first K filing items of a result."""
    return [it for it in items if it["track"] == "filing"][:K]


def is_hit(it: dict, t: dict, filings: dict[str, dict]) -> bool:
    """The item is the target: ticker, form, section, fiscal year and period all equal."""
    f = filings.get(it["accession"])
    return (
        f is not None
        and (it["ticker"], it["form"], it["section_key"])
        == (t["ticker"], t["form"], t["section_key"])
        and (f["fiscal_year"], f["fiscal_period"]) == (t["fiscal_year"], t["fiscal_period"])
    )


def same_filing(it: dict, t: dict, filings: dict[str, dict]) -> bool:
    """The item is from the target's filing (any section)."""
    f = filings.get(it["accession"])
    return f is not None and (f["ticker"], f["form"], f["fiscal_year"], f["fiscal_period"]) == (
        t["ticker"],
        t["form"],
        t["fiscal_year"],
        t["fiscal_period"],
    )


def quality(queries: list[dict], results: list, filings: dict[str, dict]) -> dict[str, Any]:
    """recall@5, MRR@10, right filing@5 and right section@5 of results for labelled queries."""
    ranks, filing5, section5 = [], 0, 0
    for q, items in zip(queries, results, strict=True):
        t, fi = q["target"], filing_items(items)
        rank = next((i + 1 for i, it in enumerate(fi) if is_hit(it, t, filings)), None)
        ranks.append(rank)
        filing5 += any(same_filing(it, t, filings) for it in fi[:5])
        section5 += any(
            (it["ticker"], it["form"], it["section_key"])
            == (t["ticker"], t["form"], t["section_key"])
            for it in fi[:5]
        )
    n = len(queries)
    return {
        "ranks": ranks,
        "recall5": sum(1 for r in ranks if r and r <= 5) / n,
        "mrr10": sum(1 / r for r in ranks if r) / n,
        "filing5": filing5 / n,
        "section5": section5 / n,
        "n_filing_items": [len(filing_items(items)) for items in results],
    }


def describe(it: dict | None, filings: dict[str, dict]) -> str:
    """An item as form, fiscal year and period, section."""
    if it is None:
        return "(nothing)"
    f = filings.get(it["accession"], {})
    return f"{it['form']} FY{f.get('fiscal_year')} {f.get('fiscal_period')} {it['section_key']}"


def pit_violations(items: list[dict], as_of: date) -> tuple[list[str], dict[str, int]]:
    """The items dated after as_of, and how many items of each track were checked."""
    bad, seen = [], {"filing": 0, "market": 0}
    for it in items:
        seen[it["track"]] = seen.get(it["track"], 0) + 1
        day = it["filed"] if it["track"] == "filing" else it["end"]
        if day is None or day > as_of or (it["available_from"] and it["available_from"] > as_of):
            bad.append(f"{it['id']} ({it['track']} {day}) returned as of {as_of}")
    return bad, seen


def point_in_time(
    default_cfg: Config, queries: list[dict], quality_results: dict, seed: int
) -> dict[str, Any]:
    """Every item of the quality pass, of the labelled queries with the configured filing
    share and of RANDOM_DATES random (as_of, tickers, query, mode) draws: the violations, the
    items checked per track and the calls made."""
    bad: list[str] = []
    seen = {"filing": 0, "market": 0}
    calls = 0

    def check(items: list[dict], as_of: date) -> None:
        nonlocal calls
        b, s = pit_violations(items, as_of)
        bad.extend(b)
        for key, v in s.items():
            seen[key] = seen.get(key, 0) + v
        calls += 1

    for mode in MODES:  # the quality pass (filing_share 1.0)
        for q, items in zip(queries, quality_results[mode], strict=True):
            check(items, q["as_of"])
    harness.log("point-in-time: labelled queries with the configured filing share")
    for mode in MODES:
        for q in queries:
            check(run(default_cfg, q, mode), q["as_of"])
    harness.log(f"point-in-time: {RANDOM_DATES} random as_of dates")
    rng = random.Random(seed)
    lo, hi = date(2023, 10, 1), date(2025, 12, 31)
    for i in range(RANDOM_DATES):
        as_of = lo + timedelta(days=rng.randrange((hi - lo).days + 1))
        tickers = sorted(rng.sample(TICKERS, rng.randint(1, 3)))
        q = {"query": rng.choice(queries)["query"], "ticker": tickers}
        check(run(default_cfg, q, MODES[i % len(MODES)], as_of=as_of), as_of)
    return {"violations": bad, "seen": seen, "calls": calls}
