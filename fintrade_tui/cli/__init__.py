"""CLI room: the `fintrade-tui` command. The click group and the helpers every command shares
live in `base.py`; each command group lives in its own module of this package (runs, judging,
questions, store...), and importing it here registers it on `main`. Every command has --json;
bad input exits 2 with one line naming the file, row or key and the fix."""

from fintrade_tui.cli import (  # noqa: F401  (imported to register their commands)
    agreement,
    ask,
    disputes,
    export,
    flaws,
    imports,
    item_audit,
    judging,
    models,
    own_questions,
    preferences,
    pull,
    quality,
    questions,
    report,
    retrieval,
    runs,
    screenshot,
    serve,
    settings,
    store,
    tui,
)
from fintrade_tui.cli.base import Ctx, emit_json, friendly, main, parse_day

__all__ = ["Ctx", "emit_json", "friendly", "main", "parse_day"]
