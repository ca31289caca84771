"""Bring your own results: readers of other tools' logs (inspect_ai, promptfoo, lm-eval, a
documented JSONL) into one record shape, and the transactional load into the workspace."""
