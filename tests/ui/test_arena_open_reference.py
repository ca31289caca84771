"""The Arena on FinTradeBench's F4 (issue 40): an open-ended seed question whose reference is
an analysis in prose with dozens of figures, answered as the local model answers it (numbered
steps, the ROE stated twice, a P/E the reference never gives). The pane's check line is the
claim-level one — which of the reference's key figures the answer states — never a single-figure
"not equal"; the numeric audit (through the inline judge) lists no step number and no claim twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from fintrade_tui.config import Config, ModelConfig
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.store.db import connect
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import save_questions
from fintrade_tui.workspace.run_records import RunStore
from tests.conftest import needs_bundle
from tests.ui.conftest import settle, until
from tests.ui.test_arena import JUDGE, ArenaApp

pytestmark = needs_bundle
SEEDS = "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"
# as the local 1.5B model answers F4 (the case): steps, the ROE twice, a P/E of 24.5
ANSWER = (
    "Step 1: Nvidia's ROE is 33.38% and its ROA is 21.31%, so profitability is high.\n"
    "Step 2: The P/E ratio is 24.5, which is reasonable for its growth.\n"
    "Step 3: The ROE of 33.38% shows efficient use of shareholder equity.\n"
    "Step 4: Therefore profitability looks sustainable at its valuation."
)


@pytest.fixture
def f4_case(built_store: Config, tmp_path: Path) -> tuple[Config, str]:
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = tmp_path / "workspace.duckdb"
    judge = ModelConfig(model="openai/gpt-4o-mini", extra={"mock_response": json.dumps(JUDGE)})
    cfg.models = {**cfg.models, "judge": judge}
    cfg.judging = cfg.judging.model_copy(update={"model": "judge"})
    with connect(cfg.store) as con:
        r = Resolver(con, cfg.questions.reference_date, cfg.fundamentals.estimated_lag_days)
        f4 = next(q for q in read_questions(cfg.bundle / SEEDS, "fintradebench") if q.id == "F4")
        q = r.resolve(f4)
    with open_workspace(cfg.workspace) as ws:
        save_questions(ws, [q])
        runs = RunStore(ws)
        rid = runs.start({"question_id": "F4", "condition": "no_rag", "model": "local"})
        runs.finish(rid, status="completed", answer=ANSWER, ttft=0.5, duration=20.0)
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
