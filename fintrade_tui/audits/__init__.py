"""Audits room: an answer's claims held against something outside it — the market-data store
at the question's as-of (`numeric.py`), the supplied evidence and the reference (`evidence.py`),
the company asked about (`company.py`) — and text that addresses the grader
(`manipulation.py`). Deterministic, no model."""
