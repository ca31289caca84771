"""The parse cache (ingest/parse_cache.py): a second build of the same bundle reads every
filing's parse instead of parsing it and builds the same store, table for table; a filing
whose bytes changed, or a parser of another version, is parsed again; an unreadable entry is
parsed again, never trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.ingest import parse_cache
from tests.conftest import needs_bundle, write_config
from tests.reliability.kill_harness import read_tables

pytestmark = needs_bundle
# what differs between two builds of one bundle: when each was built, and the last bits of
# the recursive averages (EMA, Wilder's RSI: ~1e-14 from one build to the next, with or
# without the cache); the parse feeds neither
SKIP = {"meta": "key <> 'built_at'", "signals": "false"}


def _ingest(config: Path) -> dict:
    res = CliRunner().invoke(main, ["--config", str(config), "ingest", "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_a_rebuild_reads_each_parse_and_builds_the_same_store(
    mini_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "parsed"
    monkeypatch.setenv(parse_cache.ENV, str(cache))
    config = write_config(tmp_path / "cfg", mini_bundle)
    store = tmp_path / "cfg" / "store.duckdb"
    first = _ingest(config)
    assert (first["filings"], first["filings_from_cache"]) == (1, 0)
    [entry] = cache.glob("*.json")
    built = read_tables(store, SKIP)
    again = _ingest(config)
    assert (again["filings"], again["filings_from_cache"]) == (1, 1)
    assert read_tables(store, SKIP) == built  # dates, floats and sections round-trip exactly

    # an entry that cannot be read is parsed again, and written again whole
    for unreadable in ("{not json", "{}", '[{}, [], "sections"]'):
        entry.write_text(unreadable)
        assert parse_cache.get(cache, entry.stem) is None
    entry.write_text("{not json")
    assert _ingest(config)["filings_from_cache"] == 0
    assert json.loads(entry.read_text())[0]["accession"] == _accession(store)
    # another parser (its code or its libraries) misses every entry
    monkeypatch.setattr(parse_cache, "parser_version", lambda: "another-parser")
    assert _ingest(config)["filings_from_cache"] == 0
    assert read_tables(store, SKIP) == built
    # the filing's bytes changed (a comment before its end): parsed again
    monkeypatch.undo()
    monkeypatch.setenv(parse_cache.ENV, str(cache))
    path = next((mini_bundle / "fintradebench/filings/AAPL").glob("*.htm"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("</html>", "<!-- re-downloaded --></html>"), encoding="utf-8")
    assert _ingest(config)["filings_from_cache"] == 0


def _accession(store: Path) -> str:
    import duckdb

    with duckdb.connect(str(store), read_only=True) as con:
        return con.execute("SELECT accession FROM filings").fetchone()[0]
