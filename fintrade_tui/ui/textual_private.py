"""UI room: the one module that uses Textual's private API, each use checked on Textual 8.2.

pyproject.toml pins textual to 8.2.x. Everywhere else (fintrade_tui/, screens/, tests/) uses
Textual's public API only: tests/ui/test_textual_private.py fails on a `_`-prefixed Textual
name used anywhere but here, and checks that every private name used here still exists.
Each use says why no public API does it; when Textual offers one, the use moves out of here.

- Markdown blocks (ui/streaming.py grows a streamed list in place instead of mounting it again
  on every append): the block classes are not exported, a parsed block keeps its children in
  `_blocks` until it is composed, and `Markdown.append` updates the document's last block
  through its `_update_from_block`.
- The screen's update timer (ui/frames.py): a screen paints from `Screen._update_timer`, which
  Textual builds at 60 fps and leaves paused after a tick that fell inside `App.batch_update()`.
- Probes for tests: whether a screen has changes still to paint, the notifications shown, and
  a message delivered the way the terminal's reader thread delivers it.
"""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.message import Message
from textual.notifications import Notification
from textual.screen import Screen
from textual.timer import Timer

# Not exported by textual.widgets.markdown; Markdown.BLOCKS (the documented way to replace the
# block classes) names the lists and the paragraph but neither the bullet nor the list item.
from textual.widgets._markdown import (
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownParagraph,
)
from textual.widgets.markdown import MarkdownBlock

CHECKED_ON = "8.2"  # the Textual minor release every use below was read against

__all__ = [
    "CHECKED_ON",
    "AppendHook",
    "FrameTimerHook",
    "MarkdownBullet",
    "MarkdownBulletList",
    "MarkdownListItem",
    "MarkdownOrderedList",
    "MarkdownParagraph",
    "batch_open",
    "copy_context",
    "notifications",
    "paint_now",
    "paint_pending",
    "parsed_blocks",
    "send_as_terminal",
    "update_paragraph",
]


# -- Markdown blocks -----------------------------------------------------------------------


def parsed_blocks(block: MarkdownBlock) -> list[MarkdownBlock]:
    """The children the parser gave a block that is not composed yet (a list's items, an
    item's paragraphs): Textual keeps them in `_blocks` and empties it on compose."""
    return block._blocks


def copy_context(block: MarkdownBlock, source: MarkdownBlock) -> None:
    """What Textual's own in-place updates copy from the re-parsed block (its token)."""
    block._copy_context(source)


async def update_paragraph(paragraph: MarkdownParagraph, source: MarkdownBlock) -> None:
    """Textual's in-place update of a mounted paragraph from its re-parsed version (a
    paragraph's text is set, not mounted again)."""
    await paragraph._update_from_block(source)


class AppendHook:
    """Mixed into a Markdown block class (before it): `Markdown.append` re-parses the
    document's tail and hands the last mounted block its new version through the private
    `_update_from_block`; here it reaches the block's own `update_from_block`."""

    async def _update_from_block(self, block: MarkdownBlock) -> None:
        await self.update_from_block(block)

    async def update_from_block(self, block: MarkdownBlock) -> None:
        raise NotImplementedError


# -- the screen's update timer ---------------------------------------------------------------


class FrameTimerHook:
    """Mixed into a Screen (before it): the timer Textual's screen paints from
    (`Screen._update_timer`, resumed on idle when something is dirty) is the one the screen's
    `frame_timer()` makes."""

    @property
    def _update_timer(self) -> Timer:
        return self.frame_timer()

    def frame_timer(self) -> Timer:
        raise NotImplementedError


def batch_open(app: App[Any]) -> bool:
    """Inside `app.batch_update()` (which Markdown appends and mounts open): Textual neither
    resumes a screen's update timer nor paints on its tick, and says so only in
    `_batch_count`."""
    return app._batch_count > 0


def paint_now(screen: Screen[Any]) -> None:
    """Textual's own tick of the screen's update timer: pause it, lay out what needs it, paint
    the dirty widgets (nothing while a batch is open)."""
    Screen._on_timer_update(screen)


def paint_pending(screen: Screen[Any]) -> bool:
    """A change the screen has taken but not painted yet (a test's probe)."""
    return bool(screen._dirty_widgets or screen._layout_required)


# -- the app ---------------------------------------------------------------------------------


def notifications(app: App[Any]) -> list[Notification]:
    """The notifications the app shows now (a test's probe: App keeps them in
    `_notifications`; its Toast widgets hold them privately too)."""
    return list(app._notifications)


def send_as_terminal(app: App[Any], message: Message) -> None:
    """Deliver a message the way the terminal's reader thread does (through the driver, in a
    task of its own), so it can overtake or trail what the app is handling."""
    driver = app._driver
    if driver is None:  # not running: there is no terminal to deliver from
        raise RuntimeError("the app has no driver: it is not running")
    driver.send_message(message)
