"""Pilot tests of the Results and Questions screens on a hand-populated workspace (see
tests/unit/test_failures_export.py): the matrix equals accuracy_table, each failure toggle
changes the cases listed, Enter replays in the Arena, `x` writes the case study; the Questions
screen filters and shows a question's detail; a snapshot of the Results screen."""

from __future__ import annotations

import contextlib
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from fintrade_tui.screens.questions import QuestionsScreen, filter_questions
from fintrade_tui.screens.results import KEYS, RESAMPLES, ResultsScreen
from textual.pilot import Pilot
from textual.widgets import Checkbox, DataTable, Markdown, Select, Static
from textual.worker import WorkerFailed

from fintrade_tui.config import Config
from fintrade_tui.judging.session import agreement_pairs, score_rows
from fintrade_tui.reports.failures import FILTERS
from fintrade_tui.stats.agreement import agreement_table
from fintrade_tui.stats.tables import COLUMNS, accuracy_table, fmt_cell, shown_conditions
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.ui.screenshots import tables_measured
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.evidence import LABELS
from tests.ui.conftest import notices, settle, until
from tests.unit.test_failures_export import EXPECTED, QUESTIONS

SIZE = (160, 48)


@pytest.fixture
def ui_cfg(built_store: Config, populated_workspace: Path) -> Config:
    """The session store with a workspace of its own, populated by hand (a copy of one
    `populate()` wrote: tests/ui/conftest.py)."""
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = populated_workspace
    return cfg


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


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, name: str, **kwargs: Any) -> None:
        self.calls.append((name, kwargs))


def _cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _listed(screen: ResultsScreen) -> list[tuple[str, list[str]]]:
    table = screen.query_one("#failures", DataTable)
    keys = [table.coordinate_to_cell_key((i, 0)).row_key.value for i in range(table.row_count)]
    assert keys == [c["key"] for c in screen.shown]
    return [(c["filter"], c["run_ids"]) for c in screen.shown]


ALL_CASES = [(f, ids) for f in FILTERS for ids in EXPECTED[f]]


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
            assert _cells(grid) == want
            assert screen.kind == kind
            if kind == "llm":
                assert _cells(grid)[1][2] == "40.0 (-50.0%)"  # alpha RAG F: 2 / 5 vs 4 / 5
                await pilot.press("s")  # switch to the people's scores
                await settle(pilot)
        agreement = screen.query_one("#agreement", DataTable)
        rows = _cells(agreement)
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
        for (m, c), row in zip(rows, _cells(grid), strict=True):
            for k, text in zip(COLUMNS, row[2:-1], strict=True):
                screen_cells[(m, c, k)] = text
    shown = {k for k, v in report.items() if v != "—"}
    assert shown and shown <= set(view) and shown <= set(screen_cells)
    for key in shown:
        assert report[key] == view[key] == screen_cells[key], key


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


async def test_questions_filter_by_category_and_show_detail(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="questions")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, QuestionsScreen)
        table = screen.query_one("#questions", DataTable)
        ids = lambda: [str(table.get_row_at(i)[0]) for i in range(table.row_count)]  # noqa: E731
        assert ids() == ["F1", "FT3", "T2", "X9"]
        await pilot.press("c")  # category: All -> F
        await pilot.pause()
        assert screen.query_one("#q-category", Select).value == "F"
        assert ids() == ["F1", "X9"]
        screen.query_one("#q-category", Select).value = "T"
        await pilot.pause()
        assert ids() == ["T2"]
        detail = screen.query_one("#q-detail", Markdown).source
        assert QUESTIONS[1].text in detail and "**Tickers:** MSFT" in detail
        assert "**MSFT rsi_14** = 51.2" in detail and "No: the RSI was near 50." in detail
        screen.query_one("#q-category", Select).value = "FT"
        await pilot.pause()
        detail = screen.query_one("#q-detail", Markdown).source
        assert "NVDA:roe: no filing" in detail  # coverage gaps
        await pilot.press("s")  # status: All -> resolved
        await pilot.pause()
        assert ids() == ["FT3"]
        goto = Recorder()
        app.action_goto = goto
        await pilot.press("a")
        await pilot.press("enter")
        assert goto.calls == [("arena", {"question_id": "FT3"})] * 2


async def test_questions_opened_on_a_ticker_or_a_quarter(ui_cfg: Config) -> None:
    app = FinTradeApp(ui_cfg, start="results")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.push_screen(QuestionsScreen(ticker="aapl"))
        await settle(pilot)
        table = app.screen.query_one("#questions", DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["F1"]
        app.pop_screen()
        await app.push_screen(QuestionsScreen(quarter_end=date(2024, 9, 30)))
        await settle(pilot)
        table = app.screen.query_one("#questions", DataTable)
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["T2"]
        assert app.screen.query_one("#q-quarter", Select).value == date(2024, 9, 30)


def test_filter_questions_by_quarter_and_status() -> None:
    assert [q.id for q in filter_questions(QUESTIONS, quarter=date(2024, 12, 31))] == ["F1"]
    assert [q.id for q in filter_questions(QUESTIONS, quarter=date(2025, 5, 1))] == ["FT3"]
    assert [q.id for q in filter_questions(QUESTIONS, status="partial")] == ["FT3"]
    assert [q.id for q in filter_questions(QUESTIONS, status="unresolved")] == ["X9"]
    assert [q.id for q in filter_questions(QUESTIONS, "F", "aapl")] == ["F1"]


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
        before = _cells(screen.query_one("#accuracy", DataTable))
        await pilot.press("z")
        await until(pilot, lambda: "left out (z)" in str(note.render()), what="F1 left out")
        after = _cells(screen.query_one("#accuracy", DataTable))
        assert after != before
        # the F column now holds T2's and FT3's scores only: as the table without F1 computes
        grid = {(r[0], r[1]): r for r in after}
        cell = kept["cells"]["alpha"]["no_rag"]["overall"]
        assert grid[("alpha", "No-RAG")][-1] == str(cell["n"])


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
