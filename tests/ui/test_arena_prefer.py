"""The Arena's blind A/B/Tie preference (`p`): two completed panes shown as A and B with the
side drawn from a seed (seeded here so both sides happen), no condition or model names in the
modal, and the stored preference mapping back to the right runs whichever side they were on."""

from __future__ import annotations

from typing import Any

from fintrade_tui.screens import prefer as prefer_screen
from textual.widgets import Static

from fintrade_tui.config import Config
from fintrade_tui.workspace.evidence import LABELS
from fintrade_tui.workspace.preferences import PreferenceStore, first_shown_as_b
from tests.conftest import needs_bundle
from tests.ui.arena_app import ArenaApp, arena_cfg  # noqa: F401  (the fixture cfg)
from tests.ui.conftest import settle

pytestmark = needs_bundle
KEPT = next(s for s in map(str, range(100)) if not first_shown_as_b(s))  # first run left (A)
SWAPPED = next(s for s in map(str, range(100)) if first_shown_as_b(s))  # first run right (B)


def _status(arena: Any) -> str:
    return str(arena.query_one("#arena-status").content)


def _modal_text(screen: Any) -> str:
    return " ".join(str(w.content) for w in screen.query(Static) if hasattr(w, "content"))


async def test_blind_prefer_maps_back_to_the_runs_on_either_side(
    cfg: Config,  # noqa: F811
    monkeypatch: Any,
) -> None:
    # entry 1 draws SWAPPED; entry 2 draws one seed on opening and KEPT once `o` changes pane
    seeds = iter([SWAPPED, SWAPPED, KEPT])
    monkeypatch.setattr(prefer_screen, "side_seed", lambda: next(seeds))
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("p")  # nothing has run: an error in place, no modal
        assert app.screen is arena and "two completed answers" in _status(arena)
        await pilot.press("b", "r")
        await settle(pilot)
        p1, p2, p3 = arena.panes()
        p1.focus()
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        modal = app.screen
        assert type(modal).__name__ == "PreferScreen"
        assert modal.shown() == (p2.run_id, p1.run_id)  # the focused pane went right, as B
        text = _modal_text(modal)
        assert "pane 1 and pane 2" in text
        for name in [*LABELS.values(), "mock"]:
            assert name not in text  # neither conditions nor models
        await pilot.press("enter")  # no choice yet: an error in place
        await pilot.pause()
        assert app.screen is modal and "choose first" in _modal_text(modal)
        await pilot.press("a", "n", *"crisp", "enter")  # A = the run shown left = pane 2's
        await settle(pilot)
        assert app.screen is arena
        con = app.workspace_connection()
        (row,) = PreferenceStore(con).latest()
        assert (row["run_a"], row["run_b"]) == (p2.run_id, p1.run_id)
        assert (row["first_run"], row["first_side"], row["seed"]) == (p1.run_id, "B", SWAPPED)
        assert (row["shown"], row["winner"], row["note"]) == ("A", p2.run_id, "crisp")
        assert row["blind"] and row["source"] == "arena" and row["question_id"] == "T-ARENA"
        assert "pane 2 (B) preferred over pane 1 (A)" in _status(arena)

        # pane 2 focused: its default other is pane 3; `o` picks pane 1 and redraws the sides
        p2.focus()
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        assert "pane 2 and pane 3" in _modal_text(app.screen)
        await pilot.press("o")
        await pilot.pause()
        assert app.screen.shown() == (p2.run_id, p1.run_id)  # KEPT: the focused pane is A
        await pilot.press("b", "enter")  # B = pane 1's run this time
        await settle(pilot)
        rows = PreferenceStore(con).history()
        assert len(rows) == 2
        second = rows[-1]
        assert (second["run_a"], second["run_b"], second["first_side"]) == (
            p2.run_id,
            p1.run_id,
            "A",
        )
        assert (second["shown"], second["winner"], second["seed"]) == ("B", p1.run_id, KEPT)
        assert "pane 1 (A) preferred over pane 2 (B)" in _status(arena)
        # the newest preference on the pair replaces the first one in the reports
        (latest,) = PreferenceStore(con).latest()
        assert latest["id"] == second["id"]
        assert p3.run_id not in {second["run_a"], second["run_b"]}
