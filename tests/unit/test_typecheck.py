"""The type check catches what a newcomer's rename would break: a copy of the explorer with a
misspelt field of the Arena's state (one read, one write) fails `make typecheck`'s mypy run, on
those two lines, with the state type named."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.typecheck_view import ROOT, build_view, run_mypy

PLANTS = {
    # part, what it says, the typo planted
    "layout.py": ("state.compare = None", "state.compair = None"),
    "running.py": ("q = state.question\n", "q = state.questoin\n"),
}


def test_a_misspelt_arena_state_field_fails_the_type_check(tmp_path: Path) -> None:
    screens = tmp_path / "screens"
    shutil.copytree(ROOT / "screens", screens, ignore=shutil.ignore_patterns("__pycache__"))
    for part, (right, typo) in PLANTS.items():
        path = screens / "arena" / part
        source = path.read_text(encoding="utf-8")
        assert source.count(right) == 1, f"{part} no longer says {right!r}: plant another typo"
        path.write_text(source.replace(right, typo), encoding="utf-8")
    view = build_view(tmp_path / "view", screens=screens)
    status, report = run_mypy(view, tmp_path / "mypy-cache")
    assert status == 1, report
    errors = [line for line in report.splitlines() if ": error:" in line]
    planted = [e for e in errors if e.startswith("screens/arena/")]
    assert len(planted) == 2, report
    assert any("layout.py" in e and '"ArenaState" has no attribute "compair"' in e for e in planted)
    assert any(
        "running.py" in e and '"ArenaState" has no attribute "questoin"' in e for e in planted
    )
