"""Import formats room: the registry of run readers and format detection from content.

Each reader module has FORMAT, `sniff(path, head)` and `read(path)`; detection asks them in
a fixed order (the most specific first), on the file's first 64 KiB, so a `.json` file named
anything is still recognised by what it holds.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from fintrade_tui.errors import UserError
from fintrade_tui.imports.record import ExternalRun

# format name -> module (imported on first use: inspect's reader may import inspect_ai)
_MODULES = {
    "inspect": "fintrade_tui.imports.inspect_log",
    "promptfoo": "fintrade_tui.imports.promptfoo",
    "lm-eval": "fintrade_tui.imports.lm_eval",
    "jsonl": "fintrade_tui.imports.generic",
}
FORMATS = tuple(_MODULES)
FORMAT_FIX = "pass --format " + "|".join(FORMATS)
HEAD = 64 * 1024


def reader(fmt: str) -> ModuleType:
    if fmt not in _MODULES:
        raise UserError(f"--format {fmt!r}", "is not a run format", f"use {', '.join(FORMATS)}")
    return importlib.import_module(_MODULES[fmt])


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            return f.read(HEAD)
    except FileNotFoundError:
        raise UserError(str(path), "file not found", "check the path") from None
    except IsADirectoryError:
        raise UserError(str(path), "is a folder", "name the log files inside it") from None
    except OSError as exc:
        raise UserError(str(path), f"cannot be read ({exc.strerror})", "check the path") from None


def detect(path: Path) -> str:
    """The run format of a file, from its content."""
    head = _head(path)
    if not head.strip():
        raise UserError(str(path), "is empty", "pick a log file with runs in it")
    for fmt in FORMATS:
        if reader(fmt).sniff(path, head):
            return fmt
    raise UserError(
        str(path),
        "is not a run log this tool reads (inspect .eval/.json, promptfoo -o JSON, lm-eval "
        "samples JSONL, or the generic run JSONL)",
        FORMAT_FIX,
    )


def read_runs(path: Path, fmt: str | None = None) -> tuple[str, Iterator[ExternalRun]]:
    """(format, the file's runs as a stream)."""
    if fmt is None:
        fmt = detect(path)
    else:
        _head(path)  # a missing file is named before any reader opens it
    return fmt, reader(fmt).read(path)
