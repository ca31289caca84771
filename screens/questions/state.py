"""Questions screen's state: the one object the screen creates (in `QuestionsScreen.__init__`)
and hands to its parts: where it opened (a ticker, a quarter), the bank as read, the questions
the filters leave, the filters `n` would apply, and the options each `c` / `s` cycles through.
No widgets here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from .filters import ALL, CATEGORIES, STATUSES

if TYPE_CHECKING:
    from fintrade_tui.workspace.questions import Question


def _options() -> dict[str, list[Any]]:
    return {"#q-category": [ALL, *CATEGORIES], "#q-quarter": [ALL], "#q-status": [ALL, *STATUSES]}


@dataclass
class QuestionsState:
    """Everything the Questions screen's parts share; the UI thread alone writes it."""

    initial_ticker: str = ""  # the ticker filter the screen opens with (upper case)
    initial_quarter: date | None = None  # the quarter it opens on, until the bank is read
    questions: list[Question] = field(default_factory=list)  # the bank
    shown: list[Question] = field(default_factory=list)  # those the filters leave
    suggested: dict[str, Any] | None = None  # what `n` applies when nothing is shown
    options: dict[str, list[Any]] = field(default_factory=_options)  # a Select's id: its values
