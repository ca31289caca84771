"""Workspace room: the analyst's own records and every table they live in — questions, runs,
evidence, scores, preferences, screenings, item audits — their schema and migrations, and the
file shared by the explorer and the CLI. It imports only the ground floor (errors, redact)."""
