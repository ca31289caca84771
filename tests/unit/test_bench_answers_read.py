"""The non-answer rule of benchmarks/bench_answers_read.py on the answers issue 44 quoted from
the default local model (a No-RAG answer repeating the prompt's note) and on ones that answer."""

from __future__ import annotations

from datetime import date

from benchmarks.bench_answers_read import non_answer
from fintrade_tui.runs.prompts import build_prompt
from fintrade_tui.workspace.evidence import Evidence
from fintrade_tui.workspace.questions import Question

Q = Question(
    id="F4",
    source="t",
    category="F",
    text="How did NVDA's ROA change over the quarter?",
    tickers=["NVDA"],
    as_of=date(2025, 8, 27),
)


def _prompt() -> str:
    p = build_prompt(Q, Evidence("no_rag", []))
    return "\n".join(m["content"] for m in p.messages)


def test_an_echo_or_a_few_words_is_a_non_answer_and_an_answer_is_not() -> None:
    prompt = _prompt()
    assert non_answer("No evidence is provided for this question.", prompt, Q.text) == "short"
    assert non_answer("I do not have the necessary information.", prompt, Q.text) == "short"
    # the prompt's longest line that is not the question, read back before a few words
    line = max((ln for ln in prompt.splitlines() if Q.text not in ln), key=len)
    assert len(line.split()) >= 12
    echoed = f"{line} NVDA's ROA is not something I can give."
    assert non_answer(echoed, prompt, Q.text) == "echo"
    answer = (
        f"{Q.text} NVDA's return on assets rose from about 0.16 to 0.19 over the quarter as"
        " net income grew faster than total assets; the data centre business drove it, so"
        " the ROA improved."
    )
    assert non_answer(answer, prompt, Q.text) == ""  # restating the question is no echo
