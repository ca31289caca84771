"""Signals room: Table 6 trading signals computed in DuckDB."""
