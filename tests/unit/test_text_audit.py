"""Evidence audit: an answer's figures against the supplied evidence and the reference answer."""

from __future__ import annotations

import pytest

from fintrade_tui.audits.evidence import audit_text, claim_unit, extract_figures, merge_audits
from fintrade_tui.audits.numeric import summary_line

TABLE = "Gross margin (in millions)\n              2024      2023\nGross margin  1,577     1,420\n"


def figures(text: str, evidence: bool = False) -> list[tuple[str, float, str]]:
    return [(f.text, f.value, f.kind) for f in extract_figures(text, evidence)]


def verdicts(result: dict) -> list[tuple[str, str, str | None]]:
    return [(c["text"], c["verdict"], c["compared_with"]) for c in result["claims"]]


# --- the must-show cases --------------------------------------------------------------
def test_billions_are_supported_by_a_table_in_millions() -> None:
    result = audit_text("Gross margin was $1.58 billion.", [TABLE], None, 0.02)
    (c,) = result["claims"]
    assert (c["text"], c["verdict"], c["compared_with"]) == (
        "$1.58 billion",
        "SUPPORTED",
        "evidence 1: '1,577'",
    )
    assert c["value"] == 1.58e9 and c["kind"] == "currency" and c["scale"] == "billion"
    assert c["matched"] == "1,577" and c["matched_value"] == 1.577e9
    assert c["rel_error"] == pytest.approx(0.003e9 / 1.577e9)
    assert "(in millions)" in c["why"]
    assert result["summary"] == {"SUPPORTED": 1, "CONTRADICTED": 0, "NOT_FOUND": 0, "checked": 1}
    assert result["against"] == ["evidence"]


def test_equal_at_the_precision_the_answer_states() -> None:
    # with no tolerance, 1.577 billion still rounds to the 1.58 (and 1.6) the answer writes
    for answer in ("$1.58 billion", "$1.6 billion", "$1,577 million"):
        (c,) = audit_text(f"Gross margin was {answer}.", [TABLE], None, 0.0)["claims"]
        assert c["verdict"] == "SUPPORTED", answer
    (c,) = audit_text("Gross margin was $1.60 billion.", [TABLE], None, 0.0)["claims"]
    assert c["verdict"] == "NOT_FOUND"
    (c,) = audit_text("Gross margin was $1.58 billion.", [TABLE], None, 0.0)["claims"]
    assert "precision" in c["why"]


@pytest.mark.parametrize("reference", ["0.25", "25%", "The gross margin was 25%."])
def test_a_percent_is_contradicted_by_the_reference(reference: str) -> None:
    result = audit_text("The gross margin is 30.8%.", [], reference, 0.02)
    (c,) = result["claims"]
    written = "0.25" if reference == "0.25" else "25%"
    assert (c["text"], c["value"], c["kind"]) == ("30.8%", 0.308, "percent")
    assert (c["verdict"], c["compared_with"]) == ("CONTRADICTED", f"reference: '{written}'")
    assert c["matched_value"] == 0.25 and c["rel_error"] == pytest.approx(0.058 / 0.25)
    assert result["summary"]["CONTRADICTED"] == 1 and result["against"] == ["reference"]


def test_a_reference_that_agrees_does_not_contradict() -> None:
    for reference in ("0.308", "30.8", "31%"):
        (c,) = audit_text("The gross margin is 30.8%.", [], reference, 0.02)["claims"]
        assert (c["verdict"], c["compared_with"]) == ("NOT_FOUND", f"reference: '{reference}'")
        assert "too" in c["why"]


def test_page_numbers_and_formula_constants_are_not_claims() -> None:
    text = "As shown on page 38, margin = gross profit / net sales × 100 = 30.8%."
    assert figures(text) == [("30.8%", 0.308, "percent")]
    for formula in ("(a / b) *100", "(a / b) x 100", "(a + b) / 2", "see p. 12", "pp. 12-14"):
        assert figures(formula) == [], formula
    (c,) = audit_text(text, [], "0.25", 0.02)["claims"]
    assert c["text"] == "30.8%"


