"""`fintrade-tui index` with no ticker builds every ticker's market track, as its help and the
retrieval page say (an empty ticker list once reached the market track as "none of them", so
the whole-universe build embedded filings only and each RAG run built its tickers' tracks)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import load_config
from fintrade_tui.ingest.pipeline import run_ingest
from fintrade_tui.retrieval.index import Index
from tests.conftest import small_bundle, write_config


def test_index_with_no_ticker_builds_every_market_track(tmp_path: Path) -> None:
    # AAPL's and MSFT's synthetic prices (to March 2025), no filings; a short market window
    index = tmp_path / "lancedb"
    extra = f"retrieval: {{index: {index}, market_since: 2025-01-01, embed_tokens: 16}}\n"
    config = write_config(tmp_path / "cfg", small_bundle(tmp_path, []), extra=extra)
    cfg = load_config(config)
    run_ingest(cfg)
    out = CliRunner().invoke(main, ["--config", str(config), "index", "--json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert summary["filings"] == 0 and summary["market_chunks"] > 0
    assert Index(cfg).tickers() == {"AAPL", "MSFT"}
    # per ticker: one chunk a month and one a quarter, January to March 2025
    per = Counter(k.split(":")[1] for k in Index(cfg).manifest()["market"])
    assert per == {"AAPL": 4, "MSFT": 4}, per
