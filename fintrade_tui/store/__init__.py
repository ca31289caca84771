"""Store room: the DuckDB database (schema, connections, point-in-time queries)."""
