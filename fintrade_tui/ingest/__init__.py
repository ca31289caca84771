"""Ingest room: bundle readers for prices, filings, reference data and other sources."""
