"""Stored-text room: the filings and their section text as the store holds them, read for the
retrieval index (and for Long-Context evidence, which sends whole sections).

Ingest parses each filing once into `filing_sections`; these reads are all the index needs from
the store, kept apart from `index.py` so that a reader of sections pulls in neither LanceDB's
tables nor numpy and pyarrow. `text_keys` is what decides whether a filing is re-chunked.
"""

from __future__ import annotations

from typing import Any, cast

import duckdb

from fintrade_tui.config import Config


def text_keys(
    con: duckdb.DuckDBPyConnection, cfg: Config, accessions: list[str] | None = None
) -> dict[str, str]:
    """Per accession (all, or those given): a hash of its stored section text and the
    chunking settings (a filing is re-chunked when either changes; a re-parsed but identical
    text is not)."""
    r = cfg.retrieval
    rows = con.execute(
        "SELECT accession, md5(string_agg(section_key || chr(31) || title || chr(31) || text,"
        " chr(30) ORDER BY ord)) FROM filing_sections"
        " WHERE ?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], accession) GROUP BY accession",
        [accessions, accessions],
    ).fetchall()
    return {a: f"{h[:16]}:{r.parent_tokens}:{r.child_tokens}:{r.overlap_tokens}" for a, h in rows}


def filing_rows(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every `filings` row with its company name, by ticker and filing date."""
    # pandas types a record's keys Hashable: here they are the query's column names
    return cast(
        "list[dict[str, Any]]",
        con.execute(
            "SELECT f.*, coalesce(c.name, f.ticker) AS company FROM filings f"
            " LEFT JOIN companies c USING (ticker) ORDER BY f.ticker, f.filed"
        )
        .df()
        .to_dict("records"),
    )


def stored_sections(con: duckdb.DuckDBPyConnection, accession: str) -> list[tuple[str, str, str]]:
    """One filing's (section_key, title, text) sections as ingest stored them."""
    return con.execute(
        "SELECT section_key, title, text FROM filing_sections WHERE accession = ? ORDER BY ord",
        [accession],
    ).fetchall()
