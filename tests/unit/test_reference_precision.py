"""The reference's precision, as FinanceBench's people honour it: trailing zeros after the
point are formatting ("$4.60" states tenths), and a reference written to four digits is not met
by an answer written as finely that differs beyond rounding of intermediate steps."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from fintrade_tui.scoring.answer_checks import check_match


def _q(text: str, reference: str) -> SimpleNamespace:
    return SimpleNamespace(id="q", source="byo", text=text, reference_answer=reference, extra={})


CAPEX = "What is the FY2021 capital expenditure amount (in USD billions) for PepsiCo?"
DPO = "What is Amazon's FY2017 days payable outstanding (DPO)?"


@pytest.mark.parametrize(
    ("question", "reference", "answer", "verdict"),
    [
        (CAPEX, "$4.60", "Capital spending was $4.625 billion.", "equal"),  # 4.6 at tenths
        (CAPEX, "$0.40", "Capital spending was $389 million.", "equal"),  # 0.389 -> 0.4
        (CAPEX, "$4.60", "Capital spending was $4.8 billion.", "not_equal"),
        (DPO, "93.86", "DPO is 93.55 days.", "not_equal"),  # another calculation
        (DPO, "93.86", "DPO is 93.87 days.", "equal"),  # the last digit's rounding
        (DPO, "93.86", "DPO is about 94 days.", "equal"),  # the answer's own precision
    ],
)
def test_the_references_precision(question: str, reference: str, answer: str,
                                  verdict: str) -> None:  # fmt: skip
    m = check_match(_q(question, reference), answer)
    assert m.verdict == verdict, m.reason
