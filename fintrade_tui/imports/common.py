"""Shared reader helpers room: what the run readers (inspect, promptfoo, lm-eval, generic JSONL)
do alike. A tool's verdict as one of our labels, a value as text or a number, a file as bytes or
lines, and UTF-8 decoded with stray bytes replaced and noted rather than fatal.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from fintrade_tui.errors import UserError
from fintrade_tui.imports.record import CORRECT, INCORRECT, PARTIAL, REFUSAL, ExternalRun

# per-sample fields the tools' logs may carry, each an ExternalRun field of the same name
# (condition -> condition_label)
META = ("condition", "variant", "ticker", "company", "as_of", "category")
REPLACED = "non-UTF-8 bytes replaced with U+FFFD"
# the longest line a JSONL reader takes: a real run line is kilobytes; a 1 GB line (a log
# written without newlines, a binary file) is refused after reading this much, not held whole
LINE_CAP = 16 * 1024 * 1024
TOO_DEEP = "nested deeper than the JSON parser allows"
# verdict words (inspect's C/I/P/N letters, pass/fail), matched lowercased
_WORDS = {"c": CORRECT, "correct": CORRECT, "pass": CORRECT, "i": INCORRECT}
_WORDS |= {"incorrect": INCORRECT, "fail": INCORRECT, "p": PARTIAL, "partial": PARTIAL}
_WORDS |= {"n": REFUSAL, "refusal": REFUSAL}
_NUMBERS = {1: CORRECT, 0: INCORRECT, 0.5: PARTIAL}


# ---- verdicts ------------------------------------------------------------------------------


def label_of(value: Any, words: bool = True) -> str | None:
    """Our label for a tool's verdict: true/1 correct, false/0 incorrect, 0.5 partial and, with
    `words`, "C"/"pass"/"I"/"fail"/...; anything else (0.73, "maybe", NaN) has none."""
    if isinstance(value, bool):
        return CORRECT if value else INCORRECT
    if isinstance(value, int | float):
        return _NUMBERS.get(value)  # NaN equals no key
    if words and isinstance(value, str):
        return _WORDS.get(value.strip().lower())
    return None


# ---- values --------------------------------------------------------------------------------


def as_text(v: Any) -> str | None:
    """Text as given; numbers, lists and objects as their JSON (an answer of 42 is "42")."""
    if v is None or isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False)


def text_or_none(v: Any) -> str | None:
    """As `as_text`, with an empty string as None too."""
    return None if v in (None, "") else as_text(v)


def int_or_none(value: Any) -> int | None:
    """An integer as the file gives it (not a bool, not a float), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def number_or_none(value: Any) -> float | None:
    """A finite number as a float (not a bool, not NaN or infinity), else None."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def compact(d: dict[str, Any]) -> dict[str, Any]:
    """The entries that say something: no None, "", [] or {} (extra stays small)."""
    return {k: v for k, v in d.items() if v not in (None, "", [], {})}


# ---- files ---------------------------------------------------------------------------------


def open_bytes(path: Path) -> IO[bytes]:
    """The file opened for binary reading; a file that cannot be opened is the user's to fix."""
    try:
        return path.open("rb")
    except OSError as exc:
        raise UserError(str(path), f"cannot be read ({exc.strerror})", "check the path") from None


def lines(path: Path, cap: int = LINE_CAP) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw bytes) of every non-blank line, read as a stream; a line
    longer than `cap` bytes is a UserError once `cap` bytes of it were read."""
    with open_bytes(path) as f:
        n = 0
        while raw := f.readline(cap + 1):
            n += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                mb = cap // (1024 * 1024)
                raise UserError(
                    f"{path} line {n}",
                    f"is longer than {mb} MB (no line break within it)",
                    "split it into one JSON object per line, or check it is a JSONL file",
                )
            if raw.strip():
                yield n, raw


def loads(text: str | bytes) -> Any:
    """json.loads, with nesting too deep for the parser as a ValueError (not a RecursionError,
    which would escape every `except ValueError` of the readers as a traceback)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError(TOO_DEEP, "", 0) from None


def decode(raw: bytes, warnings: list[str], encoding: str = "utf-8-sig") -> str:
    """UTF-8 text; stray bytes are replaced (U+FFFD) and noted rather than fatal."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError:
        warnings.append(REPLACED)
        return raw.decode(encoding, errors="replace")


def run_texts(run: ExternalRun) -> list[str | None]:
    """The run's texts that show a replaced byte (U+FFFD) when the file had one."""
    texts = [run.answer, run.question, run.prompt, run.reference_answer, run.error]
    return texts + [j.note for j in run.judgments]
