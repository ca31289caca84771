"""A long reference answer reaches a local judge as its conclusion; a short one whole."""

from __future__ import annotations

from fintrade_tui.judging.conclusion import conclusion
from fintrade_tui.workspace.evidence import approx_tokens

WORKING = "\n\n".join(
    f"Step {i}: the ratio was {i}.5% in the quarter, as filed." for i in range(80)
)
FINAL = "### Final Answer\nApple is profitable: ROE 35.36%, ROA 7.11%."


def test_a_short_reference_is_whole_and_no_budget_means_whole() -> None:
    assert conclusion(FINAL, 500) == FINAL
    assert conclusion(WORKING + "\n\n" + FINAL, None) == WORKING + "\n\n" + FINAL


def test_a_long_reference_keeps_its_final_section_and_says_what_was_left_out() -> None:
    text = WORKING + "\n\n" + FINAL
    out = conclusion(text, 100)
    note, body = out.split("\n", 1)
    assert body == FINAL
    left = len(WORKING.split())  # every word before the final heading
    assert note == f"(the reference's conclusion; {left} earlier words left out)"


def test_without_a_closing_heading_the_last_paragraphs_fit_the_budget() -> None:
    out = conclusion(WORKING, 60)
    body = out.split("\n", 1)[1]
    assert approx_tokens(body) <= 60 and body.endswith(
        "Step 79: the ratio was 79.5% in the quarter, as filed."
    )
    assert "Step 70:" not in body  # older paragraphs did not fit


def test_a_final_section_longer_than_the_budget_is_cut_to_its_end() -> None:
    text = WORKING + "\n\n### Conclusion\n" + " ".join(["growth"] * 400) + " ends here."
    body = conclusion(text, 50).split("\n", 1)[1]
    assert approx_tokens(body) <= 50 and body.endswith("ends here.")
