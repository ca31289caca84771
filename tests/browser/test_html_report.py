"""HTML case studies and view reports as Chromium shows them, with the network blocked: every
pane, its answer (the run row's text, exactly), evidence, scores, the charts and the explorer's
own screenshots render; hostile text stays text and runs nothing; the view report's matrix shows
`report --json`'s cells.

The files come from the real command (`fintrade-tui export html`) on the hand-populated
workspace of tests/unit/test_failures_export.py, plus the hostile run of
tests/unit/test_html_export.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config
from fintrade_tui.stats.tables import fmt_cell
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.run_records import RunStore
from tests.unit.test_failures_export import populate
from tests.unit.test_html_export import (  # noqa: F401
    REFERENCE_MD,
    add_hostile_run,
    case_cfg,
    written_config,
)

pytestmark = pytest.mark.browser
CASE = ["r01", "r02", "r08", "r09"]


def _export(cfg: Config, out: Path, *args: str) -> dict:
    res = CliRunner().invoke(
        main, ["--config", str(cfg.source_file), "export", "html", *args, "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


@pytest.fixture(scope="module")
def case_file(built_store: Config, tmp_path_factory: pytest.TempPathFactory) -> tuple[Config, Path]:
    """The case study both its browser tests open, exported once (they only read it), from
    the workspace test_html_export's `case_cfg` makes."""
    folder = tmp_path_factory.mktemp("html-case")
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = folder / "workspace.duckdb"
    with open_workspace(cfg.workspace) as con:
        populate(con)
        add_hostile_run(con)
    cfg = written_config(cfg, folder)
    out = folder / "case.html"
    assert _export(cfg, out, *CASE) == {"path": str(out), "kind": "case", "runs": 4}
    return cfg, out


def test_a_case_study_renders_offline_with_every_element(
    case_file: tuple[Config, Path], offline_page
) -> None:
    cfg, out = case_file
    page = offline_page
    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    with open_workspace(cfg.workspace) as ws:
        runs = {rid: RunStore(ws, read_only=True).get(rid) for rid in CASE}
    assert page.locator("section.pane").count() == 4
    for rid, run in runs.items():
        pane = page.locator(f"#run-{rid}")
        assert pane.is_visible()
        assert pane.locator(".answer").inner_text() == run["answer"].replace("\x1b", "␛")
        assert run["model"] in pane.locator("h3").inner_text()
    # evidence with its filing, section and filed date, and the passage itself
    ev = page.locator("#run-r09 .evidence-item").first.inner_text()
    assert "AAPL 10-K filed 2024-11-01, Item 1A" in ev and "section Item 1A" in ev
    assert "0000320193-24-000123" in ev and "2024-11-01" in ev and "Passage says:" in ev
    # the judge's and the people's scores with their reasons, the audit's verdicts and marks
    scores = page.locator("#run-r01 table.scores").inner_text()
    assert "judge" in scores and "ana" in scores and "paper:human" in scores
    assert "accuracy reasoning for r01" in page.locator("#run-r01").inner_text()
    assert page.locator("#run-r02 mark.audit.bad").inner_text() == "0.90"
    assert page.locator("#run-r02 mark.audit.ok").inner_text() == "1.87"
    assert "CONTRADICTED" in page.locator("#run-r02 table.audit").inner_text()
    # fundamentals of the quarter known on the question's day, and the charts drawn
    assert "Debt/Equity" in page.locator("table.fundamentals").inner_text()
    charts = page.locator("svg.chart")
    assert charts.count() == 3
    for i in range(charts.count()):
        box = charts.nth(i).bounding_box()
        assert box and box["width"] > 300 and box["height"] > 100
        assert charts.nth(i).locator("polyline.series").count() >= 1
    # the explorer's own screenshots, decoded as images
    shots = page.locator("img[data-screen]")
    assert shots.count() == 2
    for i in range(2):
        assert shots.nth(i).evaluate("img => img.decode().then(() => img.naturalWidth)") > 800
    assert page.blocked == []


def test_hostile_text_renders_as_text_and_runs_nothing(
    case_file: tuple[Config, Path], offline_page
) -> None:
    _, out = case_file
    page = offline_page
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("script").count() == 0 and page.locator("img[src=x]").count() == 0
    assert page.locator("b", has_text="bold?").count() == 0
    shown = "<script>window.__pwned = 1</script></div></section><b>bold?</b> [b]markup[/b]"
    assert shown in page.locator("#run-r09 .answer").inner_text()
    assert shown in page.locator("#run-r09 .passage").inner_text()
    assert "␛[31mred␛[0m" in page.locator("#run-r09 .answer").inner_text()
    # the hostile run's closing tags did not end its pane: the next content is outside it
    assert page.locator("#run-r09 h4", has_text="Evidence").count() == 1
    assert errors == [] and page.blocked == []


def test_a_markdown_reference_renders_headings_and_bold_and_its_script_stays_text(
    built_store: Config, tmp_path: Path, offline_page
) -> None:
    """The benchmark's reference answer (Markdown, as the seeds' are) drawn as HTML elements;
    a `<script>` in it is text on the page and runs nothing."""
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = tmp_path / "workspace.duckdb"
    with open_workspace(cfg.workspace) as con:
        populate(con)
        con.execute("UPDATE questions SET reference_answer = ? WHERE id = 'F1'", [REFERENCE_MD])
    cfg = written_config(cfg, tmp_path)
    out = tmp_path / "reference.html"
    _export(cfg, out, "r01")
    page = offline_page
    page.goto(out.as_uri())
    page.wait_for_load_state("load")
    ref = page.locator(".reference-answer")
    assert ref.locator("h3").inner_text() == "Why"
    assert ref.locator("strong").inner_text() == "very high"
    assert ref.locator("li").count() == 2 and ref.locator("a").count() == 0
    assert "<script>window.__pwned = 3</script>" in ref.inner_text()
    assert page.locator("script").count() == 0
    assert page.evaluate("typeof window.__pwned") == "undefined" and page.blocked == []


def test_a_view_report_shows_report_json_cells(
    case_cfg: Config,  # noqa: F811
    tmp_path: Path,
    offline_page,
) -> None:
    # a workspace of its own, not case_file's: exporting a case study screens its runs for
    # flags, which adds a failure case to the view
    cfg = written_config(case_cfg, tmp_path)
    out = tmp_path / "view.html"
    info = _export(cfg, out, "--view", "--resamples", "500")
    assert info["kind"] == "view" and info["cases"] == 13
    res = CliRunner().invoke(
        main, ["--config", str(cfg.source_file), "report", "--json", "--resamples", "500"]
    )
    report = {
        (c["model"], c["condition"], c["category"]): c for c in json.loads(res.output)["accuracy"]
    }
    page = offline_page
    page.goto(out.as_uri())
    cells = page.locator("table.matrix td.cell")
    assert cells.count() > 0
    seen = set()
    for i in range(cells.count()):
        cell = cells.nth(i)
        key = tuple(cell.get_attribute(f"data-{k}") for k in ("model", "condition", "category"))
        text = " ".join(cell.inner_text().split())
        assert text == fmt_cell(report[key]), key
        seen.add(key)
    assert {k for k, c in report.items() if c["n"]} <= seen
    # each listed case links to its question's section, which holds the case's runs
    page.locator("table.cases a", has_text="FT3").first.click()
    assert page.evaluate("location.hash") == "#q-FT3"
    assert page.locator("#run-r06").is_visible() and page.locator("#run-r07").count() == 1
    assert page.blocked == []
