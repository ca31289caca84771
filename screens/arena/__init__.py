"""The Arena package: the screen (screen.py), its one state (state.py) and the parts that read
it — opening, layout, running, scoring, checks, refresh — plus the question picker widget."""

from .screen import RETRY, ArenaScreen
from .state import ArenaState

__all__ = ["RETRY", "ArenaScreen", "ArenaState"]
