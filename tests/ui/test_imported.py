"""Pilot test of imported runs in the explorer: Results lists an imported run a file labelled
incorrect; Enter replays its question in the Arena with the question's other imported answers
side by side (read-only), each pane with the file's answer, and the evidence panel with where
the run came from, the file's evidence and its prompt; the label accuracy shows in the matrix."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from fintrade_tui.screens.arena import ArenaScreen
from fintrade_tui.screens.results import KEYS, ResultsScreen
from textual.widgets import DataTable

from fintrade_tui.cli import main
from fintrade_tui.config import Config, load_config
from fintrade_tui.ui.app import FinTradeApp
from tests.conftest import BUNDLE, write_config
from tests.ui.conftest import settle
from tests.ui.results_app import SIZE

SMALL = (
    Path(__file__).resolve().parent.parent / "data" / "external" / "generic" / "runs_small.jsonl"
)


@pytest.fixture
def imported(built_store: Config, tmp_path: Path) -> Config:
    path = write_config(tmp_path, BUNDLE, built_store.store, f"workspace: {tmp_path}/ws.duckdb\n")
    res = CliRunner().invoke(main, ["--config", str(path), "runs", "import", str(SMALL)])
    assert res.exit_code == 0, res.output
    return load_config(path)


async def test_an_imported_incorrect_run_replays_beside_the_other_answers(imported) -> None:
    app = FinTradeApp(imported, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        wrong = [c for c in screen.shown if c["filter"] == "incorrect"]
        # runs_small.jsonl labels two runs incorrect: llama's F1 closed-book, BYO-1 long context
        assert sorted((c["question_id"], c["condition"]) for c in wrong) == [
            ("BYO-1", "Long-context"),
            ("F1", "No-RAG"),
        ]
        case = next(c for c in wrong if c["question_id"] == "BYO-1")
        assert case["reason"].startswith("labelled incorrect by paper:human")
        screen.query_one("#failures", DataTable).move_cursor(row=screen.shown.index(case))
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        arena = app.screen
        assert isinstance(arena, ArenaScreen) and arena.state.read_only
        panes = arena.panes()
        # the case, then llama's other BYO-1 answer (retrieval), then gpt-4o's
        assert [(p.model, p.condition) for p in panes] == [
            ("llama-3-8b", "long_context"),
            ("llama-3-8b", "rag"),
            ("gpt-4o", "rag"),
        ]
        assert [p.markdown.source for p in panes] == [
            "About 27 billion dollars.",
            "I cannot answer that.",
            "60922",
        ]
        assert all(p.status == "completed" for p in panes)
        panes[2].focus()
        await pilot.pause()
        rows = arena.query_one("EvidencePanel").rows
        assert rows[0].line == "imported (jsonl): runs_small.jsonl line 5 · condition 'retrieval'"
        assert rows[1].kind == "prompt" and rows[1].body.startswith("Context: ...")
        await pilot.press("r")  # read-only: nothing runs
        await settle(pilot)
        assert not any(p.running for p in arena.panes())


async def test_the_matrix_shows_label_accuracy(imported) -> None:
    app = FinTradeApp(imported, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("s", "s")  # LLM judge -> human -> labels
        await settle(pilot)
        assert screen.kind == "labels"
        grid = screen.query_one("#accuracy", DataTable)
        header = [str(c.label) for c in grid.columns.values()]
        # the file's categories: BYO-1 is "numeric"; F1 (no seeds here, no category given)
        # was created as "other"
        assert header == ["Model", "Condition", "numeric", "other", "Overall", "n"]
        rows = {
            (str(r[0]), str(r[1])): r for r in (grid.get_row_at(i) for i in range(grid.row_count))
        }
        # llama-3-8b: F1 closed-book incorrect, F1 oracle correct
        assert rows[("llama-3-8b", "No-RAG")][3] == "0.0"
        assert rows[("llama-3-8b", "Oracle")][3] == "100.0"
        assert rows[("gpt-4o", "RAG")][2] == "100.0"  # BYO-1 retrieval, labelled correct
        # g: one question set at a time (the file's benchmark, then the placeholders' "jsonl")
        assert screen.sources == ["byo-demo", "jsonl"]
        await pilot.press("g")
        await settle(pilot)
        assert screen.source == "byo-demo"
        header = [str(c.label) for c in grid.columns.values()]
        assert header == ["Model", "Condition", "numeric", "Overall", "n"]
        shown = [
            (str(r[0]), str(r[1])) for r in (grid.get_row_at(i) for i in range(grid.row_count))
        ]
        # BYO-1's runs only: No-RAG (the baseline) stays as a row though nobody ran it
        assert sorted(shown) == [
            ("gpt-4o", "No-RAG"),
            ("gpt-4o", "RAG"),
            ("llama-3-8b", "Long-context"),
            ("llama-3-8b", "No-RAG"),
            ("llama-3-8b", "RAG"),
        ]
        await pilot.press("g", "g")  # jsonl, then all again
        await settle(pilot)
        assert screen.source is None


async def test_names_from_a_file_are_shown_as_text_not_markup(built_store, tmp_path) -> None:
    """A model, question id and note that look like Rich markup (one of them malformed) are
    data: the Results tables show them literally and nothing raises."""
    import json

    odd = tmp_path / "odd.jsonl"
    line = {"question_id": "Q [/bold] 1", "question": "Is [red]this[/red] Apple's ROE?",
            "model": "[bold]model", "condition": "x [/y]", "answer": "yes",
            "label": "incorrect", "note": "[/]broken"}  # fmt: skip
    odd.write_text(json.dumps(line) + "\n")
    path = write_config(tmp_path, BUNDLE, built_store.store, f"workspace: {tmp_path}/ws.duckdb\n")
    res = CliRunner().invoke(main, ["--config", str(path), "runs", "import", str(odd)])
    assert res.exit_code == 0, res.output
    assert "models: [bold]model 1" in res.output and "conditions: x [/y] 1" in res.output
    app = FinTradeApp(load_config(path), start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        grid = app.screen.query_one("#failures", DataTable)
        row = [str(c) for c in grid.get_row_at(0)]
        assert row[1:5] == ["Q [/bold] 1", "other", "[bold]model", "x [/y]"]
        assert app.is_running


async def test_w_writes_the_filtered_view(imported) -> None:
    import duckdb

    folder = imported.store.parent / "exports"  # beside the store other tests share
    before = set(folder.glob("view-*")) if folder.is_dir() else set()
    app = FinTradeApp(imported, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        for name in ("rag_worse", "disagree", "contradicted", "errors", "unrated", "refusal"):
            await pilot.press(KEYS[name])  # leave incorrect and Oracle≠No-RAG on
        await pilot.pause()
        want = sorted({r for c in screen.shown for r in c["run_ids"]})
        assert {c["filter"] for c in screen.shown} == {"incorrect", "oracle_flip"}
        await pilot.press("s", "s")  # the matrix of labels: the one the view writes
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
    written = set(folder.glob("view-*")) - before  # this test's view, not another test's
    (runs,) = [p for p in written if p.name.endswith("-runs.csv")]
    (jsonl,) = [p for p in written if p.name.endswith("-runs.jsonl")]
    (acc,) = [p for p in written if p.name.endswith("-accuracy.csv")]
    try:
        con = duckdb.connect()
        got = [r for (r,) in con.execute(f"SELECT run_id FROM '{runs}' ORDER BY 1").fetchall()]
        assert got == want and len(jsonl.read_text().splitlines()) == len(want)
        cells = con.execute(f"SELECT model, condition, accuracy FROM '{acc}'"
                            " WHERE category = 'overall'").fetchall()  # fmt: skip
        assert ("llama-3-8b", "oracle", 100.0) in cells and ("llama-3-8b", "no_rag", 0.0) in cells
    finally:
        for p in (runs, jsonl, acc):
            p.unlink()
