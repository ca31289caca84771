"""Errors the user can fix: one line naming the file, row or key, and the fix."""

from __future__ import annotations


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
