"""Errors the user can fix: one line naming the file, row or key, and the fix — and the record
of a bundle file refused as bad input (quarantined, reported instead of loaded)."""

from __future__ import annotations

from dataclasses import dataclass


class UserError(Exception):
    """Bad input. The CLI prints `str(err)` on one line and exits with code 2."""

    def __init__(self, where: str, problem: str, fix: str = "") -> None:
        self.where = where
        self.problem = problem
        self.fix = fix
        text = f"{where}: {problem}"
        if fix:
            text += f" (fix: {fix})"
        super().__init__(" ".join(text.split()))


@dataclass
class Quarantined:
    """A bundle file the ingest refused (unreadable, suspect, inconsistent), and why: a row of
    the store's `quarantine` table."""

    file: str
    source: str
    ticker: str
    reason: str
