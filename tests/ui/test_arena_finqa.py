"""The Arena on a FinQA question (issue 31): a question imported from FinQA's published train
file, answered under Oracle (the evidence the real builder gives: the table and the passages),
replayed. The pane shows the match as a person reads it and under FinQA's rule; the evidence
panel lists the reference program's steps, then the answer's with the step that leaves the
reference marked; the table item opens drawn as a table holding the published cells."""

from __future__ import annotations

import json
import operator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import OptionList, Static

from fintrade_tui.config import Config
from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.resolve import Resolver
from fintrade_tui.runs.conditions import ConditionContext, build_evidence
from fintrade_tui.runs.runner import evidence_json  # how a run stores its evidence
from fintrade_tui.store.db import connect
from fintrade_tui.ui.evidence import EvidencePanel, PassageScreen
from fintrade_tui.workspace.connection import open_workspace
from fintrade_tui.workspace.questions import save_questions
from fintrade_tui.workspace.run_records import RunStore
from tests.ui.arena_app import ArenaApp
from tests.ui.conftest import settle, until

FINQA = Path(__file__).parents[1] / "data" / "external" / "finqa" / "train_sample.json"
SIGN = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
DO = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
}


def _two_step_item() -> dict[str, Any]:
    """The first published item whose program starts with arithmetic on two numbers and has a
    second step (so an answer can follow step 1 and then leave)."""
    for item in json.loads(FINQA.read_text()):
        steps = [s.strip() for s in item["qa"]["program"].split("),") if s.strip()]
        op, _, args = steps[0].partition("(")
        a, _, b = args.rstrip(")").partition(",")
        if len(steps) >= 2 and op in SIGN and "#" not in args and "const" not in args:
            return item | {"first": (op, a.strip(), b.strip())}
    raise AssertionError("no two-step arithmetic program in the sample")


@pytest.fixture
def finqa_case(built_store: Config, tmp_path: Path) -> tuple[Config, str, dict[str, Any]]:
    cfg = built_store.model_copy(deep=True)
    cfg.workspace = tmp_path / "workspace.duckdb"
    item = _two_step_item()
    with connect(cfg.store) as con:
        r = Resolver(con, cfg.questions.reference_date, cfg.fundamentals.estimated_lag_days)
        q = next(
            r.evidence(r.resolve(q))
            for q in read_questions(FINQA, "finqa")
            if q.extra["published_id"] == item["id"]
        )
        evidence = evidence_json(build_evidence("oracle", q, ConditionContext(cfg, con)))
    op, a, b = item["first"]
    first = DO[op](float(a.replace(",", "")), float(b.replace(",", "")))  # the published literals
    wrong = round(first * 3, 4)  # a second step no reference step computes
    answer = f"{a} {SIGN[op]} {b} = {first:g}. Then {first:g} * 3 = {wrong:g}. Answer: {wrong:g}"
    with open_workspace(cfg.workspace) as ws:
        save_questions(ws, [q])
        runs = RunStore(ws)
        rid = runs.start(
            {"question_id": q.id, "condition": "oracle", "model": "script", "evidence": evidence}
        )
        runs.finish(rid, status="completed", answer=answer, ttft=0.2, duration=1.0)
    return cfg, rid, item


def _scores(pane: Any) -> str:
    return str(pane.query_one(".pane-scores", Static).render())


async def test_the_arena_shows_a_finqa_trace_and_its_table(finqa_case) -> None:
    cfg, rid, item = finqa_case
    app = ArenaApp(cfg, run_ids=[rid], read_only=True)
    async with app.run_test(size=(180, 50)) as pilot:
        await settle(pilot)
        arena = app.screen
        pane = arena.panes()[0]
        panel = arena.query_one(EvidencePanel)
        await until(  # the checks' thread, then the pane and the panel
            pilot,
            lambda: (
                "Benchmark rule" in _scores(pane)
                and any(r.line.startswith("[answer step") for r in panel.rows)
            ),
            what="the checks in the pane and the trace in the panel",
        )
        scores = _scores(pane)
        assert "Match (tolerance): ✗ not equal" in scores
        assert "Benchmark rule (finqa): ✗ not equal" in scores
        assert f"reference {item['qa']['exe_ans']:g}" in scores.replace(",", "")
        lines = [r.line for r in panel.rows]
        n_ref = len([s for s in item["qa"]["program"].split("),") if s.strip()])
        ref_steps = [ln for ln in lines if ln.startswith("[ref step")]
        assert len(ref_steps) == n_ref
        own = [ln for ln in lines if ln.startswith("[answer step")]
        assert len(own) == 2 and "leaves the reference" not in own[0]
        assert own[1].endswith("✗ leaves the reference here")
        # the table: Enter on its row opens the cells as published
        row = next(i for i, r in enumerate(panel.rows) if r.table)
        assert panel.rows[row].line.startswith("[table]")
        ol = panel.query_one(OptionList)
        ol.focus()
        ol.highlighted = row
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PassageScreen)
        drawn = app.screen.query_one(".passage-table", Static).content  # the rich Table
        cells = {str(c) for col in drawn.columns for c in col.cells}
        body = [c for r in item["table_ori"][1:] for c in r[1:] if c.strip()]
        assert set(body) <= cells
