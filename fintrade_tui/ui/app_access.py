"""The running app as our own app class, for the type checker.

Textual types `node.app` as `App[object]`, so reading `cfg`, `workspace()`, `notify_error` ...
off it does not type-check. `fintrade_app(self)` returns the same object typed `FinTradeApp`.
It is a cast, checked by nothing at run time (unlike `textual.getters.app`, which asserts the
class): tests that host one of our screens or widgets in a small app of their own keep working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

    from fintrade_tui.ui.app import FinTradeApp


def fintrade_app(node: MessagePump) -> FinTradeApp:
    """`node.app` (a screen's or widget's app), typed as the fintrade-tui app."""
    return cast("FinTradeApp", node.app)
