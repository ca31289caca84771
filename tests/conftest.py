"""Shared fixtures: the sample bundle, a store built from it once per session, mini bundles."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from fintrade_tui.config import Config, load_config

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = (ROOT.parent / "shared" / "data").resolve()
# the exported embedders are made once for every test config (each test's own folder would
# export again): the project's cache, as `make demo` uses it
os.environ.setdefault("FINTRADE_EMBED_EXPORTS", str(ROOT / "data" / "embedders"))
# and each filing is parsed once for all of them (the store build parses the bundle's 55): the
# project's parse cache, which a later run reads too. Tests of parsing itself use their own.
os.environ.setdefault("FINTRADE_PARSE_CACHE", str(ROOT / "data" / "parsed"))
AAPL_10K = BUNDLE / "fintradebench/filings/AAPL/10-K_2024-11-01_0000320193-24-000123.htm"
AAPL_10Q3 = BUNDLE / "fintradebench/filings/AAPL/10-Q_2024-08-02_0000320193-24-000081.htm"

needs_bundle = pytest.mark.skipif(not BUNDLE.is_dir(), reason="sample bundle not at ../shared/data")


# Under pytest-xdist (`make test`) a whole test file runs in one worker, taken in collection
# order: the files that take longest start first, so no worker is left alone with a long one at
# the end (from `--durations` on 2 cores; a file missing here only starts later).
SLOW_FILES = (
    "tests/reliability/test_kills_builds.py",
    "tests/reliability/test_kills_workspace.py",
    "tests/unit/test_ray_batch_faults.py",
    "tests/unit/test_ray_batch_kill_and_limits.py",
    "tests/unit/test_llama_server.py",
    "tests/unit/test_questions.py",
    "tests/unit/test_sec_pit.py",
    "tests/ui/test_arena_streaming.py",
    "tests/ui/test_arena_panes.py",
    "tests/ui/test_arena_scoring.py",
    "tests/unit/test_retrieval.py",
    "tests/unit/test_indexing.py",
    "tests/ui/test_tmux_walk.py",
    "tests/ui/test_streaming.py",
    "tests/unit/test_runs.py",
    "tests/ui/test_walk.py",
    "tests/unit/test_key_scan.py",
    "tests/unit/test_llama_engine.py",
    "tests/unit/test_import_generic.py",
    "tests/browser/test_serve.py",
    "tests/ui/test_results_failures.py",
    "tests/ui/test_results_matrix.py",
    "tests/ui/test_questions_screen.py",
    "tests/unit/test_embed_backends.py",
    "tests/unit/test_model_resolution.py",
    "tests/unit/test_judging.py",
    "tests/unit/test_filing_text.py",
    "tests/ui/test_screenshots.py",
    "tests/ui/test_panes.py",
    "tests/browser/test_html_report.py",
    "tests/unit/test_signals_blocks.py",
    "tests/ui/test_model_faults.py",
    "tests/ui/test_shared_workspace.py",
)


# The `long` tests: `make test-all` and CI run them, `make test` (the loop while you work)
# leaves them out. Each does something big for real, as its file or its mark says: kills the
# real binary, starts Ray, runs the local model or the embedder over real filings, drives
# Chromium or the binary under tmux, or sweeps every command or seed. Files here are long as a
# whole; a single test elsewhere carries `@pytest.mark.long` with its reason.
LONG_FILES = {
    "tests/reliability/test_kills_builds.py": "kills the real binary at each of its kill points",
    "tests/reliability/test_kills_workspace.py": "kills the real binary at each of its kill points",
    "tests/unit/test_ray_batch_faults.py": "starts Ray, whose workers each import litellm",
    "tests/unit/test_ray_batch_kill_and_limits.py": "starts Ray, whose workers each import litellm",
    "tests/unit/test_llama_engine.py": "runs SmolLM2 through llama.cpp",
    "tests/unit/test_llama_server.py": "serves SmolLM2 with llama-cpp-python's own server",
    "tests/unit/test_parse_cache.py": "builds a store five times, parsing a filing four",
    "tests/unit/test_embed_backends.py": "exports the embedder and runs it three ways",
    "tests/unit/test_retrieval.py": "embeds four filings at the product's settings",
    "tests/unit/test_indexing.py": "embeds filings, pauses and kills the indexer",
    "tests/unit/test_key_scan.py": "runs every writing command, then scans every file left",
    "tests/ui/test_tmux_walk.py": "drives the real binary in tmux",
    "tests/unit/test_typecheck.py": "type-checks a copy of the whole package, cold",
    "tests/ui/test_own_question_rag.py": "indexes a filing for the RAG pane with the embedder",
    "tests/browser/": "drives Chromium through Playwright",
}


def _long(path: str) -> bool:
    return any(path == f or (f.endswith("/") and path.startswith(f)) for f in LONG_FILES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _long(item.nodeid.split("::", 1)[0]):
            item.add_marker(pytest.mark.long)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # one process: the usual order
    # the store is built in the background from the start (`_store_build`): the files that do
    # not need it first, so the workers have something to run meanwhile. The long files come
    # after them too: their module setups (a store of their own, Ray, an embedder export)
    # are CPU-bound, and beside the build, which runs at a higher priority, they took three
    # times as long. Each half slowest first.
    rank = {f: i for i, f in enumerate(SLOW_FILES)}
    path = {item: item.nodeid.split("::", 1)[0] for item in items}
    late = {path[item] for item in items if "built_store" in item.fixturenames}
    late |= {p for p in path.values() if _long(p)}
    items.sort(key=lambda item: (path[item] in late, rank.get(path[item], len(rank))))


def write_config(folder: Path, bundle: Path, store: Path | None = None, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "config.yaml"
    path.write_text(f"bundle: {bundle}\nstore: {store or folder / 'store.duckdb'}\n{extra}")
    return path


def shared_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder every process of this run sees: the run's base folder, or with pytest-xdist
    the folder above the workers' own (one per run, so two runs never share it)."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    folder.mkdir(exist_ok=True)
    return folder


BUILD_LEAD = 5  # how much nicer than the store build the test processes run


def _store_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_folder(tmp_path_factory, "built-store")


@pytest.fixture(scope="session", autouse=True)
def _store_build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Where this run has a test that needs the store, the first worker to start begins
    building it in the background, with the real binary (`fintrade-tui ingest`): the workers
    run the tests that do not need it meanwhile, and no test's time holds the build. It ends
    by writing its exit status to `done`. The worker that started it waits for it before it
    exits, so the build never outlives the run.

    Every test process then lowers its own priority by BUILD_LEAD, the build keeping its own:
    CFS weighs each of its parsers 3x a worker, so it is ready sooner. A process a test
    starts inherits the worker's niceness, so the tests share the machine evenly."""
    needed = any("built_store" in item.fixturenames for item in request.session.items)
    proc = None
    if needed and BUNDLE.is_dir() and not os.environ.get("FINTRADE_TEST_STORE"):
        import subprocess
        import sys

        from filelock import FileLock

        shared = _store_folder(tmp_path_factory)
        with FileLock(shared.parent / "built-store.lock"):
            if not (shared / "started").exists():
                config = write_config(shared, BUNDLE)
                # the status goes to done.part, then is renamed: a reader never sees half of it
                script = (
                    '"$0" -m fintrade_tui --config "$1" ingest >"$2/ingest.log" 2>&1;'
                    ' echo $? >"$2/done.part" && mv "$2/done.part" "$2/done"'
                )
                proc = subprocess.Popen(["sh", "-c", script, sys.executable, config, shared])
                (shared / "started").touch()
    os.nice(BUILD_LEAD)
    yield
    if proc is not None:
        proc.wait()


