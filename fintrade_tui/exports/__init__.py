"""Exports room: case studies (Markdown) and tables (CSV / JSONL) written from the store and
the workspace."""
