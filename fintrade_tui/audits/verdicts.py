"""Audits room: the three verdicts every claim audit gives a figure (store, evidence, reference)."""

VERDICTS = SUPPORTED, CONTRADICTED, NOT_FOUND = "SUPPORTED", "CONTRADICTED", "NOT_FOUND"
