"""The yes or no an answer concludes, read from its words (scoring/stance.py), and what the
checks then say against a yes/no reference: a stance in both directions without the word, a
hedge that concludes nothing (left to the judge, never "incorrect"), and a yes backed by a
figure the answer gets wrong. The answers are written here after the shapes of FinanceBench's
published answers; the expected readings are a person's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from fintrade_tui.judging.rescore import label_of
from fintrade_tui.scoring.answer_checks import check_match
from fintrade_tui.scoring.stance import claim_words, is_yes_no_question, stance

CAPITAL = "Is Verizon a capital intensive business based on FY 2022 data?"
LEGAL = "Has Pepsico reported any materially important ongoing legal battles from FY2022?"
DEBT = "Has Microsoft increased its debt on balance sheet between FY2023 and the FY2022 period?"
CASH = "Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?"
GROWTH = "Are JnJ's FY2022 financials that of a high growth company?"
MARGIN = "Did the company's gross margin improve in FY2023?"


@pytest.mark.parametrize(
    ("question", "answer", "said"),
    [
        # yes, stated without the word
        (
            CAPITAL,
            "Capex was $23 billion. Therefore, it can be inferred that Verizon is capital "
            "intensive.",
            "yes",
        ),  # fmt: skip
        (
            LEGAL,
            "The 10-K lists the opioid suits. In summary, PepsiCo has reported materially "
            "important ongoing legal battles.",
            "yes",
        ),  # fmt: skip
        (
            CASH,
            "Cash was $1,874 million at FY2023 end and $1,093 million at Q2. So cash and "
            "cash equivalents decreased between the two dates.",
            "yes",
        ),  # fmt: skip
        (DEBT, "Total debt went from $49,781 million to $52,100 million over the year.", "yes"),
        # no, stated without the word
        (LEGAL, "PepsiCo has not reported any materially important ongoing legal battles.", "no"),
        (CAPITAL, "In summary, Verizon does not appear to be a capital-intensive business.", "no"),
        (DEBT, "Therefore, Microsoft's total debt decreased by $2,544 million.", "no"),
        (MARGIN, "Overall, the gross margin remained stable at 42%.", "no"),
        (MARGIN, "Therefore, the gross margin did not improve in FY2023.", "no"),
        (GROWTH, "Overall, JnJ's results are not that of a high growth business.", "no"),
        # the word itself, opening or concluding
        (CAPITAL, "Yes. Verizon's capex is heavy.", "yes"),
        (LEGAL, "Several matters are listed. So in summary, no, none of them is material.", "no"),
    ],
)
def test_a_stance_is_read_from_what_the_answer_concludes(question: str, answer: str,
                                                          said: str) -> None:  # fmt: skip
    got = stance(question, answer)
    assert got is not None and got.said == said, got


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # hedges that conclude nothing
        (CAPITAL, "Capex is large. Overall, it is unclear whether Verizon is capital intensive."),
        (LEGAL, "Therefore, PepsiCo may or may not have material legal battles."),
        # the claim never restated: an answer about something else
        (LEGAL, "Net revenue grew 9% on pricing. Cash flow from operations was $10.8 billion."),
        # the question handed back, not answered
        (
            CAPITAL,
            "To determine whether Verizon is capital intensive, one would compare capex "
            "with revenue.",
        ),  # fmt: skip
    ],
)
def test_no_stance_is_read_where_the_answer_concludes_nothing(question: str, answer: str) -> None:
    assert stance(question, answer) is None


def _q(text: str, reference: str) -> SimpleNamespace:
    return SimpleNamespace(id="q", source="byo", text=text, reference_answer=reference, extra={})


def test_against_a_yes_no_reference_no_stance_is_deferred_never_incorrect() -> None:
    q = _q(LEGAL, "No, Pepsico is not involved in material legal battles.")
    m = check_match(q, "Therefore, PepsiCo may or may not have material legal battles.")
    assert (m.verdict, label_of(m.verdict)) == ("deferred", None)
    assert "judge or a person" in m.reason
    m = check_match(q, "PepsiCo has not reported any materially important ongoing legal battles.")
    assert (m.verdict, label_of(m.verdict)) == ("equal", "correct")
    assert "in words" in m.reason


def test_a_yes_backed_by_a_wrong_figure_is_not_equal() -> None:
    q = _q("Did AMD report customer concentration in FY22?",
           "Yes, one customer accounted for 16% of consolidated net revenue")  # fmt: skip
    wrong = "AMD reported customer concentration: one customer accounted for 25% of revenue."
    right = "AMD reported customer concentration: one customer accounted for 16% of revenue."
    assert check_match(q, wrong).verdict == "not_equal"
    assert "the figure backing it is 16%" in check_match(q, wrong).reason
    assert check_match(q, right).verdict == "equal"


def test_a_stance_read_beside_a_declining_phrase_is_left_to_the_judge() -> None:
    q = _q(DEBT, "No. Microsoft decreased its debt by $2.5bn in FY 2023 vs FY 2022.")
    answer = ("I don't have access to real-time financial data. However, based on the text, "
              "the balance sheet shows a decrease in long-term debt from $78.4 billion to "
              "$74.7 billion over the year.")  # fmt: skip
    assert check_match(q, answer).verdict == "deferred"


def test_the_claim_leaves_out_names_periods_and_the_asked_direction() -> None:
    assert claim_words(LEGAL) == ["repor", "mater", "impor", "ongoi", "legal", "battl"]
    assert claim_words(CAPITAL) == ["capit", "inten", "busin"]
    assert "incre" not in claim_words(DEBT) and "debt" in claim_words(DEBT)
    assert is_yes_no_question(LEGAL) and not is_yes_no_question("What was FY2022 revenue?")


NONE_Q = "Which debt securities are registered to trade on a national securities exchange?"


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        (
            "Therefore, Ulta Beauty does not have any debt securities registered to trade on a "
            "national securities exchange.",
            "equal",
        ),  # fmt: skip
        (
            "The 1.500% Notes due 2026 are debt securities registered to trade on a national "
            "securities exchange (NYSE).",
            "not_equal",
        ),  # fmt: skip
        ("Ulta Beauty sells cosmetics in 1,355 stores.", "deferred"),
    ],
)
def test_a_none_reference_is_met_by_an_answer_saying_there_is_none(
    answer: str, verdict: str
) -> None:
    assert check_match(_q(NONE_Q, "There are none"), answer).verdict == verdict


def test_a_text_reference_is_read_in_a_long_answers_closing_conclusion() -> None:
    q = _q("From FY21 to FY22, in which AMD segment did sales increase the most?", "Data Center")
    working = " ".join(f"Segment {i} grew by {i} percent in the year." for i in range(1, 12))
    right = working + " Therefore, the Data Center segment had the largest increase."
    wrong = working + " Therefore, the Gaming segment had the largest increase."
    assert check_match(q, right).verdict == "equal"
    assert check_match(q, wrong).verdict == "deferred"  # a name read, no contradiction ruled