def test_a_divisor_that_is_not_a_constant_is_a_claim() -> None:
    assert figures("1,577 / 5,120 = 30.8%") == [
        ("1,577", 1577.0, "plain"),
        ("5,120", 5120.0, "plain"),
        ("30.8%", 0.308, "percent"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "In 2024 and 1999",
        "FY2024",
        "FY 24",
        "Q3 2024",
        "fiscal 2023",
        "2023-24",
        "December 31, 2024",
        "2024-12-31",
        "Item 7",
        "Item 1A",
        "Note 4",
        "Notes 4 and 5",
        "Section 2.1",
        "Exhibit 10.1",
        "revenue[1]",
        "revenue¹",
        "revenue (a)",
        "revenue (2)",
        "1. Revenue",
        "the 3rd quarter",
        "the 10-K",
        "the S&P 500",
        "the 20-day average",
        "7203.T",
    ],
)
def test_not_claims(text: str) -> None:
    assert figures(text) == []


def test_only_the_figure_survives_among_labels() -> None:
    text = "In Item 7 of the FY2024 10-K (page 38)[1], Note 4 says revenue rose 12% in Q3 2024."
    assert figures(text) == [("12%", 0.12, "percent")]


def test_a_year_with_a_unit_or_separator_is_a_figure() -> None:
    assert figures("$2,024 and 2,024 stores") == [
        ("$2,024", 2024.0, "currency"),
        ("2,024", 2024.0, "count"),
    ]


def test_units_scales_and_decimals() -> None:
    got = {
        f.text: (f.value, f.kind, claim_unit(f), f.scale_label, f.decimals)
        for f in extract_figures(
            "$1,577 million; 1.58 billion; $3.2bn; 45 thousand; 30.8%; 0.25; 25 bps; 12.5x; "
            "1,234,567 shares; €300 million"
        )
    }
    assert got == {
        "$1,577 million": (1.577e9, "currency", "$", "million", 0),
        "1.58 billion": (1.58e9, "plain", "", "billion", 2),
        "$3.2bn": (3.2e9, "currency", "$", "billion", 1),
        "45 thousand": (45e3, "plain", "", "thousand", 0),
        "30.8%": (0.308, "percent", "%", None, 1),
        "0.25": (0.25, "plain", "", None, 2),
        "25 bps": (0.0025, "percent", "bp", None, 0),
        "12.5x": (12.5, "multiple", "x", None, 1),
        "1,234,567": (1234567.0, "count", "shares", None, 0),
        "€300 million": (3e8, "currency", "€", "million", 0),
    }


def test_a_range_shares_its_unit() -> None:
    assert figures("guidance of 10-12%") == [("10", 0.10, "percent"), ("12%", 0.12, "percent")]
    assert [f.value for f in extract_figures("$1.5-2.0 billion")] == [1.5e9, 2.0e9]


# --- evidence tables ------------------------------------------------------------------------------
def test_a_negative_in_parentheses_in_a_table() -> None:
    (f,) = extract_figures("(in thousands)\nNet loss   (1,234)", evidence=True)
    assert (f.text, f.value, f.raw, f.scale_label) == ("(1,234)", -1.234e6, -1234.0, "in thousands")
    (c,) = audit_text("A net loss of $1.2 million.", ["(in thousands)\nNet loss (1,234)"], None)[
        "claims"
    ]
    assert (c["verdict"], c["compared_with"]) == ("SUPPORTED", "evidence 1: '(1,234)'")
    # in prose a parenthesis is an aside, not a sign
    assert figures("the margin (30.8%) rose") == [("30.8%", 0.308, "percent")]


def test_the_table_scale_applies_to_its_bare_numbers_only() -> None:
    doc = "($ in millions, except per share data)\nNet sales $ 5,120\nEPS 2.45\nMargin 30.8%"
    got = [(f.text, f.value, f.raw) for f in extract_figures(doc, evidence=True)]
    assert got == [("$ 5,120", 5.12e9, 5120.0), ("2.45", 2.45e6, 2.45), ("30.8%", 0.308, None)]
    result = audit_text("Net sales of $5.12 billion and EPS of $2.45.", [doc], None)
    assert [c["verdict"] for c in result["claims"]] == ["SUPPORTED", "SUPPORTED"]
    # an answer's own "(in millions)" does not scale it
    assert figures("(in millions) 1,577") == [("1,577", 1577.0, "plain")]


