"""A filing passage, a question or an answer holding escape sequences and Textual markup shows as
text: no control character reaches the terminal, `[b]` and `[@click=app.quit]` stay literal
(and clicking them quits nothing), and the app stays alive (Pilot)."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.widget import Widget

from fintrade_tui.ui.arena_model import Row
from fintrade_tui.ui.evidence import EvidencePanel, PassageScreen
from fintrade_tui.ui.streaming import StreamingMarkdown

HOSTILE = (
    "Revenue \x1b[2J\x1b[31mRED\x1b]0;owned\x07 \x9b6n [b]bold[/b] [/x] [@click=app.quit]quit[/]"
)


def _screen_text(app: App) -> str:
    """Every visible widget's rendered segments, as the terminal would receive their text."""
    out = []
    for w in app.screen.walk_children(Widget):
        if w.region.area:
            out += [
                "".join(s.text for s in strip) for strip in w.render_lines(w.region.reset_offset)
            ]
    return "\n".join(out)


class Host(App):
    def compose(self) -> ComposeResult:
        yield EvidencePanel(id="ev")
        yield StreamingMarkdown(id="md")


async def test_hostile_text_is_shown_as_text() -> None:
    app = Host()
    async with app.run_test(size=(140, 30)) as pilot:
        panel = app.query_one(EvidencePanel)
        panel.show(f"Evidence {HOSTILE}", [Row("item", f"[filing] {HOSTILE}", HOSTILE, HOSTILE)])
        md = app.query_one(StreamingMarkdown)
        await md.update(f"Answer: {HOSTILE}")
        await md.append(f"\n\nMore \x1b[5m{HOSTILE}")
        await pilot.pause()
        shown = _screen_text(app)
        assert "\x1b" not in shown and "\x9b" not in shown and "\x07" not in shown
        assert "␛[31mRED" in shown  # the reader still sees that the data held an escape
        assert "[b]bold[/b]" in shown and "[@click=app.quit]quit[/]" in shown
        assert "More ␛[5m" in shown
        # Enter opens the passage; it shows the same way; Escape closes it
        panel.query_one("OptionList").focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PassageScreen)
        shown = _screen_text(app)
        assert "\x1b" not in shown and "[@click=app.quit]quit[/]" in shown
        await pilot.click(offset=(20, 3))  # where the "link" text sits: no quit
        await pilot.press("escape")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, PassageScreen)


async def test_markdown_with_markup_never_raises() -> None:
    app = Host()
    errors: list[Any] = []
    async with app.run_test(size=(100, 20)) as pilot:
        md = app.query_one(StreamingMarkdown)
        for chunk in ("[/b]", " [/x]", "[@click=app.quit]", " **bold**", "\x1b[0m", "\r\n- item"):
            try:
                await md.append(chunk)
            except Exception as exc:  # noqa: BLE001 - the assertion names it
                errors.append(exc)
        await pilot.pause()
        assert errors == [] and app.is_running
        assert "[/b] [/x][@click=app.quit] bold␛[0m" in _screen_text(app)


def test_judge_reasons_notes_and_errors_in_a_pane_show_no_control_character() -> None:
    from fintrade_tui.ui.pane_text import score_text

    judge = {
        "annotator": "judge",
        "status": "ok",
        "accuracy": 1,
        "detail": {"justifications": {"accuracy": HOSTILE}, "audit": None},
    }
    human = {"accuracy": 2, "note": HOSTILE}
    failed = {"annotator": "judge", "status": "error", "detail": {"error": HOSTILE}}
    for text in (score_text(human, judge, False, 2), score_text(None, failed, False, 2)):
        assert "RED" in text.plain and "[b]bold[/b]" in text.plain
        assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F
                       for c in text.plain)  # fmt: skip
