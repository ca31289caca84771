"""Reports room: what the records add up to for a reader — failure cases and their filters
(`failures.py`)."""
