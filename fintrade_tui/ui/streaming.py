"""Streaming Markdown into the Arena's panes, cheaply enough for three at once.

Textual's Markdown appends by re-parsing the last block and replacing it: a paragraph is
updated in place, but a list is removed and mounted again, every item, on every append - and
each append runs inside `app.batch_update()` and awaits there, so while any pane is appending
the screen does not repaint. Three panes streaming bullet lists froze the Arena for seconds at a
time (`bench_tui.py --lists`). `StreamingMarkdown` updates a list in place instead: the last
item's content, then the new items. (Text still goes through Textual's public MarkdownStream,
`Markdown.get_stream`; a list that grows in place needs Textual's private block API, which only
ui/textual_private.py touches.)

Two more costs of an append, paid up to 300 times a second with three panes streaming: Textual
builds a new markdown-it parser for each one (here one parser is shared), and a paragraph's
update asks for a layout pass of the whole screen even when the new words fit on its last line
(here it asks only when its height changes)."""

from __future__ import annotations

from contextlib import suppress
from functools import cache
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from textual.await_complete import AwaitComplete
from textual.containers import Horizontal, Vertical
from textual.geometry import Size
from textual.visual import VisualType
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from fintrade_tui.safe_text import printable
from fintrade_tui.ui.textual_private import (
    AppendHook,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownParagraph,
    copy_context,
    parsed_blocks,
    update_paragraph,
)


@cache
def shared_parser() -> MarkdownIt:
    """The parser Textual's Markdown would build for every append ("gfm-like"); parsing keeps
    no state in it, so one serves every pane."""
    return MarkdownIt("gfm-like")


def update_steady(widget: Static, content: VisualType) -> None:
    """`widget.update(content)`, asking for a layout pass of the screen only when the widget's
    height changes (or it has not been laid out yet)."""
    before = widget.size
    widget.update(content, layout=False)
    layout_if_resized(widget, before)


def layout_if_resized(widget: Widget, before: Size) -> None:
    """A layout pass for a widget whose content changed, when its height at its width is no
    longer `before`'s (or it has not been laid out yet)."""
    height, width = before.height, before.width
    if (
        not width
        or widget.get_content_height(widget.container_size, widget.app.size, width) != height
    ):
        widget.refresh(layout=True)


class SteadyParagraph(MarkdownParagraph):
    """A paragraph that asks for a layout pass only when its height changes (Textual's
    `set_content`, which an append's in-place update calls, updates through here)."""

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        before = self.size
        super().update(content, layout=False)
        layout_if_resized(self, before)


async def _replace(old: Widget, new: Widget) -> None:
    parent = old.parent
    if not isinstance(parent, Widget):  # a mounted block's parent is a widget
        raise RuntimeError(f"{old!r} is not mounted in a widget")
    await parent.mount(new, after=old)
    await old.remove()


async def _update_inner(old: Widget, new: MarkdownBlock) -> None:
    """Bring a mounted block inside a list item up to date with its re-parsed version."""
    if isinstance(old, MarkdownParagraph) and type(new) is type(old):
        await update_paragraph(old, new)  # Textual's own in-place paragraph update
    elif isinstance(old, _InPlaceList) and type(new) is type(old):
        await old.update_in_place(new)
    else:
        await _replace(old, new)


if TYPE_CHECKING:
    _ListBlock = MarkdownBlock  # for the type checker: mixed into Textual's list blocks
else:
    _ListBlock = object


class _InPlaceList(AppendHook, _ListBlock):
    """Mixed into Textual's list blocks: an append updates the last item and mounts new ones
    instead of mounting the whole list again."""

    if TYPE_CHECKING:

        def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
            """Each item's bullet as drawn (the concrete list classes say how)."""
            ...

    async def update_from_block(self, block: MarkdownBlock) -> None:
        """The document's last block, re-parsed by an append (through AppendHook)."""
        if type(block) is type(self):
            await self.update_in_place(block)
        else:  # as Textual does: the old block goes, the new one ends the document
            await _replace(self, block)

    async def update_in_place(self, block: Any) -> None:
        rows = list(self.query_children(Horizontal))
        items = [b for b in parsed_blocks(block) if isinstance(b, MarkdownListItem)]
        symbols = self._symbols(items)
        if not rows or len(items) < len(rows) or symbols[: len(rows)] != self._symbols_shown():
            await _replace(self, block)
            return
        copy_context(self, block)
        last = rows[-1].query_one(Vertical)
        shown = list(last.children)
        fresh = parsed_blocks(items[len(rows) - 1])
        if len(fresh) < len(shown) or not shown:
            await last.remove_children()
            await last.mount_all(fresh)
        else:
            await _update_inner(shown[-1], fresh[len(shown) - 1])
            if fresh[len(shown) :]:
                await last.mount_all(fresh[len(shown) :])
        new_rows = [self._row(symbols[i], items[i]) for i in range(len(rows), len(items))]
        if new_rows:
            await self.mount_all(new_rows)

    @staticmethod
    def _row(symbol: str, item: MarkdownListItem) -> Horizontal:
        bullet = MarkdownBullet()
        bullet.symbol = symbol
        return Horizontal(bullet, Vertical(*parsed_blocks(item)))

    def _symbols_shown(self) -> list[str]:
        return [
            b.symbol
            for b in self.query(MarkdownBullet)
            if b.parent is not None and b.parent.parent is self
        ]


class InPlaceBulletList(_InPlaceList, MarkdownBulletList):
    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        return [item.bullet for item in items]


class InPlaceOrderedList(_InPlaceList, MarkdownOrderedList):
    def _symbols(self, items: list[MarkdownListItem]) -> list[str]:
        """Numbers as Textual draws them (right-aligned to the widest); a change of width
        (item 10 arriving) redraws the whole list."""
        start = 1
        if items:
            with suppress(ValueError):
                start = int(items[0].bullet)
        labels = [f"{n}. " for n in range(start, start + len(items))]
        width = max((len(x) for x in labels), default=0)
        return [x.rjust(width + 1) for x in labels]


class StreamingMarkdown(Markdown):
    """Textual's Markdown with lists that grow in place."""

    BLOCKS = {
        **Markdown.BLOCKS,
        "paragraph_open": SteadyParagraph,
        "bullet_list_open": InPlaceBulletList,
        "ordered_list_open": InPlaceOrderedList,
    }

    def __init__(self, markdown: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("parser_factory", shared_parser)
        super().__init__(printable(markdown) if markdown else markdown, **kwargs)

    # an answer is data: its control characters never reach the terminal (Markdown itself
    # does not parse Textual markup, so `[b]` stays text)
    def update(self, markdown: str) -> AwaitComplete:
        return super().update(printable(markdown))

    def append(self, markdown: str) -> AwaitComplete:
        return super().append(printable(markdown))
