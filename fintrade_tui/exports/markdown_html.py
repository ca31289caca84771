"""Markdown to HTML for the HTML exports (case study, view report): references and answers drawn
as their authors wrote them — headings, bold, lists, tables, code — and safely.

markdown-it's CommonMark parser with raw HTML off: a `<script>` or `<img onerror>` in the text is
escaped and shows as text; links to `javascript:`, `vbscript:`, `file:` or `data:` are not made
(markdown-it's own link check). Control characters are made visible first (`printable`).
The numeric audit's marks survive: each claim's span is fenced with private-use characters
before parsing (Markdown leaves them alone) and the fences become `<mark>` elements after; the
same characters in the text itself are dropped, so the text cannot fence anything.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import Any

from fintrade_tui.safe_text import printable

_OPEN, _MID, _CLOSE = "\ue000", "\ue001", "\ue002"
_FENCES = re.compile(f"[{_OPEN}{_MID}{_CLOSE}]")
_MARK = re.compile(f"{_OPEN}(\\d+){_MID}")


@lru_cache(maxsize=1)
def _parser() -> Any:
    from markdown_it import MarkdownIt  # lazy: only the exports that write HTML need it

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def markdown_html(text: str | None) -> Any:
    """`text` as Markdown, rendered to safe HTML (a Markup: jinja2 keeps it as is)."""
    from markupsafe import Markup

    clean = _FENCES.sub("", printable(text or ""))
    return Markup(_parser().render(clean))


def marked_markdown_html(parts: Sequence[dict[str, Any]]) -> Any:
    """`answer_parts` (text pieces, some a claim of the numeric audit) rendered as one Markdown
    text, each claim's piece in a `<mark class="audit CLS" title="VERDICT: WHY">`."""
    from markupsafe import Markup

    marks: list[str] = []
    pieces = []
    for p in parts:
        text = _FENCES.sub("", printable(p["text"]))
        claim = p.get("claim")
        if claim:
            title = escape(f"{claim.get('verdict')}: {printable(str(claim.get('why') or ''))}")
            cls = escape(str(p.get("cls") or ""))
            marks.append(f'<mark class="audit {cls}" title="{title}">')
            text = f"{_OPEN}{len(marks) - 1}{_MID}{text}{_CLOSE}"
        pieces.append(text)
    html = _parser().render("".join(pieces))
    html = _MARK.sub(lambda m: marks[int(m.group(1))], html)
    return Markup(html.replace(_CLOSE, "</mark>"))
