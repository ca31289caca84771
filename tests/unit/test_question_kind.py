"""Question kinds and the prompts that fit them: the kind rule on a table of questions, and
the must-show: a document-QA question's prompt names no trading indicator at any TELeR level,
a trading question's names RSI, MACD and moving averages at every level. Pure unit tests: no
store (the seed check only reads the sample bundle's question file)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
import yaml

from fintrade_tui.questions.importers import read_questions
from fintrade_tui.questions.kind import (
    CATEGORY_KIND,
    DOCUMENT_QA,
    FUNDAMENTALS,
    HYBRID,
    KINDS,
    TRADING,
    classify,
    question_kind,
)
from fintrade_tui.runs.prompts import (
    LEVELS,
    TEMPLATE_FILE,
    build_prompt,
    load_templates,
    template_source,
)
from fintrade_tui.workspace.evidence import Evidence, EvidenceItem
from fintrade_tui.workspace.questions import Question
from tests.conftest import BUNDLE, needs_bundle

AS_OF = date(2024, 11, 1)
TRADING_NAMES = re.compile(r"\brsi\b|\bmacd\b|moving average", re.IGNORECASE)
FILING_SECTIONS = re.compile(
    r"risk factors|management's discussion|md&a|\bnotes?\b|section, table|financial statements",
    re.IGNORECASE,
)
CAPEX = (
    "Capital expenditures were $9.4 billion in 2024, compared with $10.9 billion in 2023, "
    "mainly for data centres, manufacturing tools and retail stores."
)


def q(text: str = "Is this a good company?", **kw) -> Question:
    fields = {"id": "q1", "source": "jsonl", "category": "other", "text": text}
    return Question(**(fields | {"as_of": AS_OF, "tickers": ["AAPL"]} | kw))


# --- the rule --------------------------------------------------------------------------------

CASES = [
    # 0. the question file can say so (a valid kind only)
    (q(golden=["roe"], extra={"question_kind": "document_qa"}), DOCUMENT_QA),
    (q(golden=["roe"], extra={"question_kind": "bogus"}), FUNDAMENTALS),
    # 1. golden indicators first, by KIND, whatever the text or set says
    (q(golden=["roe", "roa"]), FUNDAMENTALS),
    (q("Is its RSI high?", golden=["debt_equity"]), FUNDAMENTALS),
    (q(golden=["rsi_14", "macd"]), TRADING),
    (q("What was revenue?", golden=["obv"], source="secque"), TRADING),
    (q(golden=["roe", "rsi_14"]), HYBRID),
    (q(golden_raw=["ROE", "Relative Strength Index"]), HYBRID),  # not yet resolved
    (q(golden_raw=["RSI", "Not An Indicator"]), TRADING),
    (q("How did the operating margin change?", golden=["no_such_name"]), FUNDAMENTALS),
    # 2. no golden: a set that supplies filing context, or text about a filing's contents
    (q("What was revenue in 2024?", source="secque"), DOCUMENT_QA),
    (q("Is its RSI high?", extra={"context": {"context1": CAPEX}}), DOCUMENT_QA),
    (q("Compute the ROE.", source="finar"), DOCUMENT_QA),
    (q("Compute the ROE.", source="finar_generated", category="indicator"), DOCUMENT_QA),
    (q("Compute the ROE.", extra={"table": "| Revenue | 391 |"}), DOCUMENT_QA),
    (q("According to Apple's 10-K, how much was capital expenditure?"), DOCUMENT_QA),
    (q("According to Apple\u2019s annual report, what drove sales?"), DOCUMENT_QA),
    (q("What are the main risk factors Apple lists?", category="FT"), DOCUMENT_QA),
    (q("What does the MD&A say about margins?"), DOCUMENT_QA),
    (q("How did revenue by segment change?"), DOCUMENT_QA),
    (q("What does the filing say about buybacks?"), DOCUMENT_QA),
    # an empty context is no context
    (q("Is this a good company?", extra={"context": {}}), HYBRID),
    # 3. words: trading only, fundamentals only, both
    (q("Is NVDA overbought after its rally?"), TRADING),
    (q("Has the 50-day moving average crossed above the 200-day?"), TRADING),
    (q("How does momentum look after its latest filing?"), TRADING),  # not about contents
    (q("Which NASDAQ stocks had the highest trading volume?", category="F"), TRADING),
    (q("How did Apple's operating margin and debt change?"), FUNDAMENTALS),
    (q("Is Costco worth buying for dividend income?", category="T"), FUNDAMENTALS),
    (q("How did AAPL's return on equity change, and is its RSI high?"), HYBRID),
    # 4. the FinTradeBench category as a fallback
    (q(category="F"), FUNDAMENTALS),
    (q(category="T"), TRADING),
    (q(category="FT"), HYBRID),
    (q(category="ft"), HYBRID),
    # 5. no sign either way
    (q(), HYBRID),
]


@pytest.mark.parametrize(("question", "kind"), CASES, ids=lambda x: getattr(x, "text", x))
def test_kind_rule(question: Question, kind: str) -> None:
    assert question_kind(question) == kind
    assert classify(question)[0] == kind and classify(question)[1]


def test_classify_names_the_step_that_decided() -> None:
    assert classify(q(golden=["roe"]))[1] == "golden indicators"
    assert classify(q(source="secque"))[1] == "filing context supplied with the question"
    assert classify(q("What do the risk factors say?"))[1] == "asks about a filing's contents"
    assert classify(q("Is it overbought?"))[1] == "words in the question"
    assert classify(q(category="T"))[1] == "category T"
    assert classify(q())[1] == "no sign either way"


@needs_bundle
def test_every_seed_gets_its_categorys_kind() -> None:
    seeds = read_questions(BUNDLE / "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv")
    assert len(seeds) == 150
    for s in seeds:  # unresolved: golden_raw only
        assert question_kind(s) == CATEGORY_KIND[s.category], (s.id, s.golden_raw)
    # without golden indicators or category, the text never flips fundamentals and trading
    for s in seeds:
        by_text = question_kind(replace(s, golden_raw=[], category="other"))
        assert by_text in (CATEGORY_KIND[s.category], HYBRID) or s.category == "FT", s.id


# --- the must-show ---------------------------------------------------------------------------


def document_question() -> Question:
    """SECQUE-style: a question about a 10-K with the excerpt supplied, no golden indicators."""
    return Question(
        id="SECQUE-7",
        source="secque",
        category="Analyst Insight",
        text="According to the 10-K, how did Apple's capital expenditure change in fiscal 2024?",
        tickers=["AAPL"],
        as_of=AS_OF,
        extra={"context": {"context1": CAPEX}, "ticker": "AAPL", "fiscal_year": 2024},
    )


def trading_question() -> Question:
    """Golden RSI and MACD; the text names no indicator, so the prompt's names are the kind's."""
    return Question(
        id="T99",
        source="fintradebench",
        category="T",
        text="Is Apple's stock setting up for a move after its recent run?",
        tickers=["AAPL"],
        as_of=AS_OF,
        window_start=date(2024, 10, 1),
        window_end=AS_OF,
        golden_raw=["RSI", "MACD"],
        golden=["rsi_14", "macd"],
    )


def supplied() -> EvidenceItem:
    """The excerpt as the oracle condition shows it."""
    title = "context1 (supplied with the question)"
    return EvidenceItem("context:context1", "context", CAPEX, title, None, AS_OF)


def filing_chunk() -> EvidenceItem:
    title = "AAPL 10-K filed 2024-11-01, Item 7"
    return EvidenceItem("c1", "filing", CAPEX, title, "AAPL", AS_OF)


EVIDENCE = {
    "oracle": lambda: Evidence("oracle", [supplied()]),
    "no_rag": lambda: Evidence("no_rag"),
    "rag": lambda: Evidence("rag", [filing_chunk()]),
    "tool_use": lambda: Evidence("tool_use"),
}


@pytest.mark.parametrize("condition", EVIDENCE)
@pytest.mark.parametrize("level", LEVELS)
def test_document_qa_prompt_names_no_trading_indicator(level: str, condition: str) -> None:
    p = build_prompt(document_question(), EVIDENCE[condition](), level)
    assert p.kind == DOCUMENT_QA
    assert not TRADING_NAMES.search(p.text), TRADING_NAMES.search(p.text)
    assert "trading" not in p.text.lower() and "signal" not in p.text.lower()
    if condition == "oracle":
        assert CAPEX in p.text  # the supplied excerpt is there, as data
    if LEVELS.index(level) >= LEVELS.index("L3"):
        assert "the section, table or note of the filing the question concerns" in p.text


@pytest.mark.parametrize("condition", ["no_rag", "rag", "tool_use"])
@pytest.mark.parametrize("level", LEVELS)
def test_trading_prompt_names_the_signals_and_no_filing_section(level: str, condition: str) -> None:
    tq = trading_question()
    assert not TRADING_NAMES.search(tq.text)
    ev = Evidence(condition, [filing_chunk()] if condition == "rag" else [])
    p = build_prompt(tq, ev, level)
    assert p.kind == TRADING
    # L1, L2: the directive names them; L3 on: the steps too
    directive = p.messages[1]["content"].split("\n\n")[0]
    for name in ("RSI", "MACD", "moving average"):
        assert name in directive, (level, name)
        assert p.text.count(name) == (1 if level in ("L1", "L2") else 2), (level, name)
    # the evidence block is data; outside it, nothing asks for filing sections
    outside = re.sub(r"<evidence>.*?</evidence>", "", p.text, flags=re.DOTALL)
    assert not FILING_SECTIONS.search(outside), FILING_SECTIONS.search(outside)


@pytest.mark.parametrize("level", LEVELS)
def test_fundamentals_prompt_names_no_trading_indicator(level: str) -> None:
    fq = q("How profitable is Apple?", golden=["roe", "roa"], category="F")
    p = build_prompt(fq, Evidence("rag", [filing_chunk()]), level)
    assert p.kind == FUNDAMENTALS and not TRADING_NAMES.search(p.text)
    if LEVELS.index(level) >= LEVELS.index("L3"):
        assert "fundamental ratios from the" in p.text


@pytest.mark.parametrize("kind_question", [document_question, trading_question])
def test_every_kind_keeps_the_teler_shape(kind_question) -> None:
    """L1 is one sentence and the question; no duty to cite before L5; the four criteria."""
    kq = kind_question()
    l1 = build_prompt(kq, Evidence("no_rag"), "L1")
    directive, question, cue = l1.messages[1]["content"].split("\n\n")
    assert re.fullmatch(r"[^.?!]+[.?!]", directive) and question.startswith("Question: ")
    assert (
        cue
        == "Now answer, starting with the answer itself, then the figures behind it: "
        + kq.text.strip()
    )
    for level in LEVELS:
        p = build_prompt(kq, Evidence("rag", [filing_chunk()]), level)
        assert ("cite" in p.text.lower()) == (level in ("L5", "L6")), level
        if level in ("L4", "L5", "L6"):
            for c in ("Factual and numerical accuracy", "Completeness", "Relevance", "Clarity"):
                assert c in p.text, (level, c)


# --- the template ----------------------------------------------------------------------------


def test_template_has_a_section_per_kind_and_the_hash_covers_it() -> None:
    t = load_templates()
    assert set(t["kinds"]) == set(KINDS) and t["kinds"][HYBRID] == {}
    l1, l3 = template_source("L1"), template_source("L3")
    assert "steps" in l3["kinds"][TRADING] and "steps" not in l1["kinds"][TRADING]
    assert "directive" in l1["kinds"][TRADING] and set(l1["kinds"]) == set(KINDS)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["kinds"].pop(TRADING), "kinds.trading is missing"),
        (lambda d: d["kinds"][DOCUMENT_QA].update(nope="x"), "replaces unknown part 'nope'"),
    ],
)
def test_bad_kind_sections_are_refused(tmp_path: Path, edit, message: str) -> None:
    data = yaml.safe_load(TEMPLATE_FILE.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "teler.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(message)):
        load_templates(path)
