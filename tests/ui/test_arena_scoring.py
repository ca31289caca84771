"""Scoring in the Arena (Pilot, mocked litellm streams): blind A/B/C labels revealed once every
pane is scored; a human score through the modal, the same score `report --scores human`
reports; the LLM judge inline, with the audit, golden coverage and where judge and analyst
disagree."""

from __future__ import annotations

import json

import pytest

from fintrade_tui.config import Config
from fintrade_tui.ui import arena_model as core
from fintrade_tui.workspace.scores import ScoreStore
from tests.conftest import needs_bundle
from tests.ui.arena_app import (
    CONDITIONS,
    ArenaApp,
    arena_cfg,  # noqa: F401  (the fixture cfg)
    arena_status,
    pane_labels,
)
from tests.ui.conftest import settle, until

pytestmark = needs_bundle


async def test_blind_labels_then_reveal_after_scoring(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("b", "r")
        await settle(pilot)
        assert pane_labels(arena) == ["A", "B", "C"]
        order = core.blind_order(CONDITIONS, "arena|T-ARENA")
        assert [p.condition for p in arena.panes()] == order
        title = str(arena.query_one("EvidencePanel .ev-title").content)
        assert "Evidence — A" in title
        assert arena.query_one("EvidencePanel").rows == []  # hidden while blind
        arena.panes()[0].focus()
        await pilot.press("s")
        for n in ("3", "4", "5"):  # each save opens the next pane's modal
            await pilot.pause()
            assert type(app.screen).__name__ == "ScoreScreen"
            await pilot.press(n, "enter")
            await settle(pilot)
        assert app.screen is arena
        names = [core.LABELS[c] for c in order]
        assert pane_labels(arena) == [f"{x} = {n}" for x, n in zip("ABC", names, strict=True)]
        rows = ScoreStore(app.workspace_connection()).latest(kind="human")
        assert len(rows) == 3 and all(r["blind"] for r in rows)
        by_run = {r["run_id"]: r["accuracy"] for r in rows}
        assert [by_run[p.run_id] for p in arena.panes()] == [3, 4, 5]


async def test_score_modal_saves_a_human_score(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("s")  # nothing has run: an error in place, no modal
        assert app.screen is arena
        await pilot.press("r")
        await settle(pilot)
        first, second, _ = arena.panes()
        await pilot.press("s")
        await pilot.pause()
        await pilot.press("4", "tab", "3", "tab", "5", "tab", "4", "a", "n")
        await pilot.press(*"solid", "enter")
        await settle(pilot)
        assert type(app.screen).__name__ == "ScoreScreen"  # the next pane's
        await pilot.press("escape")
        await pilot.pause()
        (row,) = ScoreStore(app.workspace_connection()).latest(kind="human")
        assert row["run_id"] == first.run_id and row["annotator"] == "analyst"
        got = [row[d] for d in ("accuracy", "completeness", "relevance", "clarity")]
        assert got == [4, 3, 5, 4]
        assert (row["preference"], row["other_run"], row["note"]) == (
            "this",
            second.run_id,
            "solid",
        )
        assert row["blind"] is False
        assert "You: acc 4 · com 3 · rel 5 · cla 4" in str(first.query_one(".pane-scores").content)
    # the score entered in the TUI is what `fintrade-tui report --scores human` reports
    from click.testing import CliRunner

    from fintrade_tui.cli import main
    from tests.conftest import write_config

    config = write_config(
        cfg.workspace.parent / "cli", cfg.bundle, cfg.store, f"workspace: {cfg.workspace}\n"
    )
    res = CliRunner().invoke(
        main,
        ["--config", str(config), "report", "--scores", "human", "--json", "--resamples", "50"],
    )
    assert res.exit_code == 0, res.output
    cells = json.loads(res.output)["accuracy"]
    mine = [c for c in cells if c["n"] and c["category"] == "overall"]
    assert len(mine) == 1 and mine[0]["accuracy"] == pytest.approx(80.0)  # 4 / 5


async def test_judge_inline_with_audit_and_disagreement(cfg: Config) -> None:
    app = ArenaApp(cfg, question_id="T-ARENA")
    async with app.run_test(size=(150, 40)) as pilot:
        await settle(pilot)
        arena = app.screen
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("s", "1", "enter")  # the analyst gives accuracy 1, the judge 5
        await settle(pilot)
        await pilot.press("escape")
        await pilot.press("j")
        # the status, waited for: under load the binding can fire after a first settle
        done = "judged: 3 of 3 answers scored"
        await until(pilot, lambda: arena_status(arena) == done, what="the judged status")
        await settle(pilot)
        first = arena.panes()[0]
        assert first.judge["status"] == "ok" and first.judge["accuracy"] == 5
        text = first.query_one(".pane-scores").content
        plain = str(text)
        assert "accuracy 5 (you 1)" in plain
        # the text's golden coverage first, the judge's listed metrics beside it
        assert "golden coverage 2 of 2 from the text (roe 25.9%, roa 4.0%)" in plain
        assert "; the judge listed: roa, roe" in plain
        assert "Audit: 2 figures, 2 supported, 0 contradicted" in plain
        assert "SUPPORTED   roe 25.9%: store 0.2588" in plain
        assert core.disagreements(first.judge, first.human, 2) == {"accuracy": (5, 1)}
        llm_rows = ScoreStore(app.workspace_connection()).latest(kind="llm")
        assert {r["run_id"] for r in llm_rows} == {p.run_id for p in arena.panes()}
