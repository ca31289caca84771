"""Opt-in (FINTRADE_REAL_MODEL=1, with the 1.5B assembled): at every TELeR level the default
local model answers F1's Oracle and RAG prompts instead of reading the instructions back. ~4 min."""

from __future__ import annotations

import asyncio
import os
from datetime import date
from difflib import SequenceMatcher

import pytest

from fintrade_tui.config import load_config
from fintrade_tui.errors import UserError
from fintrade_tui.models import llm
from fintrade_tui.models.resolve import resolve
from fintrade_tui.runs.prompts import LEVELS, build_prompt
from fintrade_tui.workspace.evidence import Evidence, EvidenceItem
from fintrade_tui.workspace.questions import Question

pytestmark = pytest.mark.skipif(
    os.environ.get("FINTRADE_REAL_MODEL") != "1", reason="opt-in: FINTRADE_REAL_MODEL=1"
)

F1 = Question(
    id="F1",
    source="fintradebench",
    category="F",
    text="As of September 2025, is Apple really as profitable as everyone says it is?",
    tickers=["AAPL"],
    as_of=date(2025, 9, 30),
    golden=["roa", "roe", "earnings_price"],
)
FILING = (
    "Net sales increased during fiscal 2024 compared to 2023, driven by higher revenue from "
    "Services and iPhone, partially offset by lower net sales of iPad and Wearables. "
) * 8
RAG = [
    EvidenceItem(f"r{k}", "filing", FILING, f"AAPL 10-K filed 2024-11-01, part {k}")
    for k in range(4)
]
ORACLE = [
    EvidenceItem("o1", "oracle", "AAPL return on assets: 7.11% (10-K filed 2024-11-01)", "ROA"),
    EvidenceItem("o2", "oracle", "AAPL return on equity: 35.36% (10-K filed 2024-11-01)", "ROE"),
    EvidenceItem("o3", "oracle", "AAPL earnings/price: 2.79% (close 2025-09-30)", "E/P"),
]


def _longest_copied(answer: str, prompt: str) -> int:
    m = SequenceMatcher(None, answer, prompt, autojunk=False)
    return m.find_longest_match(0, len(answer), 0, len(prompt)).size


@pytest.mark.parametrize("condition", ["oracle", "rag"])
@pytest.mark.parametrize("level", LEVELS)
def test_each_level_gets_an_answer_not_the_instructions(level: str, condition: str) -> None:
    cfg = load_config()
    try:
        kw = resolve(cfg, "local").call()
    except UserError as exc:
        pytest.skip(str(exc))
    items = ORACLE if condition == "oracle" else RAG  # long evidence: where readback happened
    p = build_prompt(F1, Evidence(condition, items), level, 700)
    kw = kw.updated(max_tokens=80, temperature=0.0)

    async def go() -> str:
        return "".join([t async for t in llm.stream_chat(kw, p.messages, llm.Usage())])

    answer = asyncio.run(go())
    # the guidance (system message) and the directive before the question
    instructions = p.messages[0]["content"] + "\n" + p.messages[1]["content"].split("Question:")[0]
    assert len(answer) > 100, answer
    assert _longest_copied(answer, instructions) < 60, answer  # not the task read back