def test_thousands_separators_match() -> None:
    result = audit_text("Revenue was 1,234,567 dollars.", ["Revenue: $1,234,567."], None, 0.0)
    assert verdicts(result) == [("1,234,567 dollars", "SUPPORTED", "evidence 1: '$1,234,567'")]


# --- verdicts ------------------------------------------------------------------------------------
def test_a_figure_neither_source_states_is_not_found() -> None:
    result = audit_text("Operating cash flow was $2.3 billion.", [TABLE], "0.25", 0.02)
    (c,) = result["claims"]
    assert (c["verdict"], c["compared_with"], c["matched"]) == ("NOT_FOUND", None, None)
    assert result["summary"] == {
        "SUPPORTED": 0,
        "CONTRADICTED": 0,
        "NOT_FOUND": 1,
        "checked": 0,
    } | {
        "reference_figures": 1,  # "0.25"
        "reference_stated": 0,
        "reference_agreed": 0,
    }
    assert result["against"] == ["evidence", "reference"]


def test_the_evidence_wins_over_a_disagreeing_reference() -> None:
    evidence = ["Our effective tax rate was 25.0% in 2024."]
    result = audit_text("The effective tax rate was 25%.", evidence, "The tax rate was 30%.", 0.02)
    (c,) = result["claims"]
    assert (c["verdict"], c["compared_with"]) == ("SUPPORTED", "evidence 1: '25.0%'")
    assert "the reference states '30%'" in c["why"]


def test_a_bare_reference_contradicts_one_quantity_only() -> None:
    answer = "The gross margin is 30.8%, so 30.8% it is, and the current ratio is 1.2."
    result = audit_text(answer, [], "0.25", 0.02)
    assert [c["verdict"] for c in result["claims"]] == ["CONTRADICTED", "CONTRADICTED", "NOT_FOUND"]


def test_a_reference_figure_is_chosen_by_its_words() -> None:
    reference = "Revenue grew 12.0% while the operating margin reached 25%."
    result = audit_text("Revenue grew 12% and the operating margin was 31%.", [], reference)
    assert verdicts(result) == [
        ("12%", "NOT_FOUND", "reference: '12.0%'"),
        ("31%", "CONTRADICTED", "reference: '25%'"),
    ]


def test_a_neighbouring_percent_is_not_support() -> None:
    # 68.9% is 1.3% from 69.8%, inside the tolerance, but not what the evidence states
    evidence = ["Gross margin percentage increased to 69.8%."]
    result = audit_text("It went from 68.9% to 69.8%.", evidence, None, 0.02)
    assert [c["verdict"] for c in result["claims"]] == ["NOT_FOUND", "SUPPORTED"]
    # a finer answer that rounds to the evidence is support
    (c,) = audit_text("It reached 69.83%.", evidence, None, 0.0)["claims"]
    assert (c["verdict"], c["compared_with"]) == ("SUPPORTED", "evidence 1: '69.8%'")


def test_an_excerpt_that_lost_its_scale() -> None:
    # SECQUE-style: the table row without its "(in millions)" header, as markdown and as HTML
    for excerpt in ("## Item 7\n\n| Net sales | 391,035 |", "<td>391,035</td>"):
        (c,) = audit_text("Net sales were $391.0 billion.", [excerpt], None, 0.02)["claims"]
        assert (c["verdict"], c["matched_value"]) == ("SUPPORTED", 391.035e9)
        assert "no scale stated; read in millions" in c["why"]
    # but a guessed scale never contradicts
    (c,) = audit_text("Net sales were $391.0 billion.", [], "1,200", 0.02)["claims"]
    assert c["verdict"] == "NOT_FOUND"


def test_kinds_do_not_mix() -> None:
    # a dollar figure is not supported by a percent, nor a share count by dollars
    result = audit_text("Margin $25 and 5 million shares.", ["25% and $5 million"], None, 0.02)
    assert [c["verdict"] for c in result["claims"]] == ["NOT_FOUND", "NOT_FOUND"]


def test_nothing_to_compare_with() -> None:
    result = audit_text("Revenue was $5 million.", [], None)
    assert result["against"] == [] and result["claims"][0]["why"] == "no evidence supplied"


