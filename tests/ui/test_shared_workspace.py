"""The explorer open while other processes write its workspace: `runs import` of 1,008 runs and
`score` of one, each a real `fintrade-tui` process, both succeed while the Results screen stays
open; nothing is lost or doubled, and the label matrix shows the new runs without a restart.
How soon (from the import transaction's start, before its commit) is printed here and measured
by benchmarks/bench_shared_workspace.py (a timed assertion would fail on a loaded machine)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from fintrade_tui.screens.results import ResultsScreen
from textual.widgets import DataTable

from benchmarks import synthetic_runs
from fintrade_tui.config import Config
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.connection import open_workspace
from tests.conftest import BUNDLE, write_config
from tests.ui.conftest import notices, settle, until
from tests.ui.results_app import SIZE

MODELS = set(synthetic_runs.MODELS)
# 63 questions x 4 models x 4 conditions: every model and condition of the label matrix, and a
# count past a thousand (the notice's separator), at less than half the import of the 2,400 the
# benchmark times (benchmarks/bench_shared_workspace.py)
QUESTIONS, IMPORTED = 63, 1008


def _cli(cfg_file: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "fintrade_tui", "--config", str(cfg_file), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def _finish(pilot: Any, proc: subprocess.Popen, timeout: float = 300) -> str:
    """The other process's output once it has ended well; the app keeps running meanwhile."""
    command = " ".join(proc.args[5:])  # after `python -m fintrade_tui --config <file>`
    await until(pilot, lambda: proc.poll() is not None, what=f"`{command}` to end", timeout=timeout)
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    return out


def _watch_has_looked(app: FinTradeApp) -> bool:
    """The workspace watch has taken its first look: what it saw then is not news, what
    another process writes after it is."""
    return app._watch is not None


def _model_rows(screen: ResultsScreen) -> set[tuple[str, str]]:
    grid = screen.query_one("#accuracy", DataTable)
    return {(str(r[0]), str(r[1])) for r in (grid.get_row_at(i) for i in range(grid.row_count))}


def _populated(built_store: Config, tmp_path: Path, workspace: Path) -> tuple[Config, Path]:
    """The session store, a hand-populated workspace of its own (`populated_workspace`), and a
    config file naming both for the other processes."""
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = workspace
    return cfg, write_config(tmp_path, BUNDLE, cfg.store, f"workspace: {cfg.workspace}\n")


async def test_runs_imported_and_scored_elsewhere_show_while_the_explorer_is_open(
    built_store: Config, tmp_path: Path, populated_workspace: Path
) -> None:
    cfg, cfg_file = _populated(built_store, tmp_path, populated_workspace)
    with open_workspace(cfg.workspace) as con:
        (before,) = con.execute("SELECT count(*) FROM runs").fetchone()
        (scored,) = con.execute("SELECT count(*) FROM scores").fetchone()
    published = tmp_path / "published.jsonl"
    assert synthetic_runs.write(published, questions=QUESTIONS) == IMPORTED

    app = FinTradeApp(cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        screen.kind = "labels"
        screen.reload_accuracy()
        await settle(pilot)
        old = _model_rows(screen)  # the hand-populated workspace's own labelled runs
        assert not {m for m, _ in old} & set(MODELS)

        notes = notices(app)
        await until(pilot, lambda: _watch_has_looked(app), what="the workspace watch")
        importer = _cli(cfg_file, "runs", "import", str(published), "--json")

        def new_rows() -> set[tuple[str, str]]:  # the explorer keeps answering meanwhile
            assert importer.poll() in (None, 0), importer.stderr.read()
            rows = _model_rows(screen) - old
            return rows if len(rows) >= 16 else set()

        rows = await until(pilot, new_rows, what="the imported runs on the screen", timeout=300)
        shown = datetime.now()
        await _finish(pilot, importer)
        assert {m for m, _ in rows} == set(MODELS)
        with open_workspace(cfg.workspace, read_only=True) as con:
            (began,) = con.execute("SELECT max(imported_at) FROM runs").fetchone()
            (run_id,) = con.execute("SELECT min(id) FROM runs WHERE origin = 'external'").fetchone()
        lag = (shown - began).total_seconds()
        print(f"shown {lag:.2f} s after the import transaction began")
        assert lag > 0  # shown after the import began writing, not from something else

        scorer = _cli(cfg_file, "score", run_id, "--accuracy", "4", "--note", "from elsewhere")
        await _finish(pilot, scorer)
        # the watch looks every TICK, notices at most every SETTLE
        await until(pilot, lambda: any("1 score new" in m for m in notes), what="the notice")
        assert any(f"Workspace updated by another process: {IMPORTED:,} runs" in m for m in notes)

    with open_workspace(cfg.workspace, read_only=True) as con:
        runs = con.execute("SELECT count(*), count(DISTINCT id) FROM runs").fetchone()
        scores = con.execute("SELECT count(*), count(DISTINCT id) FROM scores").fetchone()
        human = con.execute(
            "SELECT accuracy, note FROM scores WHERE run_id = ? AND kind = 'human'"
            " AND accuracy IS NOT NULL",
            [run_id],
        ).fetchall()
    assert runs == (before + IMPORTED, before + IMPORTED)
    assert scores == (scored + IMPORTED + 1, scored + IMPORTED + 1)  # the labels, one score
    assert human == [(4, "from elsewhere")]


async def test_a_score_saved_elsewhere_shows_in_the_arena_pane(
    built_store: Config, tmp_path: Path, populated_workspace: Path
) -> None:
    from tests.ui.arena_app import ArenaApp

    cfg, cfg_file = _populated(built_store, tmp_path, populated_workspace)
    with open_workspace(cfg.workspace) as con:
        ids = [r for (r,) in con.execute("SELECT id FROM runs ORDER BY id LIMIT 2").fetchall()]
    app = ArenaApp(cfg, run_ids=ids, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = next(p for p in app.screen.panes() if p.run_id == ids[1])
        await until(pilot, lambda: _watch_has_looked(app), what="the workspace watch")
        scorer = _cli(cfg_file, "score", ids[1], "--accuracy", "2", "--note", "seen elsewhere")
        await _finish(pilot, scorer)
        await until(
            pilot,
            lambda: (pane.human or {}).get("note") == "seen elsewhere",
            what="the score in the pane",
        )
        assert pane.human["accuracy"] == 2
        other = next(p for p in app.screen.panes() if p.run_id == ids[0])
        assert (other.human or {}).get("note") != "seen elsewhere"
