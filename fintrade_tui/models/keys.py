"""API-key room: a model's key is read from the environment variable its registry entry names,
never from a file, and remembered so every text shown or stored blanks it."""

from __future__ import annotations

import os

from fintrade_tui import redact
from fintrade_tui.errors import UserError


def env_key(what: str, env: str) -> str:
    """The API key in environment variable `env` (never from a file); a one-line error naming
    `what` when it is unset."""
    key = os.environ.get(env)
    if not key:
        raise UserError(
            what,
            f"needs the environment variable {env}",
            f"export {env}=... (keys are never read from files)",
        )
    redact.remember(key)
    return key
