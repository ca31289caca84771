"""The case study of the analyst's own question (no reference), as Chromium draws it at
1400 x 1000: three answers side by side, each with its judge scores and numeric audit, and
every table no wider than its column (a pane's tables once drew 526-875 px in 439 px columns).

The file comes from the real commands: `questions add`, `ask` (mock model) twice, `judge`
(a mock judge), `export html --question`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.config import Config
from tests.conftest import write_config

pytestmark = pytest.mark.browser
ANSWER = (
    "NVIDIA's ROE was 26.8% and its RSI 37.5 as of the filing; debt/equity 0.1 and the 20-day "
    "moving average 185.3, so the valuation looks stretched against weakening momentum."
)
JUDGE = {
    **{
        d: {"justification": f"{d}: the figures agree with the store at the as-of", "score": 4}
        for d in ("accuracy", "completeness", "relevance", "clarity")
    },
    "metrics_used": ["ROE", "RSI", "Debt/Equity"],
    "fundamental_integration": 3,
    "trading_signal_integration": 3,
    "reasoning_depth": 2,
}


def _cli(config: Path, *args: str) -> str:
    res = CliRunner().invoke(main, ["--config", str(config), *args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def own_case(built_store: Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("own-case")
    config = write_config(
        folder / "cfg",
        built_store.bundle,
        built_store.store,
        f"workspace: {folder / 'ws.duckdb'}\n"
        "models:\n"
        f"  mock: {{model: openai/gpt-4o-mini, extra: {{mock_response: {json.dumps(ANSWER)}}}}}\n"
        "  judge:\n    model: openai/gpt-4o-mini\n"
        f"    extra: {{mock_response: {json.dumps(json.dumps(JUDGE))}}}\n"
        "runs: {default_model: mock}\njudging: {model: judge}\n",
    )
    text = "Is NVIDIA's ROE strong enough to justify its RSI and Debt/Equity?"
    _cli(config, "questions", "add", text, "--ticker", "NVDA")
    _cli(config, "ask", "OWN-1", "-c", "no_rag,oracle", "--json")
    _cli(config, "ask", "OWN-1", "-c", "no_rag", "--json")
    _cli(config, "judge", "--json")
    out = folder / "case.html"
    _cli(config, "export", "html", "--question", "OWN-1", "--no-screenshots", "-o", str(out))
    return out


MEASURE = """() => [...document.querySelectorAll('table')].map(t => {
    const col = t.closest('.pane') || document.body;
    const cs = getComputedStyle(col);
    const inner = col.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
    return {table: t.className, pane: t.closest('.pane') ? t.closest('.pane').id : null,
            drawn: t.getBoundingClientRect().width, content: t.scrollWidth, column: inner};
})"""


def test_every_table_of_an_own_question_case_study_fits_its_column(
    own_case: Path, offline_page
) -> None:
    page = offline_page
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(own_case.as_uri())
    page.wait_for_load_state("load")
    assert page.locator("section.pane").count() == 3
    assert page.locator("table.question-meta td.source").inner_text() == "own"
    assert page.locator("p.no-reference").is_visible()
    tables = page.evaluate(MEASURE)
    in_panes = [t for t in tables if t["pane"]]
    assert sorted(t["table"] for t in in_panes) == ["audit"] * 3 + ["scores"] * 3
    columns = {t["column"] for t in in_panes}
    assert all(c < 470 for c in columns), columns  # three panes side by side
    for t in tables:
        assert t["drawn"] <= t["column"] + 0.5, t
        assert t["content"] <= t["column"] + 0.5, t
    # nothing lost to the narrower tables: the verdicts, sources and the judge's scores
    audit = page.locator("section.pane table.audit").first.inner_text()
    assert "SUPPORTED" in audit and "NVDA" in audit and "accession" in audit
    assert "llm · judge" in page.locator("section.pane table.scores").first.inner_text()
    assert page.blocked == []
