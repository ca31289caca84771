"""Question-bank room: model, importers, resolution (companies, dates, indicators), coverage,
oracle evidence, scaling into variants, and FinAR-style tasks from the store's facts."""
