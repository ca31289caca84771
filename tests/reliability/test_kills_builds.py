"""SIGKILL tests (issue 20) of the two builds: `ingest` killed with a parser worker mid-filing,
with the new store half written, and with it built but not yet swapped in, leaves the old
store byte for byte; `index` killed after chunking, after the filing table, and with its
manifest staged reads as never built; each rerun sweeps the killed build's leftovers and gives
the complete result (how the kills land: tests/reliability/kill_cases.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fintrade_tui.ingest import parse_cache
from tests.conftest import needs_bundle
from tests.reliability.kill_cases import (
    QUARTERS,
    STORE_SKIP,
    cli_ok,
    kill_at,
    kill_bundle,
    kill_config,
    run_ok,
)
from tests.reliability.kill_harness import (
    file_sha,
    read_tables,
)

pytestmark = needs_bundle


# --- ingest ---------------------------------------------------------------------------------

BUILDING = ".store.duckdb.building-*"
INGEST_POINTS = {
    "a parser worker mid-filing": "ingest.parsing",
    "the new store half written": "ingest.filings-written",
    "the new store built, not yet swapped in": "ingest.store-built",
}


@pytest.fixture(scope="module")
def small(base: dict) -> dict:
    """A one-filing bundle and its store: the index tests' small index, and a store other than
    the base one for the ingest tests to start from."""
    root = base["root"] / "small"
    bundle = kill_bundle(root, QUARTERS[2:3])
    cfg = kill_config(root, bundle, root / "store.duckdb")
    cli_ok(["--config", str(cfg), "ingest", "--json"])  # one filing: parsed in this process
    return {"root": root, "bundle": bundle, "store": root / "store.duckdb", "config": cfg}


@pytest.mark.parametrize("point", INGEST_POINTS)
def test_kill_ingest(base: dict, small: dict, tmp_path: Path, point: str) -> None:
    # the store in place is the other bundle's, so the rerun has a new store to build. Killed
    # mid-parsing: the four filings (parsed by two worker processes; fewer run in-process);
    # killed later, once parsing is over: the one filing shows the same at a quarter the cost
    new, old = (base, small) if point == "a parser worker mid-filing" else (small, base)
    store = tmp_path / "store.duckdb"
    shutil.copyfile(old["store"], store)
    cfg = kill_config(tmp_path, new["bundle"], store)
    before, complete = file_sha(store), read_tables(new["store"], STORE_SKIP)
    assert read_tables(store, STORE_SKIP) != complete
    # mid-parsing needs filings to parse: a cache of its own, empty (the suite's would hold
    # them all: the store build parsed them)
    fresh = {parse_cache.ENV: str(tmp_path / "parsed")}
    parsing = point == "a parser worker mid-filing"
    out = kill_at(cfg, ["ingest", "--json"], INGEST_POINTS[point], env=fresh if parsing else None)
    if parsing:
        assert out.stopped != out.pid  # a pool worker stopped mid-filing, not ingest itself
        assert out.seen >= 2  # the two iXBRL parsers were running, and died with it
    else:
        assert list(tmp_path.glob(BUILDING))  # killed mid-build
    assert file_sha(store) == before  # the old store, byte for byte (the swap is the last step)
    run_ok(["--config", str(cfg), "ingest", "--json"])
    assert read_tables(store, STORE_SKIP) == complete
    assert not list(tmp_path.glob(".store.duckdb.building*"))  # the killed build is swept


# --- index ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index_base(small: dict) -> dict:
    """The one-filing store (a small index) and its index built without a kill."""
    cfg = small["config"]
    summary = json.loads(run_ok(["--config", str(cfg), "index", "--json"]))
    return {"store": small["store"], "bundle": small["bundle"], "summary": summary,
            "counts": _index_counts(cfg)}  # fmt: skip


def _index_counts(cfg: Path) -> dict | None:
    """Rows per table as a reader sees the index (None: never built) and the filings its
    manifest holds."""
    from fintrade_tui.config import load_config
    from fintrade_tui.errors import UserError
    from fintrade_tui.retrieval.index import TABLE, Index

    index = Index(load_config(cfg))
    try:
        seen = {t: index.open_table(t).count_rows() for t in TABLE}
    except UserError:
        return None
    return seen | {"filings": sorted(index.manifest()["filings"])}


# each point: the stop point, the tables the killed build had written by then
INDEX_POINTS = {
    "chunked, before the embedder": ("index.chunked", set()),
    "filing table written": ("index.filing-rows-written", {"filing_chunks"}),
    "text index built, manifest not swapped in": (
        "index.manifest-staged",
        {"filing_chunks", "market_chunks", "parents"},
    ),
}


@pytest.mark.parametrize("point", INDEX_POINTS)
def test_kill_index(index_base: dict, tmp_path: Path, point: str) -> None:
    import lancedb

    from fintrade_tui.retrieval.index import TABLE

    shutil.copyfile(index_base["store"], tmp_path / "store.duckdb")
    cfg = kill_config(tmp_path, index_base["bundle"], tmp_path / "store.duckdb")
    stop, written = INDEX_POINTS[point]
    kill_at(cfg, ["index", "--json"], stop)
    index = tmp_path / "index"
    assert set(lancedb.connect(str(index)).list_tables().tables) == written
    staged = list(index.glob("manifest.*.tmp"))  # a manifest not yet renamed into place
    assert len(staged) == (stop == "index.manifest-staged")
    assert _index_counts(cfg) is None  # killed before its manifest: reads as never built
    again = json.loads(run_ok(["--config", str(cfg), "index", "--json"]))
    assert not list(index.glob("manifest.*.tmp"))  # the killed build's manifest is swept
    keys = ("filings", "filing_chunks", "market_chunks")
    assert {k: again[k] for k in keys} == {k: index_base["summary"][k] for k in keys}
    assert _index_counts(cfg) == index_base["counts"]
    db = lancedb.connect(str(tmp_path / "index"))  # the newest versions too: no row twice
    newest = {t: db.open_table(n).count_rows() for t, n in TABLE.items()}
    assert newest == {t: index_base["counts"][t] for t in TABLE}
