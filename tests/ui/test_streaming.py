"""Streamed Markdown: a document streamed chunk by chunk through a MarkdownStream into the
panes' StreamingMarkdown ends as the same widgets, bullets, numbers and text as Textual's Markdown
renders from the whole document - while its lists grow in place instead of being mounted again
on every append, and a paragraph asks for a layout pass only when it gains or loses a line."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Markdown, Static

from fintrade_tui.ui.streaming import InPlaceBulletList, SteadyParagraph, StreamingMarkdown
from fintrade_tui.ui.textual_private import MarkdownBullet
from tests.ui.test_screenshots import screen_lines

DOCUMENT = """**Apple, FY2024 Q4** as of 2024-11-01:

- ROE 1.5721 (10-K filed 2024-11-01) and a long tail of words to wrap over several lines
- ROA 0.2568
  - nested: net income over total assets
  - nested again, with `code` and *emphasis*
- Debt/Equity 1.8722

1. first
2. second
3. third
4. fourth
5. fifth
6. sixth
7. seventh
8. eighth
9. ninth
10. tenth
11. eleventh

A closing paragraph after the lists.

- a second list
- that ends the answer
"""


class _Docs(App):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield StreamingMarkdown(id="streamed")
            yield Markdown(DOCUMENT, id="whole")


def _signature(root: Any) -> list[tuple[str, str]]:
    """The rendered structure: widget kinds in order with their bullet or text."""
    base = {"InPlaceBulletList": "MarkdownBulletList", "InPlaceOrderedList": "MarkdownOrderedList"}
    base["SteadyParagraph"] = "MarkdownParagraph"
    out = []
    for w in root.walk_children():
        name = type(w).__name__
        if isinstance(w, MarkdownBullet):
            out.append((name, w.symbol))
        elif isinstance(w, Static):
            content = w.content
            out.append((base.get(name, name), getattr(content, "plain", str(content))))
        else:
            out.append((name, ""))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_streamed_lists_end_as_the_whole_document_renders(seed: int) -> None:
    rng = random.Random(seed)
    app = _Docs()
    async with app.run_test(size=(80, 60)) as pilot:
        streamed = app.query_one("#streamed", StreamingMarkdown)
        stream = Markdown.get_stream(streamed)
        first_list = None
        at = 0
        while at < len(DOCUMENT):
            n = rng.randint(1, 9)
            await stream.write(DOCUMENT[at : at + n])
            at += n
            if rng.random() < 0.3:
                await pilot.pause()
            lists = list(streamed.query(InPlaceBulletList))
            if first_list is None and lists and len(lists[0].children) >= 2:
                first_list = lists[0]
        await stream.stop()
        await pilot.pause()
        whole = app.query_one("#whole", Markdown)
        assert streamed.source == DOCUMENT
        assert _signature(streamed) == _signature(whole)
        # the first list grew in place: the widget seen with two items is the one on screen
        assert first_list is not None and first_list is streamed.query(InPlaceBulletList).first()
        symbols = [b.symbol for b in streamed.query(MarkdownBullet)]
        assert "  1. " in symbols and " 10. " in symbols  # re-aligned once item 10 came


class _Three(App):
    def compose(self) -> ComposeResult:
        for i in range(3):
            with VerticalScroll():
                yield StreamingMarkdown(id=f"md{i}")


async def test_three_list_streams_stop_cleanly() -> None:
    """Three panes stream bullet lists at 200 chunks/s each, stop, and start again: every
    stream ends (stop returns) with the whole text in its widget."""
    app = _Three()
    # 50 chunks a round (10 items, 20 after the second round): three lists still grow in place
    # at once while each stream stops and starts again; a longer list only costs layout time
    chunks = 50
    async with app.run_test(size=(150, 45)) as pilot:

        async def feed(md: StreamingMarkdown) -> None:
            stream = Markdown.get_stream(md)
            for i in range(chunks):
                await stream.write(("\n- " if i % 5 == 0 else " ") + f"w{i}")
                await asyncio.sleep(0.005)  # the subject: chunks paced as a model streams them
            async with asyncio.timeout(5):
                await stream.stop()

        for _ in range(2):
            await asyncio.gather(*(feed(md) for md in app.query(StreamingMarkdown)))
            await pilot.pause()
        items = 2 * chunks // 5
        assert all(md.source.count("- ") == items for md in app.query(StreamingMarkdown))


class _SideBySide(App):
    CSS = "Markdown { width: 1fr; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield StreamingMarkdown(id="streamed")
            yield Markdown(id="whole")


def _halves(app: App) -> tuple[list[str], list[str]]:
    """The screen's text, left half and right half (what a terminal shows)."""
    lines = screen_lines(app.export_screenshot())
    half = app.size.width // 2
    return [line[:half].rstrip() for line in lines], [line[half:].rstrip() for line in lines]


@pytest.mark.parametrize("seed", [4, 5])
async def test_streamed_text_shows_what_markdown_renders_at_every_step(seed: int) -> None:
    """Appends that skip the layout pass (a paragraph whose height did not change) leave the
    screen exactly as Textual's Markdown renders the same text from scratch, at every step."""
    rng = random.Random(seed)
    text = "Paragraph one runs long enough to wrap: " + " ".join(f"w{i}" for i in range(40))
    text += "\n\n" + DOCUMENT
    app = _SideBySide()
    async with app.run_test(size=(100, 80)) as pilot:
        streamed = app.query_one("#streamed", StreamingMarkdown)
        whole = app.query_one("#whole", Markdown)
        at = 0
        while at < len(text):
            n = rng.randint(1, 12)
            await streamed.append(text[at : at + n])
            at += n
            # compared at a random tenth of the steps (each seed its own) and at the end: a
            # comparison renders the whole document again, the cost of the test
            if rng.random() < 0.1 or at >= len(text):
                await whole.update(streamed.source)
                await pilot.pause()
                left, right = _halves(app)
                assert left == right, f"after {at} characters"


async def test_a_paragraph_lays_out_only_when_its_height_changes() -> None:
    app = _SideBySide()
    async with app.run_test(size=(60, 20)) as pilot:  # each pane 30 columns
        streamed = app.query_one("#streamed", StreamingMarkdown)
        await streamed.append("one two")
        await pilot.pause()
        paragraph = streamed.query_one(SteadyParagraph)
        layouts: list[bool] = []  # each refresh the paragraph asks for: with a layout pass?
        refresh = paragraph.refresh

        def counted(*regions: Any, layout: bool = False, **kwargs: Any) -> Any:
            layouts.append(layout)
            return refresh(*regions, layout=layout, **kwargs)

        paragraph.refresh = counted  # type: ignore[method-assign]
        await streamed.append(" three")  # still one line
        await pilot.pause()
        assert layouts and not any(layouts)  # repainted, never laid out
        assert paragraph.size.height == 1
        layouts.clear()
        await streamed.append(" four five six seven eight nine")  # wraps to a second line
        await pilot.pause()
        assert any(layouts)
        assert paragraph.size.height == 2
        assert "four five" in str(paragraph.content)
