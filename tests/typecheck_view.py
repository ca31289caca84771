"""The type check of `make typecheck`: mypy over the package as it is installed.

`screens/` installs as `fintrade_tui.screens` (pyproject's package-dir), which mypy cannot see
through the editable install's import hook. So the check runs on a view: a folder whose
`fintrade_tui/` holds a link to each entry of the real one, plus `screens` linked in as the
subpackage. Errors are printed with the repository's own paths. `python -m tests.typecheck_view`
exits with mypy's status; tests/unit/test_typecheck.py runs it on a copy with a planted typo.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build_view(
    view: Path, package: Path = ROOT / "fintrade_tui", screens: Path = ROOT / "screens"
) -> Path:
    """Make `view/fintrade_tui` (links to `package`'s entries and `screens` as a subpackage)."""
    shutil.rmtree(view, ignore_errors=True)
    target = view / "fintrade_tui"
    target.mkdir(parents=True)
    for entry in package.iterdir():
        if entry.name not in ("screens", "__pycache__"):
            (target / entry.name).symlink_to(entry.resolve())
    (target / "screens").symlink_to(screens.resolve())
    return view


def run_mypy(view: Path, cache: Path, config: Path = ROOT / "pyproject.toml") -> tuple[int, str]:
    """mypy on the view: (exit status, its report with the repository's paths)."""
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(config),
           "--cache-dir", str(cache), "-p", "fintrade_tui"]  # fmt: skip
    done = subprocess.run(
        cmd, cwd=view, capture_output=True, text=True, env=os.environ | {"MYPY_FORCE_COLOR": "0"}
    )
    report = (done.stdout + done.stderr).replace("fintrade_tui/screens/", "screens/")
    return done.returncode, report


def main() -> int:
    """Check the package; MYPY_CACHE_DIR picks another cache (and view beside it) for a
    second checker running at the same time."""
    cache = Path(os.environ.get("MYPY_CACHE_DIR") or ROOT / ".mypy_cache")
    view = build_view(cache.with_name(cache.name + "-view"))
    status, report = run_mypy(view, cache)
    print(report, end="")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
