"""The recency step of retrieval (`retrieval.recency`) on hand-made candidate rows."""

from __future__ import annotations

from datetime import date

import pytest

from fintrade_tui.retrieval import recency

# AAPL's filing dates: a 10-K, three 10-Qs (the last after the as_of used below); keyed by
# ticker and by (ticker, form), as search.retrieve passes them
K24, Q1, Q2, Q3 = date(2024, 11, 1), date(2025, 1, 31), date(2025, 5, 2), date(2025, 8, 1)
FILED = {
    "AAPL": [K24, Q1, Q2, Q3],
    ("AAPL", "10-K"): [K24],
    ("AAPL", "10-Q"): [Q1, Q2, Q3],
    "MSFT": [date(2025, 4, 30)],
    ("MSFT", "10-Q"): [date(2025, 4, 30)],
}
AS_OF = date(2025, 6, 30)  # eligible: the 10-K and the first two 10-Qs
RISK = (
    "We depend on component and product manufacturing and logistical services provided by "
    "outsourcing partners, many of which are located outside of the U.S. Tariffs and other "
    "trade restrictions could materially adversely affect the company's business, results of "
    "operations and financial condition, and supply of components may be constrained."
)
OTHER = (
    "Services net sales increased during the quarter due primarily to higher net sales from "
    "advertising, the App Store and cloud services, while iPhone net sales were flat."
)


def row(acc: str, filed: date, fused: float, text: str = RISK, ticker: str = "AAPL") -> dict:
    return {
        "id": f"{acc}:x:0:0",
        "ticker": ticker,
        "form": "10-K" if acc.startswith("k") else "10-Q",
        "accession": acc,
        "filed": filed,
        "text": text,
        "scores": {"fused": fused},
    }


def ids(rows: list[dict]) -> list[str]:
    return [r["accession"] for r in rows]


def test_near_identical_passages_keep_the_newest_at_the_best_score() -> None:
    old = row("k24", date(2024, 11, 1), 0.0330)
    new = row("q2", date(2025, 5, 2), 0.0310, RISK.replace("materially", "materially and"))
    out = recency.apply([old, new], FILED, AS_OF, strength=0.0)
    assert ids(out) == ["q2"]
    assert out[0]["scores"]["recency"] == 0.0330  # the group's best score, no bonus at 0


def test_the_prior_puts_the_newer_of_two_near_equal_passages_first() -> None:
    old = row("q1", Q1, 0.0330, OTHER)
    new = row("q2", Q2, 0.0320, RISK)
    assert ids(recency.apply([old, new], FILED, AS_OF, dedup_threshold=None)) == ["q2", "q1"]
    # without the prior the order stays as fused
    assert ids(recency.apply([old, new], FILED, AS_OF, 0.0, None)) == ["q1", "q2"]


def test_a_clearly_better_older_passage_still_wins() -> None:
    old = row("q1", Q1, 0.0330, OTHER)  # in both lists near the top
    new = row("q2", Q2, 0.0164, RISK)  # first in one list only
    out = recency.apply([new, old], FILED, AS_OF)
    assert ids(out) == ["q1", "q2"]
    assert out[0]["scores"]["recency"] > out[1]["scores"]["recency"]


@pytest.mark.parametrize(
    ("by_form", "want"),
    [
        (False, {"q2": 0.1, "q1": 0.05, "k24": 0.025}),  # any form: two filings since the 10-K
        (True, {"q2": 0.1, "q1": 0.05, "k24": 0.1}),  # the 10-K is still the latest 10-K
    ],
)
def test_the_bonus_decays_with_newer_eligible_filings_and_ignores_later_ones(
    monkeypatch, by_form: bool, want: dict
) -> None:
    monkeypatch.setattr(recency, "BY_FORM", by_form)
    rows = [
        row("q2", Q2, 1.0, OTHER + " a"),
        row("q1", Q1, 1.0, RISK),
        row("k24", K24, 1.0, "Legal proceedings: the company is a party to suits."),
    ]
    out = recency.apply(rows, FILED, AS_OF, strength=0.1)
    # the 10-Q filed 2025-08-01 is after as_of: it does not make q2 any older
    assert {r["accession"]: round(r["scores"]["recency"] - 1.0, 6) for r in out} == want
    assert recency.newer_filings(FILED["AAPL"], Q2, AS_OF) == 0
    assert recency.newer_filings(FILED["AAPL"], K24, date(2025, 12, 31)) == 3


def test_nothing_is_added_and_a_duplicate_never_resurrects_a_later_copy() -> None:
    # the prefilter admitted only rows filed by as_of: the step returns a subset of them
    rows = [row("k24", date(2024, 11, 1), 0.03), row("q1", date(2025, 1, 31), 0.02, OTHER)]
    out = recency.apply(rows, FILED, AS_OF)
    assert {r["id"] for r in out} <= {r["id"] for r in rows}
    assert all(r["filed"] <= AS_OF for r in out)


def test_dedup_keeps_other_tickers_and_repeats_inside_one_filing() -> None:
    a = row("k24", date(2024, 11, 1), 0.03)
    b = row("k24", date(2024, 11, 1), 0.02)  # same filing: not a recency question
    c = row("m1", date(2025, 4, 30), 0.01, ticker="MSFT")  # same text, another company
    assert ids(recency.dedup([a, b, c])) == ["k24", "k24", "m1"]
    different = row("q1", date(2025, 1, 31), 0.01, OTHER)
    assert len(recency.dedup([a, different])) == 2


def test_rerank_scores_of_any_sign_get_a_positive_bonus() -> None:
    old = row("q1", Q1, 0.0, OTHER)
    new = row("q2", Q2, 0.0, RISK)
    old["scores"]["rerank"], new["scores"]["rerank"] = -2.0, -2.1  # cross-encoder logits
    out = recency.apply([old, new], FILED, AS_OF, strength=0.1)
    assert ids(out) == ["q2", "q1"]
    assert out[0]["scores"]["recency"] > -2.1


def test_shingle_overlap() -> None:
    a, b = recency.shingles(RISK), recency.shingles(RISK.replace("Tariffs", "Duties"))
    assert (
        recency.jaccard(a, b) >= recency.DUP_JACCARD > recency.jaccard(a, recency.shingles(OTHER))
    )
    assert recency.jaccard(frozenset(), a) == 0.0
