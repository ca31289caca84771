"""The answer pane follows a streaming answer: its last line stays in view while it streams (the
text moves up half a pane at a time), an analyst who scrolls up is left where they are, and a
followed answer ends scrolled to its last line."""

from __future__ import annotations

import time
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Markdown

from fintrade_tui.ui.panes import AnswerPane
from tests.ui.conftest import until


class _PaneApp(App):
    def compose(self) -> ComposeResult:
        yield AnswerPane("no_rag", "no_rag", id="pane")


def _last_line(pane: AnswerPane) -> int:
    """The text's last line in the body's coordinates (the Markdown sits at its top)."""
    return pane.markdown.children[-1].virtual_region.bottom - 1


def _end_in_view(pane: AnswerPane) -> bool:
    body = pane.body
    return body.scroll_y <= _last_line(pane) < body.scroll_y + body.scrollable_content_region.height


async def _stream(pilot: Any, pane: AnswerPane, words: int, check: bool = True) -> list[float]:
    """Feed `words` words through a MarkdownStream, as the Arena does; returns scroll offsets."""
    stream = Markdown.get_stream(pane.markdown)
    offsets = []
    for i in range(words):
        await stream.write(f"w{i:03d} " if (i + 1) % 12 else f"w{i:03d}\n\n")
        pane.token()
        await pilot.pause()
        if check and pane.following and pane.markdown.children:
            assert _end_in_view(pane)
        offsets.append(pane.body.scroll_y)
    await stream.stop()
    return offsets


async def test_follows_the_end_in_half_pane_steps_and_ends_at_the_bottom() -> None:
    app = _PaneApp()
    async with app.run_test(size=(40, 16)) as pilot:
        pane = app.query_one(AnswerPane)
        await pane.reset()
        offsets = await _stream(pilot, pane, 150)
        height = pane.body.scrollable_content_region.height
        moves = [b - a for a, b in zip(offsets, offsets[1:], strict=False) if b != a]
        assert moves, "a long answer scrolls"
        # it moves in steps of about half the pane, not a line at a time
        assert len(moves) < len(offsets) / 4
        assert all(m >= height // 2 - 2 for m in moves)
        pane.settle()
        await until(
            pilot,
            lambda: pane.body.scroll_y == pane.body.max_scroll_y,
            what="the settled pane scrolled to its end",
        )
        assert pane.markdown.styles.min_height is None
        assert pane.body.max_scroll_y > 0
        assert pane.body.scroll_y == pane.body.max_scroll_y
        assert _end_in_view(pane)


async def test_scrolling_up_stops_following_until_the_end() -> None:
    app = _PaneApp()
    async with app.run_test(size=(40, 16)) as pilot:
        pane = app.query_one(AnswerPane)
        await pane.reset()
        await _stream(pilot, pane, 80)
        assert pane.body.scroll_y > 0
        pane.focus()
        await pilot.press("home")
        assert not pane.following
        await _stream(pilot, pane, 40, check=False)
        assert pane.body.scroll_y == 0  # left where the analyst put it
        await pilot.press("end")
        await pilot.pause()
        assert pane.following and _end_in_view(pane)
        await _stream(pilot, pane, 40)


class _TwoPanes(App):
    def compose(self) -> ComposeResult:
        with Horizontal():
            yield AnswerPane("no_rag", "no_rag", id="a")
            yield AnswerPane("oracle", "oracle", id="b")


async def test_panes_answering_in_step_move_up_in_different_frames(monkeypatch) -> None:
    """Two panes fed the same words at the same moments would move up in the same frame and
    repaint both whole at once; the second waits (its end still in view) and moves later."""
    from tests.clock import FakeClock

    steps = FakeClock()  # a word every 10 ms, however long the machine takes to draw it
    monkeypatch.setattr(AnswerPane, "step_clock", steps)
    monkeypatch.setattr(AnswerPane, "last_step", 0.0)  # not a step another test's clock timed
    app = _TwoPanes()
    async with app.run_test(size=(80, 16)) as pilot:
        panes = list(app.query(AnswerPane))
        for pane in panes:
            await pane.reset()
        streams = [Markdown.get_stream(p.markdown) for p in panes]
        moved: list[set[int]] = []
        for i in range(150):
            word = f"w{i:03d} " if (i + 1) % 12 else f"w{i:03d}\n\n"
            before = [p.body.scroll_y for p in panes]
            for pane, stream in zip(panes, streams, strict=True):
                await stream.write(word)
                pane.token()
            await pilot.pause()
            steps.advance(0.01)
            moved.append({n for n, p in enumerate(panes) if p.body.scroll_y != before[n]})
            assert all(_end_in_view(p) for p in panes if p.markdown.children)
        for stream in streams:
            await stream.stop()
        assert any(0 in m for m in moved) and any(1 in m for m in moved)
        assert not any(len(m) == 2 for m in moved), [(i, m) for i, m in enumerate(moved) if m]


class _StubPane:
    def __init__(self, reserved: int) -> None:
        self.streaming, self.reserved, self.settled = True, reserved, 0

    def settle(self) -> None:
        self.settled += 1
        self.reserved = 0


async def test_finished_panes_settle_together_when_the_last_one_ends() -> None:
    """Dropping a pane's held lines repaints all of it: the Arena waits until no pane streams,
    then settles every pane still holding lines (not one the analyst has moved since)."""
    from fintrade_tui.screens.arena.running import settle

    a, b, c, done = _StubPane(40), _StubPane(40), _StubPane(40), _StubPane(0)
    done.streaming = False

    class Arena:
        def panes(self) -> list[_StubPane]:
            return [a, b, c, done]

    settle(Arena(), a)  # type: ignore[arg-type]
    settle(Arena(), b)  # type: ignore[arg-type]
    assert (a.settled, b.settled, c.settled) == (0, 0, 0)
    settle(Arena(), c)  # type: ignore[arg-type]
    assert (a.settled, b.settled, c.settled, done.settled) == (1, 1, 1, 0)


async def test_timings_count_from_when_the_model_is_asked() -> None:
    """Preparing evidence (a RAG index build can take a minute) is not time to first token: the
    pane's clock starts with the run, as the stored run's timings do."""
    app = _PaneApp()
    async with app.run_test(size=(40, 16)):
        pane = app.query_one(AnswerPane)
        await pane.reset()
        pane.preparing()
        assert pane.clock is not None
        pane.clock.started -= 60  # as if preparing had taken a minute
        asked = time.monotonic()
        pane.started("run-1", None)
        pane.token()
        # a new clock, from when the model was asked: the first token counts from there
        assert pane.clock.first is not None and pane.clock.first >= pane.clock.started >= asked
