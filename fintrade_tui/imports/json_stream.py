"""Streaming JSON room: the ijson helpers of the readers whose log is one large JSON document
(inspect's .json, promptfoo's output), so that a file of any size is read one part at a time.
A byte stream re-encoded as valid UTF-8, one value built from parser events, and the top-level
values of an object one by one.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from typing import Any

import ijson

_OPEN, _CLOSE = ("start_map", "start_array"), ("end_map", "end_array")


class Utf8Stream:
    """A byte stream re-encoded as valid UTF-8; `bad` turns true once a byte was replaced.

    ijson stops at the first invalid byte; replacing it keeps the stream readable, and `bad`
    lets the reader warn on the runs whose text shows the replacement.
    """

    def __init__(self, raw: Any, drop_bom: bool = False) -> None:
        self.raw, self.bad, self._tail = raw, False, b""
        encoding = "utf-8-sig" if drop_bom else "utf-8"
        self._dec = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._marks_in = self._marks_out = 0  # U+FFFD in the input vs in the output

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # ijson probes the stream type with read(0): do not flush the decoder
            return b""
        while True:
            chunk = self.raw.read(size)
            text = self._dec.decode(chunk, final=not chunk)
            self._marks_in += (self._tail + chunk).count(b"\xef\xbf\xbd")
            self._tail = chunk[-2:]
            self._marks_out += text.count("\ufffd")
            self.bad = self.bad or self._marks_out > self._marks_in
            if text or not chunk:  # an incomplete character alone: read on, it is not EOF
                return text.encode("utf-8")


class ValueBuilder:
    """One JSON value built from the ijson events that make it, first to last."""

    def __init__(self) -> None:
        self._builder, self._depth = ijson.ObjectBuilder(), 0

    def add(self, event: str, value: Any) -> bool:
        """Take one event; true once the value is whole (a scalar is whole at once)."""
        self._builder.event(event, value)
        self._depth += event in _OPEN
        self._depth -= event in _CLOSE
        return self._depth == 0

    @property
    def value(self) -> Any:
        return self._builder.value


def top_level_items(stream: Any, split: str) -> Iterator[tuple[str, Any]]:
    """(key, value) of the top-level object, each element of the array `split` as its own
    pair, so that the array is never held whole. ijson.JSONError when it is not an object."""
    events = ijson.parse(stream, use_float=True)
    first = next(events, ("", None, None))
    if first[:2] != ("", "start_map"):
        raise ijson.JSONError("not a JSON object")
    key, builder = "", None
    for prefix, event, value in events:
        if builder is None:
            if prefix == "":
                key = value if event == "map_key" else key
                continue
            if prefix == split and event in ("start_array", "end_array"):
                continue
            builder = ValueBuilder()
        if builder.add(event, value):
            yield key, builder.value
            builder = None
