"""Reading a git snapshot of a public repository for ``gather.py``: ``Repo`` opens a bare git
directory (a mirror) or a checkout at one revision and reads files from it with ``git show`` /
``git ls-tree``, so that the origin recorded for every gathered item names the exact commit."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Repo:
    """A git snapshot of one public repository, read through ``git show``."""

    slug: str  # owner/name on GitHub
    git_dir: Path
    rev: str

    @classmethod
    def open(cls, slug: str, path: str, rev: str) -> Repo:
        p = Path(path)
        git_dir = p / ".git" if (p / ".git").exists() else p
        commit = _git(git_dir, "rev-parse", f"{rev}^{{commit}}").strip()
        return cls(slug=slug, git_dir=git_dir, rev=commit)

    def read_text(self, path: str) -> str:
        return _git(self.git_dir, "show", f"{self.rev}:{path}")

    def read_json(self, path: str) -> Any:
        return json.loads(self.read_text(path))

    def read_jsonl(self, path: str) -> list[Any]:
        return [json.loads(line) for line in self.read_text(path).splitlines() if line.strip()]

    def list_dir(self, path: str) -> list[str]:
        out = _git(self.git_dir, "ls-tree", "--name-only", f"{self.rev}:{path}")
        return sorted(line for line in out.splitlines() if line)

    def origin(self, path: str, key: str) -> str:
        return f"{self.slug}@{self.rev}:{path}#{key}"


def _git(git_dir: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {git_dir}: {proc.stderr.strip()}")
    return proc.stdout
