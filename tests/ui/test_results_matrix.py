"""Pilot tests of the Results screen's accuracy matrix on a hand-populated workspace (see
tests/unit/test_failures_export.py): the matrix equals accuracy_table for the judge's and the
people's scores, with the agreement table beside it; `report --json`, the screen and the HTML
view report show the same cells; `z` leaves the questions with a disputed reference out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fintrade_tui.screens.results import RESAMPLES, ResultsScreen
from textual.widgets import DataTable, Static

from fintrade_tui.config import Config
from fintrade_tui.judging.session import agreement_pairs
from fintrade_tui.reports.accuracy import score_rows
from fintrade_tui.stats.agreement import agreement_table
from fintrade_tui.stats.tables import COLUMNS, accuracy_table, fmt_cell, shown_conditions
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.evidence import LABELS
from tests.ui.conftest import settle, until
from tests.ui.results_app import (
    SIZE,
    cells,
    results_ui_cfg,  # noqa: F401  (the fixture ui_cfg)
)


def _expected_tables(cfg: Config) -> dict[str, Any]:
    con = open_workspace(cfg.workspace)
    try:
        out = {
            k: accuracy_table(score_rows(con, k), n_resamples=RESAMPLES) for k in ("llm", "human")
        }
        out["agreement"] = agreement_table(agreement_pairs(con))
    finally:
        con.close()
    return out


async def test_matrix_equals_accuracy_table_for_llm_and_human(ui_cfg: Config) -> None:
    expected = _expected_tables(ui_cfg)
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResultsScreen)
        for kind in ("llm", "human"):
            table = expected[kind]
            grid = screen.query_one("#accuracy", DataTable)
            assert not grid.loading
            want = [
                [
                    m,
                    LABELS[c],
                    *[fmt_cell(table["cells"][m][c][k]) for k in COLUMNS],
                    str(table["cells"][m][c]["overall"]["n"]),
                ]
                for m in table["models"]
                for c in shown_conditions(table, m)
            ]
            assert cells(grid) == want
            assert screen.kind == kind
            if kind == "llm":
                assert cells(grid)[1][2] == "40.0 (-50.0%)"  # alpha RAG F: 2 / 5 vs 4 / 5
                await pilot.press("s")  # switch to the people's scores
                await settle(pilot)
        agreement = screen.query_one("#agreement", DataTable)
        rows = cells(agreement)
        assert [r[0] for r in rows] == [r["dimension"] for r in expected["agreement"]]
        assert [r[1] for r in rows] == [str(r["n"]) for r in expected["agreement"]]
        assert rows[0][2] == f"{expected['agreement'][0]['mae']:.2f}"


async def test_report_results_and_the_view_report_show_the_same_cells(
    ui_cfg: Config, tmp_path: Path
) -> None:
    """One workspace, the matrix three ways: `report --json`, the Results screen and the HTML
    view report (`export html --view`), cell by cell (model × condition × category)."""
    import html
    import json
    import re

    from click.testing import CliRunner

    from fintrade_tui.cli import main
    from tests.conftest import write_config

    extra = f"workspace: {ui_cfg.workspace}\n"
    cfg_file = write_config(tmp_path / "cfg", ui_cfg.bundle, ui_cfg.store, extra=extra)
    run = CliRunner().invoke
    res = run(main, ["--config", str(cfg_file), "report", "--json", "--resamples", "500"])
    assert res.exit_code == 0, res.output
    report = {(c["model"], c["condition"], c["category"]): fmt_cell(c)
              for c in json.loads(res.output)["accuracy"]}  # fmt: skip
    out = tmp_path / "view.html"
    res = run(main, ["--config", str(cfg_file), "export", "html", "--view", "--resamples", "500",
                     "-o", str(out)])  # fmt: skip
    assert res.exit_code == 0, res.output
    cell = re.compile(r'<td class="num cell" data-model="([^"]*)" data-condition="([^"]*)" '
                      r'data-category="([^"]*)".*?>(.*?)</td>', re.S)  # fmt: skip
    view = {}
    for m, c, k, body in cell.findall(out.read_text()):
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", body)).split())
        view[(html.unescape(m), c, k)] = text
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        grid = screen.query_one("#accuracy", DataTable)
        table = screen.table
        screen_cells = {}
        rows = [(m, c) for m in table["models"] for c in shown_conditions(table, m)]
        for (m, c), row in zip(rows, cells(grid), strict=True):
            for k, text in zip(COLUMNS, row[2:-1], strict=True):
                screen_cells[(m, c, k)] = text
    shown = {k for k, v in report.items() if v != "—"}
    assert shown and shown <= set(view) and shown <= set(screen_cells)
    for key in shown:
        assert report[key] == view[key] == screen_cells[key], key


async def test_z_leaves_the_disputed_references_out_of_the_matrix(ui_cfg: Config) -> None:
    from fintrade_tui.workspace.disputes import DisputeStore

    with open_workspace(ui_cfg.workspace) as ws:
        DisputeStore(ws).save("F1", "ambiguous", "high against what?", "ana")
        kept = accuracy_table(score_rows(ws, "llm", leave_out={"F1"}), n_resamples=RESAMPLES)
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        note = screen.query_one("#accuracy-note", Static)
        assert "1 question with a disputed reference: in the matrix" in str(note.render())
        before = cells(screen.query_one("#accuracy", DataTable))
        await pilot.press("z")
        await until(pilot, lambda: "left out (z)" in str(note.render()), what="F1 left out")
        after = cells(screen.query_one("#accuracy", DataTable))
        assert after != before
        # the F column now holds T2's and FT3's scores only: as the table without F1 computes
        grid = {(r[0], r[1]): r for r in after}
        cell = kept["cells"]["alpha"]["no_rag"]["overall"]
        assert grid[("alpha", "No-RAG")][-1] == str(cell["n"])
