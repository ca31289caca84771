"""Parsed-filing cache room: what parsing one filing gave (its record, numeric facts and Item
sections), kept as JSON under `parse_cache` and keyed by the file's bytes and the parser's
version, so a rebuild of the store (a grown bundle, a new store format) parses only the filings
that are new or changed. Parsing is ~85% of a store build's CPU (~1.4 s a filing on 2 cores).

The parser's version is a hash of the modules that parse (`ingest/ixbrl.py`,
`ingest/filings.py`, `retrieval/filing_text.py`) and the versions of edgartools and
ixbrlparse: a change to any of them misses every entry. An entry is written aside and renamed
(a kill never leaves half of one); one that cannot be read is parsed again. Dates survive the
round trip as dates; floats exactly (JSON keeps their shortest repr).
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import Any

ENV = "FINTRADE_PARSE_CACHE"  # overrides `parse_cache` (the test suite shares one cache)
_PARSERS = ("ingest/ixbrl.py", "ingest/filings.py", "retrieval/filing_text.py")
_LIBRARIES = ("edgartools", "ixbrlparse")


def folder(configured: Path) -> Path:
    """Where entries live: $FINTRADE_PARSE_CACHE, else the config's `parse_cache`."""
    return Path(os.environ.get(ENV) or configured)


@cache
def parser_version() -> str:
    """A hash of the parsing code and its libraries' versions."""
    from importlib.metadata import PackageNotFoundError, version

    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for rel in _PARSERS:
        h.update((root / rel).read_bytes())
    for lib in _LIBRARIES:
        try:
            h.update(f"{lib}=={version(lib)}".encode())
        except PackageNotFoundError:
            h.update(f"{lib} missing".encode())
    return h.hexdigest()[:16]


def key(path: Path) -> str:
    """The entry's name: the filing's bytes and the parser's version."""
    h = hashlib.sha256(path.read_bytes())
    h.update(parser_version().encode())
    return h.hexdigest()


def _encode(v: Any) -> Any:
    if isinstance(v, datetime):
        return {"$datetime": v.isoformat()}
    if isinstance(v, date):
        return {"$date": v.isoformat()}
    raise TypeError(f"{type(v).__name__} is not cached")


def _decode(d: dict[str, Any]) -> Any:
    if len(d) == 1:
        if "$date" in d:
            return date.fromisoformat(d["$date"])
        if "$datetime" in d:
            return datetime.fromisoformat(d["$datetime"])
    return d


def get(where: Path, name: str) -> tuple | None:
    """The parse stored under `name`, or None (absent or unreadable: parse it again)."""
    try:
        data = json.loads((where / f"{name}.json").read_text(), object_hook=_decode)
    except (OSError, ValueError, TypeError):
        return None
    # (filing, facts, sections), as parse_with_sections returns it; anything else is not ours
    shapes = (dict, list, list)
    if not isinstance(data, list) or len(data) != 3:
        return None
    if not all(isinstance(x, t) for x, t in zip(data, shapes, strict=True)):
        return None
    return tuple(data)


def put(where: Path, name: str, parsed: tuple) -> None:
    """Keep `parsed` under `name` (written aside, then renamed); a value JSON cannot hold, or a
    folder that cannot be written, leaves the entry out: the cache only saves time."""
    try:
        text = json.dumps(list(parsed), default=_encode)
        where.mkdir(parents=True, exist_ok=True)
        aside = where / f".{name}.{os.getpid()}.tmp"
        aside.write_text(text)
        os.replace(aside, where / f"{name}.json")
    except (OSError, TypeError, ValueError):
        return
