"""The verdict by what each side is (scoring/answer_kinds.py, scoring/readings.py,
scoring/open_reference.py, answer_checks.check_match): refusals first and never equal,
unfinished and conflicting answers, the question's own units, the figure that answers the
question, yes/no with the figure backing it, lists, text spans, open-ended references, and the
readings a person allows. Expected verdicts are written by hand from the texts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from fintrade_tui.scoring.answer_checks import check_match
from fintrade_tui.scoring.answer_kinds import (
    FIGURE,
    LIST,
    NO_FIGURE,
    OPEN,
    YES_NO,
    conflicting,
    reference_kind,
    refusal,
    unfinished,
)


def q(text: str, reference: str, source: str = "jsonl", **extra: object) -> SimpleNamespace:
    return SimpleNamespace(source=source, text=text, reference_answer=reference, extra=extra)


# --- refusals --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "answer",
    [
        "I cannot determine the net income from the information given. 0",
        "The context does not provide the figures needed; the answer cannot be determined.",
        "Insufficient information to calculate the ratio.",
        "N/A",
        "",
    ],
)
def test_a_refusal_is_recognised_first_and_never_equal(answer: str) -> None:
    assert refusal(answer) is not None
    m = check_match(q("What was net income?", "0"), answer)
    assert m.verdict == "refused" and "never equal" in m.reason


@pytest.mark.parametrize(
    "answer",
    [
        "The table does not state 2019 revenue directly, but adding the segments gives $5.2 "
        "billion. Therefore, the answer is $5.2 billion.",
        "The Company does not disclose the value of unsatisfied obligations for contracts of "
        "one year or less.",  # the filing's words, quoted: no refusal by the answerer
        "Revenue was $5.2 billion.",
    ],
)
def test_declining_a_part_then_answering_is_no_refusal(answer: str) -> None:
    assert refusal(answer) is None


def test_an_answer_cut_mid_sentence_with_no_final_answer_is_unfinished() -> None:
    cut = "Let me compute. " * 30 + "So the answer is 0.4, but maybe they want it rounded, so"
    assert unfinished(cut) is not None
    m = check_match(q("What share?", "0.4"), cut)
    assert m.verdict == "unfinished"
    assert unfinished(cut + "\n\nAnswer: 0.4") is None  # a final answer line was given
    assert unfinished("gross profit plus amortization") is None  # a short span answer


def test_two_final_answers_conflict() -> None:
    assert conflicting("Answer: 13.73\nAnswer: 18.85") == "13.73 and 18.85"
    assert conflicting("Answer: 27885 35066") == "27885 35066"
    assert conflicting("Answer: $5.2 million (5,200,000)") is None  # one value, twice
    m = check_match(q("What was the variance?", "18.85"), "Answer: 13.73\nAnswer: 18.85")
    assert m.verdict == "not_equal" and "two final answers" in m.reason


# --- reference kinds -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reference", "kind"),
    [
        ("12645", FIGURE),
        ("$12.1 billion", FIGURE),
        ("Yes. The quick ratio is 1.57.", YES_NO),
        ("$6.4 million; $9.0 million", LIST),
        ("cost of sales and operating expenses", NO_FIGURE),
        ("As of December 31, 2019 the Company had no accrued interest", NO_FIGURE),
        (
            "### Analysis\nApple's ROE of 157% in Q3 2024 exceeds Microsoft's 35% while its P/E "
            "of 38.2x sits above 42x for peers; with debt/equity at 1.87 and margins near 46%, "
            "the stock looks fully valued relative to 12% earnings growth and a 0.5% dividend "
            "yield, so the conclusion is that momentum, not fundamentals, drives the price.",
            OPEN,
        ),
    ],
)
def test_the_reference_kind_is_read_first(reference: str, kind: str) -> None:
    assert reference_kind(reference) == kind


def test_an_open_ended_reference_gets_a_claim_level_line_not_a_verdict() -> None:
    ref = (
        "NVDA's ROE was 115% and its P/E stood at 42x in the quarter, with revenue up 56% to "
        "$46.7 billion; the momentum reading (RSI 62) and a 20-day MA of $178 suggest the rally "
        "was driven by fundamentals rather than sentiment, so the conclusion is a sustained trend "
        "supported by earnings, with valuation the main risk to watch going forward."
    )
    answer = "Step 1: ROE is 115%. Step 2: the P/E is 24.5. Step 3: revenue grew 56%. Step 4: buy."
    m = check_match(q("Is NVDA's rally sustainable?", ref), answer)
    assert m.verdict == "open"
    assert "states 2" in m.reason and "115%" in m.reason and "56%" in m.reason
    assert "contradicts 1 (24.5 vs 42x)" in m.reason and "the judge or a person decides" in m.reason
    assert "not equal" not in m.reason


def test_yes_no_rests_on_the_figure_backing_it() -> None:
    ref = "Yes, the quick ratio is 1.57, above 1."
    ok = check_match(q("Is liquidity healthy?", ref), "Yes — its quick ratio of 1.57 is above 1.")
    assert ok.verdict == "equal" and "states the reference's 1.57" in ok.reason
    bad = check_match(q("Is liquidity healthy?", ref), "Yes, because the quick ratio is 0.95.")
    assert bad.verdict == "not_equal" and "0.95" in bad.reason
    concl = check_match(q("Is it leveraged?", "yes"), "Debt/equity is 1.54 vs 0.29, so no.")
    assert (concl.verdict, concl.reason) == (
        "not_equal",
        "answer says no, reference yes: not equal",
    )


def test_a_list_reference_needs_every_item() -> None:
    both = check_match(q("Revenue?", "$66.1; $62.9", scale="million"),
                       "['$66.1 million', '$62.9 million']")  # fmt: skip
    assert both.verdict == "equal"
    one = check_match(q("Revenue?", "$66.1; $62.9", scale="million"), "$66.1 million")
    assert one.verdict == "not_equal" and "missing $62.9" in one.reason


def test_a_text_span_is_stated_or_deferred() -> None:
    ref = "cost of sales and in operating expenses"
    said = "They are included in cost of sales and operating expenses. Answer: ['cost of sales', "
    said += "'operating expenses']"
    assert check_match(q("Where are they recorded?", ref), said).verdict == "equal"
    other = check_match(q("Where are they recorded?", ref), "In other income.")
    assert other.verdict == "deferred" and "no figure" in other.reason


# --- single figures: units, the answering figure, readings ------------------------------------
def test_the_questions_own_units_apply() -> None:
    question = "What is the FY2018 net PP&E (in USD millions)?"
    for answer in ("$12,645 million", "12,645", "$12.6 billion"):
        m = check_match(q(question, "12645"), f"Net PP&E was {answer}.")
        assert m.verdict == "equal", (answer, m.reason)
        assert "factor" not in m.reason


def test_the_figure_about_the_asked_period_answers() -> None:
    text = "Revenue grew from $10.2B in 2022 to $12.1B in 2023, an increase of 18.6%."
    m = check_match(q("What was revenue in 2022?", "$10.2 billion"), text)
    assert m.verdict == "equal" and m.answer_figure.text == "$10.2B"


def test_a_year_is_right_or_wrong() -> None:
    m = check_match(q("In which year was it largest?", "2018"), "2017")
    assert m.verdict == "not_equal"
    assert (
        check_match(
            q("When does the lease end?", "2041.0"), "2031 + 10 = 2041. Answer: 2041"
        ).verdict
        == "equal"
    )


@pytest.mark.parametrize(
    ("question", "reference", "answer", "reading"),
    [
        ("What percentage of revenue?", "0.14136", "14.1", "read as a percentage"),
        ("What was the change in value?", "-20.04",
         "a decrease of 20.04%, so -0.2004. Answer: -0.2004", "percentage points"),
        ("What is the swap spread in basis points?", "37", "0.37%", "basis points"),
        ("What is the value of the intangibles?", "458.611", "$458,055,556", "another scale"),
        ("What was the change?", "-14", "a decrease of $14 million, so 14. Answer: 14",
         "words carry the sign"),
        ("What is the difference in equity (in millions)?", "227", "-227 million", "a difference"),
        ("What share was it?", "0.7", "0.69", "reference's precision"),
        ("What was the margin?", "0.134", "13%", "answer's precision"),
    ],
)  # fmt: skip
def test_readings_a_person_allows(question: str, reference: str, answer: str, reading: str) -> None:
    m = check_match(q(question, reference), answer)
    assert m.verdict == "equal" and reading in m.reason, m.reason


@pytest.mark.parametrize(
    ("question", "reference", "answer"),
    [
        ("What was the percentage change?", "-4.59", "4.59%"),  # a direction, and no words
        ("What was the change in leases?", "1", "-1 million"),
        ("What is the ratio?", "0.56", "56"),  # no percentage asked, none said
        ("What was revenue?", "364400", "362400"),  # 0.55% off: no rounding explains it
        ("What was net income?", "6.33", "$6 million"),  # one significant digit
    ],
)
def test_readings_a_person_does_not_allow(question: str, reference: str, answer: str) -> None:
    assert check_match(q(question, reference), answer).verdict == "not_equal"


# --- the extraction path: a model copies the conclusion, the rules decide ---------------------
@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ('{"kind": "figure", "final_answer": "$12,645 million"}', "equal"),
        ('{"kind": "figure", "final_answer": "$12,000 million"}', "not_equal"),
        ('{"kind": "refused", "final_answer": "cannot be determined"}', "refused"),
        ('{"kind": "none", "final_answer": ""}', "no_number"),
        ("not JSON at all", "no_number"),
    ],
)
def test_the_extraction_path_reads_with_a_model_and_decides_by_the_rules(
    reply: str, verdict: str
) -> None:
    import asyncio

    from fintrade_tui.config import Config
    from fintrade_tui.judging.extraction import extract, extracted_match
    from fintrade_tui.models.resolve import resolve

    cfg = Config.model_validate({
        "models": {"reader": {"model": "openai/gpt-4o-mini", "extra": {"mock_response": reply}}},
        "judging": {"retries": 0}, "runs": {"retries": 0, "backoff": 0.01},
    })  # fmt: skip
    question = q("What is the FY2018 net PP&E (in USD millions)?", "12645")
    got = asyncio.run(extract(cfg, resolve(cfg, "reader"), question.text, "… so $12,645 million."))
    m = extracted_match(question, got)
    assert m.verdict == verdict, m.reason
    assert "the model read the conclusion as" in m.reason


def test_the_rules_read_the_whole_answer_before_the_extracted_conclusion() -> None:
    from fintrade_tui.judging.extraction import Extracted, extracted_match

    question = q("What share?", "0.4")
    cut = "Let me compute. " * 30 + "So the answer is 0.4, but maybe they want it rounded, so"
    read = Extracted("figure", "0.4", 1.0)
    assert extracted_match(question, read).verdict == "equal"  # the conclusion alone
    assert extracted_match(question, read, None, cut).verdict == "unfinished"  # the whole answer
