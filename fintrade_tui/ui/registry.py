"""Screen registry: name -> screen class, imported lazily so the first screen shows fast."""

from __future__ import annotations

import importlib
from typing import Any

SCREENS = {
    "universe": ("fintrade_tui.screens.universe", "UniverseScreen"),
    "company": ("fintrade_tui.screens.company", "CompanyScreen"),
    "questions": ("fintrade_tui.screens.questions", "QuestionsScreen"),
    "arena": ("fintrade_tui.screens.arena", "ArenaScreen"),
    "results": ("fintrade_tui.screens.results", "ResultsScreen"),
    "disagreements": ("fintrade_tui.screens.disagreements", "DisagreementsScreen"),
    "audit": ("fintrade_tui.screens.audit", "AuditScreen"),
    "dispute": ("fintrade_tui.screens.dispute", "DisputeScreen"),
    "own_question": ("fintrade_tui.screens.own_question", "OwnQuestionScreen"),
}


def make_screen(name: str, **kwargs: Any) -> Any:
    module, cls = SCREENS[name]
    return getattr(importlib.import_module(module), cls)(**kwargs)
