"""The Arena on FinTradeBench's F4 (issue 40): an open-ended seed question whose reference is
an analysis in prose with dozens of figures, answered as the local model answers it (numbered
steps, the ROE stated twice, a P/E the reference never gives). The pane's check line is the
claim-level one — which of the reference's key figures the answer states — never a single-figure
"not equal"; the numeric audit (through the inline judge) lists no step number and no claim twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from fintrade_tui.config import Config
from tests.conftest import needs_bundle
from tests.ui.arena_app import JUDGE, ArenaApp
from tests.ui.conftest import f4_workspace, settle, until

pytestmark = needs_bundle
# as the local 1.5B model answers F4 (the case): steps, the ROE twice, a P/E of 24.5
ANSWER = (
    "Step 1: Nvidia's ROE is 33.38% and its ROA is 21.31%, so profitability is high.\n"
    "Step 2: The P/E ratio is 24.5, which is reasonable for its growth.\n"
    "Step 3: The ROE of 33.38% shows efficient use of shareholder equity.\n"
    "Step 4: Therefore profitability looks sustainable at its valuation."
)


@pytest.fixture
def f4_case(built_store: Config, tmp_path: Path) -> tuple[Config, str]:
    answers = [("no_rag", ANSWER)]
    cfg, _, (rid,) = f4_workspace(built_store, tmp_path / "workspace.duckdb", JUDGE, answers)
    return cfg, rid


async def test_f4_gets_the_claim_level_line_and_a_clean_audit(f4_case) -> None:
    cfg, rid = f4_case
    app = ArenaApp(cfg, run_ids=[rid])
    async with app.run_test(size=(180, 50)) as pilot:
        await settle(pilot)
        pane = app.screen.panes()[0]
        await until(pilot, lambda: pane.checks is not None, what="the answer checks")
        scores = str(pane.query_one(".pane-scores", Static).render())
        assert "Match (tolerance): · open — open-ended reference (" in scores
        assert "33.38%" in scores and "the judge or a person decides" in scores
        assert "not equal" not in scores and "24.5 vs" not in scores
        await pilot.press("j")  # the inline judge, which runs the numeric audit
        await until(pilot, lambda: (pane.judge or {}).get("status") == "ok", what="the judge")
        await settle(pilot)
        audit = pane.judge["detail"]["audit"]
        claims = audit["claims"]
        spans = [tuple(c["span"]) for c in claims]
        assert len(spans) == len(set(spans)), "a figure is listed twice"
        stated = sorted(ANSWER[a:b] for a, b in spans)
        assert stated == sorted(["33.38%", "21.31%", "24.5", "33.38%"])  # no "Step 1".."Step 4"
        shown = str(pane.query_one(".pane-scores", Static).render())
        assert "Audit: 4 figures" in shown
