"""Judging room: LLM judge, numeric audit, SECQUE panel, FinAR RMS metric, tournament and
annotations (human and LLM scores in one append-only record shape)."""
