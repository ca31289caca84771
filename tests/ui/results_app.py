"""What the Results screen's tests share (tests/ui/test_results_*.py, tests/ui/
test_questions_screen.py and the other screens' tests on the same workspace): the terminal SIZE,
the fixture `ui_cfg` (imported as `results_ui_cfg`: the session store with a hand-populated
workspace of its own), `Recorder`, which records the screens an action would open, and `cells`,
a DataTable's rows as text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from fintrade_tui.config import Config

SIZE = (160, 48)


@pytest.fixture(name="ui_cfg")
def results_ui_cfg(built_store: Config, populated_workspace: Path) -> Config:
    """The session store with a workspace of its own, populated by hand (a copy of one
    `populate()` wrote: tests/ui/conftest.py)."""
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = populated_workspace
    return cfg


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, **kwargs: Any) -> None:
        self.calls.append((name, kwargs))


def cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