def test_merged_with_the_store_audit() -> None:
    store = {
        "claims": [
            {
                "indicator": "roe",
                "value": 0.9,
                "unit": "",
                "store_value": 0.356,
                "verdict": "CONTRADICTED",
            }
        ],
        "summary": {"SUPPORTED": 0, "CONTRADICTED": 1, "NOT_FOUND": 0, "checked": 1},
        "as_of": "2024-11-01",
    }
    text = audit_text("The gross margin is 30.8%.", [], "0.25", 0.02)
    merged = merge_audits(store, text)
    assert merged["summary"] == {
        "SUPPORTED": 0,
        "CONTRADICTED": 2,
        "NOT_FOUND": 0,
        "checked": 2,
    } | {
        "reference_figures": 1,
        "reference_stated": 0,
        "reference_agreed": 0,
    }
    assert merged["against"] == ["store", "reference"] and merged["as_of"] == "2024-11-01"
    assert [c["room"] for c in merged["claims"]] == ["store", "text"]
    assert merged["claims"][1]["source"] == "reference: '0.25'"
    assert merged["claims"][1]["store_value"] is None
    assert merged["rooms"]["text"] == text["summary"]
    assert merge_audits(None, None) is None


def test_coverage_counts_the_reference_figures_the_answer_states() -> None:
    """Hand-counted: the reference states 35.4% ROE, 7.1% ROA and a $3.2 trillion market cap
    (three distinct figures); the cut-off answer states only the first."""
    ref = "ROE was 35.4% and ROA 7.1%, with a market value of $3.2 trillion."
    whole = audit_text("ROE 35.4%, ROA 7.1%, market value $3.2 trillion.", [], ref)["summary"]
    cut = audit_text("ROE was 35.4% and", [], ref)["summary"]
    assert (whole["reference_figures"], whole["reference_stated"]) == (3, 3)
    assert (cut["reference_figures"], cut["reference_stated"]) == (3, 1)
    merged = merge_audits(None, audit_text("ROE was 35.4% and", [], ref))
    assert summary_line(merged).endswith("states 1 of the reference's 3 figures")
    # figures no evidence states but the reference states alike are said to agree with it
    assert (whole["NOT_FOUND"], whole["reference_agreed"]) == (3, 3)
    line = summary_line(merge_audits(None, audit_text("ROE 35.4%, ROA 7.1%.", [], ref)))
    assert line.startswith("2 figures: 0 supported, 0 contradicted, 2 not found (2 as the ref")
    assert "reference_figures" not in audit_text("ROE 35.4%", ["ROE 35.4%"], None)["summary"]


def test_a_figure_both_audits_read_is_one_claim() -> None:
    answer = "ROE was 90%."
    text = audit_text(answer, [], "ROE was 25%.", 0.02)
    (tc,) = text["claims"]
    store_claim = {"text": answer, "span": tc["span"], "value": 90.0, "unit": "%",
                   "indicator": "roe", "ticker": "AAPL", "store_value": None,
                   "verdict": "NOT_FOUND", "why": "the store has no ROE"}  # fmt: skip
    summary = {"SUPPORTED": 0, "CONTRADICTED": 0, "NOT_FOUND": 1, "checked": 0}
    merged = merge_audits({"claims": [store_claim], "summary": summary, "as_of": None}, text)
    (c,) = merged["claims"]  # not listed twice
    assert (c["verdict"], c["room"], c["indicator"]) == ("CONTRADICTED", "text", "roe")
    assert merged["summary"]["CONTRADICTED"] == 1 and merged["summary"]["NOT_FOUND"] == 0
    checked = dict(store_claim, verdict="SUPPORTED", why="ROE 0.9 agrees")
    merged = merge_audits({"claims": [checked], "summary": summary, "as_of": None}, text)
    assert [c["room"] for c in merged["claims"]] == ["store"]


def test_a_reference_figure_of_another_period_is_not_held_against_the_answer() -> None:
    (c,) = audit_text("The P/E in 2025 was 24.5.", [], "The P/E in 2023 was 42.", 0.02)["claims"]
    assert c["verdict"] == "NOT_FOUND"
    (c,) = audit_text("The P/E in 2025 was 24.5.", [], "The P/E in 2025 was 42.", 0.02)["claims"]
    assert c["verdict"] == "CONTRADICTED"
