"""Pilot tests of the Results screen's failure cases on a hand-populated workspace (see
tests/unit/test_failures_export.py): each failure toggle changes the cases listed, Enter
replays in the Arena, `x` writes the case study and `w` the filtered view; the cause column and
`y`; `j`, where the judge and the audit disagree; and a snapshot of the screen."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from fintrade_tui.screens.results import KEYS, ResultsScreen
from textual.pilot import Pilot
from textual.widgets import Checkbox, DataTable, Static
from textual.worker import WorkerFailed

from fintrade_tui.config import Config
from fintrade_tui.reports.failures import FILTERS
from fintrade_tui.stats.tables import shown_conditions
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.ui.screenshots import tables_measured
from fintrade_tui.workspace.connection import open_workspace
from tests.ui.conftest import notices, settle
from tests.ui.results_app import (
    SIZE,
    Recorder,
    results_ui_cfg,  # noqa: F401  (the fixture ui_cfg)
)
from tests.unit.test_failures_export import EXPECTED


def _listed(screen: ResultsScreen) -> list[tuple[str, list[str]]]:
    table = screen.query_one("#failures", DataTable)
    keys = [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]
    assert keys == [c["key"] for c in screen.shown]
    return [(c["filter"], c["run_ids"]) for c in screen.shown]


ALL_CASES = [(f, ids) for f in FILTERS for ids in EXPECTED[f]]


async def test_failure_toggles_change_the_listed_cases(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert _listed(screen) == ALL_CASES
        for name in FILTERS:
            await pilot.press(KEYS[name])
            await pilot.pause()
            assert screen.query_one(f"#f-{name}", Checkbox).value is False
            assert _listed(screen) == [c for c in ALL_CASES if c[0] != name]
            await pilot.press(KEYS[name])
            await pilot.pause()
            assert _listed(screen) == ALL_CASES
        # only errors, then nothing
        for name in FILTERS:
            if name != "errors":
                await pilot.press(KEYS[name])
        await pilot.pause()
        assert _listed(screen) == [("errors", ["r05"]), ("errors", ["r06"])]
        await pilot.press("e")
        await pilot.pause()
        assert _listed(screen) == []
        assert "No failure cases" in str(screen.query_one("#case-detail", Static).render())


async def test_enter_replays_read_only_and_x_exports(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        goto = Recorder()
        app.action_goto = goto  # the Arena is another screen's business
        notes = notices(app)
        screen = app.screen
        index = next(i for i, c in enumerate(screen.shown) if c["filter"] == "contradicted")
        screen.query_one("#failures", DataTable).move_cursor(row=index)
        await pilot.pause()
        assert "2 figures: 1 supported, 1 contradicted" in str(
            screen.query_one("#case-detail", Static).render()
        )
        await pilot.press("enter")
        await pilot.pause()
        # the case's run, then the question's other completed answers: alpha's No-RAG, Oracle
        # (beta's F1 run ended in an error)
        assert goto.calls == [("arena", {"run_ids": ["r02", "r01", "r08"], "read_only": True})]
        await pilot.press("x")
        await settle(pilot)
        path = ui_cfg.store.parent / "exports" / "case-F1-r02.md"
        page = path.with_suffix(".html")
        try:
            assert notes == [f"Case study written (HTML, Markdown):\n{page}\n{path}"]
            text = path.read_text(encoding="utf-8")
            assert "# Case study: F1" in text and "| CONTRADICTED | AAPL | roe |" in text
            assert "> Apple's ROE is 0.90 and its D/E is 1.87." in text
            html = page.read_text(encoding="utf-8")
            assert 'id="run-r02"' in html and '<td class="verdict-CONTRADICTED">' in html
            # the explorer's own screens, drawn headlessly while this one stays up
            assert 'data-screen="Arena"' in html and 'data-screen="Company"' in html
        finally:
            path.unlink(missing_ok=True)
            page.unlink(missing_ok=True)
        # an error is shown in place; the app stays up
        worker = screen.export_case(["nope"])
        with contextlib.suppress(WorkerFailed):
            await worker.wait()
        await pilot.pause()
        assert notes[-1].startswith("run 'nope': not found") and app.is_running


async def test_w_writes_the_filtered_view_as_an_html_report_and_files(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        notes = notices(app)
        screen = app.screen
        await pilot.press("e")  # errors off: the view lists the other filters' cases
        await pilot.pause()
        shown = list(screen.shown)
        await pilot.press("w")
        await settle(pilot)
        assert len(notes) == 1 and notes[0].startswith("View written (HTML report, runs):")
        page, runs = (Path(p) for p in notes[0].splitlines()[1:])
        html = page.read_text(encoding="utf-8")
        assert page.suffix == ".html" and runs.name.endswith("-runs.jsonl") and runs.is_file()
        assert (
            html.count('<tr class="case">') == len(shown)
            and "errors" not in (html.split('<table class="cases">')[1].split("</table>")[0])
        )
        for run in {r for c in shown for r in c["run_ids"]}:
            assert f'id="run-{run}"' in html
        assert 'id="run-r05"' not in html  # only an error case holds it
        assert html.count('class="num cell"') == sum(
            len(screen.table["categories"]) for _ in _matrix_keys(screen.table)
        )


def _matrix_keys(table: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m, c) for m in table["models"] for c in shown_conditions(table, m)]


async def _settled_on_failures(pilot: Pilot) -> None:
    """Settled, with the focus on the failure table whenever its rows arrived (the footer
    shows different keys otherwise)."""
    await settle(pilot)
    pilot.app.screen.query_one("#failures").focus()
    await pilot.pause()
    await tables_measured(pilot)  # every table has drawn its rows before the picture


def test_results_snapshot(ui_cfg: Config, snap_compare) -> None:
    app = FinTradeApp(ui_cfg, start="results")
    assert snap_compare(app, terminal_size=SIZE, run_before=_settled_on_failures)


async def test_the_cause_column_and_y_showing_one_cause(ui_cfg: Config) -> None:
    """Each case names the cause of its failed run (reports/causes.py); `y` keeps one cause's
    cases, then the next, then all again."""
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        causes = {(c["filter"], tuple(c["run_ids"])): c["cause"] for c in screen.shown}
        # r07: FT3 beta labelled a refusal; r01: F1 alpha labelled incorrect, nothing to tell why
        assert causes[("refusal", ("r07",))] == "refused"
        assert causes[("incorrect", ("r01",))] == "undetermined"
        assert causes[("unrated", ("r03",))] is None  # nobody called it wrong
        await pilot.press("y")  # refused
        await pilot.pause()
        assert {c["cause"] for c in screen.shown} == {"refused"}
        assert "cause: refused (y)" in str(screen.query_one("#f-cause", Static).render())
        detail = " ".join(str(screen.query_one("#case-detail", Static).render()).split())
        assert "Cause: refused: the answer declines to answer" in detail
        for _ in range(7):  # through the other six causes, back to all
            await pilot.press("y")
        await pilot.pause()
        assert len(screen.shown) == len(screen.cases)


async def test_j_shows_where_the_judge_and_the_audit_disagree(ui_cfg: Config) -> None:
    """Issue 54: the judge gives F1's Oracle answer (r08) 5 while its audit contradicts its ROE;
    `j` toggles the judge ≠ audit cases, whose detail shows both sides. A person labelled r08
    correct: that verdict stands, the disagreement is listed all the same."""
    from fintrade_tui.workspace.scores import ScoreStore
    from tests.unit.test_failures_export import AUDIT_R02, llm_score

    with open_workspace(ui_cfg.workspace) as ws:
        ScoreStore(ws).save(llm_score("r08", 5, audit=AUDIT_R02))
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        box = screen.query_one("#f-judge_audit", Checkbox)
        assert KEYS["judge_audit"] == "j" and box.value is True
        assert str(box.label) == "judge ≠ audit (j)"
        # every toggle in view: two rows inside the screen's width
        toggles = list(screen.query("#f-toggles Checkbox"))
        assert all(t.region.right <= SIZE[0] and t.region.height == 1 for t in toggles)
        assert {t.region.y for t in toggles} <= {toggles[0].region.y, toggles[0].region.y + 1}
        mine = [c for c in screen.shown if c["filter"] == "judge_audit"]
        assert [c["run_ids"] for c in mine] == [["r08"]]
        table = screen.query_one("#failures", DataTable)
        table.move_cursor(row=screen.shown.index(mine[0]))
        await pilot.pause()
        detail = " ".join(str(screen.query_one("#case-detail", Static).render()).split())
        assert (
            "judge ≠ audit: the judge gave accuracy 5, but the audit contradicts 1 of its"
            " figures (ROE 0.9 vs 1.606 in the store)" in detail
        )
        assert "judge_accuracy: 5" in detail and "contradicted: 1" in detail
        await pilot.press("j")
        await pilot.pause()
        assert box.value is False and all(c["filter"] != "judge_audit" for c in screen.shown)
        await pilot.press("j")
        await pilot.pause()
        assert [c["run_ids"] for c in screen.shown if c["filter"] == "judge_audit"] == [["r08"]]
        # the oracle_flip case of F1 alpha still rests on r08's label, not on the judge
        flip = next(c for c in screen.shown if c["filter"] == "oracle_flip")
        assert flip["numbers"]["oracle"] == "label"