@pytest.fixture(scope="session")
def built_store(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """The whole sample bundle ingested once per run (`_store_build`: about a minute and a
    half on 2 cores, in the background); this waits for it.

    Every xdist worker then tests its own copy: tests write workspaces and indexes beside the
    store, which two workers must not share. Where no build was started (a prebuilt store
    in FINTRADE_TEST_STORE), the first worker to ask copies it in, under a file lock."""
    if not BUNDLE.is_dir():
        pytest.skip("sample bundle not at ../shared/data")
    from filelock import FileLock

    from tests.clock import wait_until

    shared = _store_folder(tmp_path_factory)
    if (shared / "started").exists():
        wait_until(lambda: (shared / "done").is_file(), 1800, 0.2, "the store build")
        if (shared / "done").read_text().strip() != "0":
            log = (shared / "ingest.log").read_text(errors="replace")
            pytest.fail(f"building the test store failed:\n{log[-3000:]}")
    else:
        with FileLock(shared.parent / "built-store.lock"):
            if not (shared / "store.duckdb").is_file():
                config = load_config(write_config(shared, BUNDLE))
                if kept := os.environ.get("FINTRADE_TEST_STORE"):
                    # a developer's loop over a few files: a store built earlier from the same
                    # code (docs/contributing.md); CI never sets it
                    shutil.copyfile(kept, shared / "store.duckdb")
                else:
                    from fintrade_tui.ingest.pipeline import run_ingest

                    run_ingest(config)
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return load_config(shared / "config.yaml")
    folder = tmp_path_factory.mktemp("store")
    shutil.copyfile(shared / "store.duckdb", folder / "store.duckdb")
    return load_config(write_config(folder, BUNDLE))


@pytest.fixture
def con(built_store: Config) -> duckdb.DuckDBPyConnection:
    c = duckdb.connect(str(built_store.store), read_only=True)
    yield c
    c.close()


def synthetic_prices(start: str, days: int, seed: int, scale: float = 100.0) -> pd.DataFrame:
    """A business-day random walk in the Yahoo CSV layout."""
    rng = np.random.default_rng(seed)
    dates = pd.bdate_range(start, periods=days)
    close = scale * np.exp(np.cumsum(rng.normal(0, 0.02, days)))
    return pd.DataFrame(
        {
            "Date": dates.strftime("%Y-%m-%d"),
            "Open": close * 0.99,
            "High": close * 1.01,
            "Low": close * 0.98,
            "Close": close,
            "Adj Close": close * 0.95,
            "Volume": rng.integers(1_000, 100_000, days),
        }
    )


def write_reference(ref: Path) -> None:
    """The mini bundles' reference tables: AAPL and MSFT in the index, XYZ removed."""
    ref.joinpath("nasdaq100_sectors.csv").write_text(
        "Ticker,Company Name,Sector,Industry,Country\n"
        "AAPL,Apple Inc.,Technology,Consumer Electronics,United States\n"
        "MSFT,Microsoft Corporation,Technology,Software,United States\n"
    )
    ref.joinpath("nasdaq100_all_historical_tickers.csv").write_text("ticker\nAAPL\nMSFT\nXYZ\n")
    ref.joinpath("nasdaq100_component_changes.csv").write_text(
        "date,added_ticker,removed_ticker\n2010-01-04,MSFT,XYZ\n"
    )


def small_bundle(root: Path, filings: Iterable[Path]) -> Path:
    """A bundle under `root` built in a moment: AAPL and MSFT as synthetic prices from
    2021-06-01 (1,000 business days), the reference tables, and these real AAPL filings."""
    b = root / "bundle"
    for src in ("prices-yahoo", "reference", "fintradebench/filings/AAPL"):
        (b / src).mkdir(parents=True)
    for i, t in enumerate(("AAPL", "MSFT")):
        synthetic_prices("2021-06-01", 1000, seed=i).to_csv(b / "prices-yahoo" / f"{t}.csv")
    write_reference(b / "reference")
    for src in filings:
        shutil.copyfile(src, b / "fintradebench/filings/AAPL" / src.name)
    return b


@pytest.fixture
def mini_bundle(tmp_path: Path) -> Path:
    """A small bundle: two tickers in two price sources, reference tables, one real filing."""
    b = tmp_path / "bundle"
    for src in ("prices-yahoo", "prices-2020", "reference", "fintradebench/filings/AAPL"):
        (b / src).mkdir(parents=True)
    for i, t in enumerate(("AAPL", "MSFT")):
        # long enough that a signal refresh re-reads only part of the history (HISTORY rows)
        full = synthetic_prices("2019-06-03", 1500, seed=i)
        full.iloc[:1300].to_csv(b / "prices-yahoo" / f"{t}.csv", index=False)
        later = full.iloc[1150:].copy()
        for col in ("Open", "High", "Low", "Close"):
            later[col] = later[col] / 4  # a 4:1 split between the two sources' bases
        later["Adj Close"] = later["Adj Close"] / 4 * 1.01
        later.to_csv(b / "prices-2020" / f"{t}.csv", index=False)
    write_reference(b / "reference")
    if AAPL_10Q3.is_file():
        shutil.copy(AAPL_10Q3, b / "fintradebench/filings/AAPL" / AAPL_10Q3.name)
    return b
