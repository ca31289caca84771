"""Question-file reading room: a question file's text read safely (a line-length cap, UTF-8,
a spreadsheet's BOM), and its CSV records, JSON lines or JSON document parsed with the line each
record starts on, so that every error is one `UserError` naming the file and the line. The
importers (importers.py) turn what is read here into questions."""

from __future__ import annotations

import bisect
import csv
import io
import json
import json.decoder
import json.scanner
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fintrade_tui.errors import UserError

# the longest line a question file may have (a question with its excerpts is kilobytes); a
# longer one (a 1 GB line, a binary file) is refused after reading this much, never whole
LINE_CAP = 16 * 1024 * 1024
JSON_TOO_DEEP = "nested deeper than the JSON parser allows"


def at_line(path: Path, line: int) -> str:
    """Where an error is: `<path> line <n>` (1-based, physical lines)."""
    return f"{path} line {line}"


def _check_lines(path: Path, cap: int = LINE_CAP) -> None:
    """A file with a line over `cap` bytes is a UserError, found reading `cap` bytes at most
    at a time (a small file is not scanned)."""
    if path.stat().st_size <= cap:
        return
    with path.open("rb") as f:
        n = 0
        while raw := f.readline(cap + 1):
            n += 1
            if len(raw) > cap and not raw.endswith(b"\n"):
                mb = cap // (1024 * 1024)
                problem = f"is longer than {mb} MB (no line break within it)"
                raise UserError(at_line(path, n), problem, "one question per line; is it text?")


def read_question_text(path: Path) -> str:
    """The file's text (a leading BOM dropped), or a one-line UserError: missing, not UTF-8,
    unreadable, or a line over LINE_CAP."""
    try:
        _check_lines(path)
        return path.read_text(encoding="utf-8-sig")  # spreadsheet exports often start with a BOM
    except FileNotFoundError:
        raise UserError(str(path), "file not found", "check the path") from None
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise UserError(at_line(path, line), "is not UTF-8 text", "re-save it as UTF-8") from None
    except OSError as exc:
        raise UserError(str(path), f"cannot be read ({exc.strerror})", "check the path") from None


def csv_records(path: Path, text: str) -> list[tuple[int, list[str]]]:
    """(start line, fields) per record; strict quoting so a stray quote is reported, not eaten."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records, start = [], 1
    try:
        for row in reader:
            if any(cell.strip() for cell in row):  # blank lines between records are not rows
                records.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise UserError(
            at_line(path, start), f"is not valid CSV ({exc})", "check the quotes of that record"
        ) from None
    return records


def json_object_lines(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) per non-blank line of a JSONL text; a line that is not a JSON object is
    a UserError naming it."""
    # split on "\n" only: str.splitlines would also break on U+2028 inside JSON strings
    for n, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            problem = f"is not valid JSON ({exc.msg} at column {exc.colno})"
            raise UserError(at_line(path, n), problem, "fix or remove that line") from None
        except RecursionError:
            raise UserError(at_line(path, n), JSON_TOO_DEEP, "flatten that line's JSON") from None
        if not isinstance(obj, dict):
            raise UserError(at_line(path, n), "is not a JSON object", "write one {...} per line")
        yield n, obj


def load_json_document(path: Path, text: str) -> tuple[Any, dict[int, int]]:
    """Parse one JSON document and note the line each object starts on, for messages."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    lines: dict[int, int] = {}

    # json's pure-Python object parser and scanner, and the decoder attributes they read, are
    # undocumented, so typeshed leaves them out: [attr-defined] below is that, not a typo
    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[dict[str, Any], int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
        lines[id(obj)] = bisect.bisect_right(starts, s_and_end[1] - 1)
        return obj, end

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    # the C scanner skips the hook
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        return decoder.decode(text), lines
    except json.JSONDecodeError as exc:
        problem = f"is not valid JSON ({exc.msg} at column {exc.colno})"
        raise UserError(at_line(path, exc.lineno), problem, "fix the syntax there") from None
    except RecursionError:
        raise UserError(str(path), JSON_TOO_DEEP, "flatten the document") from None
