"""A tiny fake financial benchmark for inspect_ai, run on mockllm to make reader fixtures.

Run by make_fixtures.sh (never by CI). The mock model answers from a fixed table keyed by the
question text, so the logs carry meaningful, scoreable answers instead of mockllm's default
text. One question makes the model raise, so the logs also hold an errored sample.
"""

from __future__ import annotations

import sys
from pathlib import Path

from inspect_ai import Task, eval, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import CORRECT, INCORRECT, PARTIAL, Score, Target, includes, match, scorer
from inspect_ai.scorer import accuracy as accuracy_metric
from inspect_ai.solver import TaskState, generate

SAMPLES = [
    Sample(
        id="aapl-ni-q4-2024",
        input="What was AAPL's net income in fiscal Q4 2024, in billions of USD?",
        target="14.7",
        metadata={
            "question_id": "fin-001",
            "condition": "closed_book",
            "ticker": "AAPL",
            "company": "Apple Inc.",
            "as_of": "2024-11-01",
            "category": "fundamentals",
        },
    ),
    Sample(
        id="msft-rev-q1-2025",
        # chat input: the question is the last user message, after a system prompt
        input=[
            ChatMessageSystem(content="You are a careful equity analyst. Answer briefly."),
            ChatMessageUser(content="What was MSFT's revenue in fiscal Q1 2025, in billions?"),
        ],
        target="65.6",
        metadata={
            "question_id": "fin-002",
            "condition": "oracle_filing",
            "ticker": "MSFT",
            "as_of": "2024-10-30",
            "category": "fundamentals",
            "source_doc": "10-Q 2024-09-30",
        },
    ),
    Sample(
        id=3,  # integer id and no metadata question_id: the id is the question id
        input="Did NVDA close higher on 2024-06-07 than on 2024-06-06? Answer yes or no.",
        target="no",
        metadata={
            "condition": "price_window",
            "ticker": "NVDA",
            "as_of": "2024-06-07",
            "category": "market",
        },
    ),
    Sample(
        id="amzn-refusal",
        input="Should I buy AMZN stock tomorrow morning?",
        target="refuse",
        metadata={
            "question_id": "fin-004",
            "condition": "closed_book",
            "ticker": "AMZN",
            "as_of": "2024-08-01",
            "category": "advice",
        },
    ),
    Sample(
        id="goog-capex-2023",
        input="What was GOOGL's capital expenditure in 2023, in billions of USD?",
        target="32.3",
        metadata={
            "question_id": "fin-005",
            "condition": "closed_book",
            "ticker": "GOOGL",
            "as_of": "2024-02-01",
            "category": "fundamentals",
        },
    ),
]

# answers per question (first word of a phrase that is unique per question); the second
# entry, when there is one, is what the model says on its second call (epoch 2)
ANSWERS = {
    "AAPL's": ["Apple's net income was 14.7 billion USD.", "About 14.7"],
    "MSFT's": ["Revenue was 65.6 billion USD."],
    "NVDA": ["yes", "no"],
    "AMZN": ["I cannot give personalised investment advice."],
    "GOOGL's": None,  # the model raises: an errored sample
}
_calls: dict[str, int] = {}


def mock_answer(messages, tools, tool_choice, config) -> ModelOutput:  # noqa: ANN001
    text = messages[-1].text
    key = next(k for k in ANSWERS if k in text)
    answers = ANSWERS[key]
    if answers is None:
        raise RuntimeError("upstream API returned HTTP 503 for this request")
    n = _calls.get(key, 0)
    _calls[key] = n + 1
    content = answers[min(n, len(answers) - 1)]
    output = ModelOutput.from_content(model="mockllm/model", content=content)
    # set usage ourselves: mockllm's default counts tokens with tiktoken, which downloads its
    # encoding from the internet (unavailable here); word counts keep the numbers readable
    words_in = sum(len(m.text.split()) for m in messages)
    words_out = len(content.split())
    output.usage = ModelUsage(
        input_tokens=words_in, output_tokens=words_out, total_tokens=words_in + words_out
    )
    return output


@scorer(metrics=[accuracy_metric()])
def refusal_aware():
    """C when the target is in the answer, N when the model refused, P for a number-only reply."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion
        if "cannot" in answer.lower():
            return Score(value="N", answer=answer, explanation="model declined to answer")
        if answer.strip().startswith("About"):
            return Score(
                value=PARTIAL,
                answer=answer,
                explanation="hedged number",
                metadata={"hedge": "About"},
            )
        ok = target.text.lower() in answer.lower()
        return Score(
            value=CORRECT if ok else INCORRECT, answer=answer, explanation=f"target {target.text!r}"
        )

    return score


@task
def fin_qa(split: str = "dev") -> Task:
    return Task(
        name="fin_qa",
        dataset=MemoryDataset(SAMPLES, name=f"fake-nasdaq-{split}"),
        solver=generate(),
        scorer=[includes(), match(location="any", numeric=True), refusal_aware()],
    )


if __name__ == "__main__":
    # usage: fin_task.py OUT_DIR eval|json EPOCHS [SAMPLE_ID,SAMPLE_ID...]
    out_dir, fmt, epochs = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    only = (
        [int(x) if x.isdigit() else x for x in sys.argv[4].split(",")]
        if len(sys.argv) > 4
        else None
    )
    model = get_model("mockllm/model", custom_outputs=mock_answer)
    eval(
        fin_qa,  # the task function, so inspect records task_args
        task_args={"split": "dev"},
        model=model,
        log_dir=str(out_dir),
        log_format=fmt,
        epochs=epochs,
        sample_id=only,
        max_samples=1,  # one at a time so the per-question answer sequence is deterministic
        fail_on_error=False,  # keep the errored sample in the log
        retry_on_error=0,
        display="none",
        temperature=0.0,
        max_tokens=64,
        seed=7,
    )
