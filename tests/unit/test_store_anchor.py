"""The store connection a Runner holds open (`store.db.Anchor`): each run's own connection
joins it, and an ingest that renames a new store in is seen at the next run — while the old
file's database stayed open, DuckDB handed a new connection to the same path the old one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb

from fintrade_tui.config import Config
from fintrade_tui.store.db import Anchor, connect
from tests.conftest import needs_bundle

pytestmark = needs_bundle
ROE = "SELECT max(value) FROM fundamentals WHERE ticker = 'AAPL' AND ratio = 'roe'"


def test_a_replaced_store_is_read_at_the_next_hold(built_store: Config, tmp_path: Path) -> None:
    store = tmp_path / "store.duckdb"
    shutil.copyfile(built_store.store, store)
    anchor = Anchor(store)
    anchor.hold()
    with connect(store) as con:
        before = con.execute(ROE).fetchone()[0]
    # an ingest's swap: a new file written aside, renamed over the store
    new = tmp_path / ".store.duckdb.building"
    shutil.copyfile(store, new)
    with duckdb.connect(str(new)) as con:
        con.execute("UPDATE fundamentals SET value = 9.99 WHERE ticker = 'AAPL' AND ratio = 'roe'")
    os.replace(new, store)
    with connect(store) as con:  # not held again yet: the open database is the old file's
        assert con.execute(ROE).fetchone()[0] == before != 9.99
    anchor.hold()
    with connect(store) as con:
        assert con.execute(ROE).fetchone()[0] == 9.99
