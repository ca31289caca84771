"""Statistics room: every number equals scipy / scikit-learn / statsmodels on fixed data,
hand-worked accuracy and Δ, degenerate data gives None / "—", and the Markdown table."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.multitest import multipletests

from fintrade_tui.stats.agreement import agreement, agreement_table
from fintrade_tui.stats.paired import bootstrap_ci, holm, paired_tests, stars
from fintrade_tui.stats.tables import accuracy_table, flatten, to_markdown

TOL = 1e-9
A = [3, 2, 4, 5, 1, 3, 4, 2, 3, 5, 4, 3, 2, 1, 4]
B = [4, 3, 4, 5, 2, 5, 5, 3, 3, 4, 5, 4, 4, 2, 5]
X = [0.12, 0.55, 0.31, 0.94, 0.47, 0.23, 0.78, 0.66, 0.05, 0.89]
Y = [0.20, 0.41, 0.52, 1.20, 0.61, 0.19, 0.95, 0.90, 0.33, 1.02]
HUMAN = [1, 2, 3, 4, 5, 3, 4, 2, 5, 3, 4, 1, 2, 3, 4]
JUDGE = [2, 2, 3, 5, 4, 3, 5, 2, 5, 4, 4, 2, 1, 3, 5]


def _no_nan(obj: object) -> bool:
    """True when no NaN or infinity hides anywhere in a nested result."""
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(_no_nan(v) for v in obj.values())
    if isinstance(obj, list | tuple):
        return all(_no_nan(v) for v in obj)
    return True


# ---------------------------------------------------------------- paired tests


@pytest.mark.parametrize(("a", "b"), [(A, B), (X, Y)])
def test_paired_tests_equal_scipy(a: list[float], b: list[float]) -> None:
    res = paired_tests(a, b)
    t = stats.ttest_rel(b, a)
    w = stats.wilcoxon(b, a)
    assert res["n"] == len(a)
    assert res["mean_a"] == pytest.approx(np.mean(a), abs=TOL)
    assert res["mean_b"] == pytest.approx(np.mean(b), abs=TOL)
    assert res["mean_diff"] == pytest.approx(np.mean(b) - np.mean(a), abs=TOL)
    assert res["t_stat"] == pytest.approx(t.statistic, abs=TOL)
    assert res["t_p"] == pytest.approx(t.pvalue, abs=TOL)
    assert res["wilcoxon_stat"] == pytest.approx(w.statistic, abs=TOL)
    assert res["wilcoxon_p"] == pytest.approx(w.pvalue, abs=TOL)
    assert res["t_reason"] is None and res["wilcoxon_reason"] is None


def test_paired_tests_identical_scores_give_p_one_and_no_statistic() -> None:
    res = paired_tests([3, 4, 5], [3, 4, 5])
    assert res["wilcoxon_p"] == 1.0 and res["wilcoxon_stat"] is None
    assert res["t_p"] == 1.0 and res["t_stat"] is None
    assert res["mean_diff"] == 0.0
    assert "zero" in res["wilcoxon_reason"]
    assert _no_nan(res)


@pytest.mark.parametrize(("a", "b"), [([3], [4]), ([], []), ([None, 2], [3, None])])
def test_paired_tests_too_few_pairs_give_none_with_a_reason(a: list, b: list) -> None:
    res = paired_tests(a, b)
    assert res["t_p"] is None and res["wilcoxon_p"] is None
    assert "n = " in res["t_reason"] and "n = " in res["wilcoxon_reason"]
    assert _no_nan(res)


def test_paired_tests_constant_nonzero_differences_have_no_t_but_a_wilcoxon() -> None:
    res = paired_tests([3, 3, 4, 2], [4, 4, 5, 3])
    assert res["t_stat"] is None and res["t_p"] is None and res["t_reason"]
    assert res["wilcoxon_p"] == pytest.approx(stats.wilcoxon([1, 1, 1, 1]).pvalue, abs=TOL)
    assert _no_nan(res)


def test_paired_tests_drop_incomplete_pairs() -> None:
    res = paired_tests([*X, None, float("nan")], [*Y, 3.0, 1.0])
    assert res["n"] == len(X)
    assert res["t_p"] == pytest.approx(stats.ttest_rel(Y, X).pvalue, abs=TOL)


def test_paired_tests_reject_unequal_lengths() -> None:
    with pytest.raises(ValueError, match="length"):
        paired_tests([1, 2, 3], [1, 2])


# ---------------------------------------------------------------- Holm


@pytest.mark.parametrize(
    "pvalues",
    [
        [0.01, 0.04, 0.03, 0.005, 0.2, 0.5],
        [0.04, 0.04, 0.01, 0.01, 0.9],  # ties
        [0.3, 0.6, 0.45, 0.8],  # capped at 1
        [0.0001],
        [0.02, 0.015, 0.03, 0.001, 0.049, 0.011, 0.7, 0.0004],
    ],
)
def test_holm_equals_statsmodels(pvalues: list[float]) -> None:
    ours = holm(pvalues)
    theirs = multipletests(pvalues, method="holm")[1]
    assert ours == pytest.approx(list(theirs), abs=TOL)
    assert all(p <= 1.0 for p in ours)
    order = np.argsort(pvalues)
    assert all(np.diff([ours[i] for i in order]) >= 0)  # monotone in the raw p


def test_holm_passes_none_through_without_counting_it() -> None:
    raw = [0.01, None, 0.04, float("nan"), 0.03]
    ours = holm(raw)
    theirs = multipletests([0.01, 0.04, 0.03], method="holm")[1]
    assert ours[1] is None and ours[3] is None
    assert [ours[0], ours[2], ours[4]] == pytest.approx(list(theirs), abs=TOL)
    assert holm([]) == [] and holm([None]) == [None]


# ---------------------------------------------------------------- bootstrap, stars


def test_bootstrap_ci_contains_the_mean_difference_and_is_reproducible() -> None:
    ci = bootstrap_ci(A, B, n_resamples=3000, seed=7)
    assert ci is not None
    low, high = ci
    diff = float(np.mean(B) - np.mean(A))
    assert low < diff < high
    assert bootstrap_ci(A, B, n_resamples=3000, seed=7) == ci
    assert _no_nan(ci)


def test_bootstrap_ci_equals_scipy_bca() -> None:
    ours = bootstrap_ci(X, Y, confidence=0.9, n_resamples=2000, seed=3)
    res = stats.bootstrap(
        (np.array(X), np.array(Y)),
        lambda x, y, axis=-1: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=2000,
        confidence_level=0.9,
        method="BCa",
        rng=np.random.default_rng(3),
    )
    ci = res.confidence_interval
    assert ours == pytest.approx((ci.low, ci.high), abs=TOL)


def test_bootstrap_ci_degenerate_cases() -> None:
    assert bootstrap_ci([3], [4]) is None
    assert bootstrap_ci([], []) is None
    assert bootstrap_ci([3, 3, 4], [4, 4, 5], n_resamples=500) == (1.0, 1.0)
    assert bootstrap_ci([3, 4, 5], [3, 4, 5], n_resamples=500) == (0.0, 0.0)
    ci = bootstrap_ci([3, 3, 3, 3, 3], [3, 3, 3, 3, 5], n_resamples=500)  # one non-zero diff
    assert ci is not None and _no_nan(ci) and ci[0] <= 0.4 <= ci[1]


@pytest.mark.parametrize("failure", ["nan", "raise"])
def test_bootstrap_ci_falls_back_to_percentile_when_bca_fails(
    monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    real = stats.bootstrap
    methods: list[str] = []

    def flaky(*args: object, method: str = "BCa", **kwargs: object) -> object:
        methods.append(method)
        res = real(*args, method=method, **kwargs)
        if method != "BCa":
            return res
        if failure == "raise":
            raise ValueError("BCa undefined")
        res.confidence_interval = type(res.confidence_interval)(np.nan, np.nan)
        return res

    monkeypatch.setattr(stats, "bootstrap", flaky)
    ci = bootstrap_ci(A, B, n_resamples=1000, seed=1)
    monkeypatch.undo()
    expected = stats.bootstrap(
        (np.array(A, float), np.array(B, float)),
        lambda x, y, axis=-1: np.mean(y - x, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=1000,
        method="percentile",
        rng=np.random.default_rng(1),
    ).confidence_interval
    assert methods == ["BCa", "percentile"]
    assert ci == pytest.approx((expected.low, expected.high), abs=TOL)


@pytest.mark.parametrize(
    ("p", "mark"),
    [(0.0005, "***"), (0.001, "**"), (0.009, "**"), (0.01, "*"), (0.049, "*"), (0.05, "")],
)
def test_stars(p: float, mark: str) -> None:
    assert stars(p) == mark


def test_stars_of_nothing() -> None:
    assert stars(None) == "" and stars(float("nan")) == "" and stars(0.9) == ""


# ---------------------------------------------------------------- agreement


def test_agreement_equals_scipy_and_sklearn() -> None:
    res = agreement(HUMAN, JUDGE)
    h, j = np.array(HUMAN), np.array(JUDGE)
    rho = stats.spearmanr(h, j)
    assert res["n"] == len(HUMAN)
    assert res["mae"] == pytest.approx(np.abs(j - h).mean(), abs=TOL)
    assert res["bias"] == pytest.approx((j - h).mean(), abs=TOL)
    assert res["spearman_rho"] == pytest.approx(rho.statistic, abs=TOL)
    assert res["spearman_p"] == pytest.approx(rho.pvalue, abs=TOL)
    assert res["exact"] == pytest.approx(7 / 15, abs=TOL)
    assert res["within_1"] == pytest.approx(15 / 15, abs=TOL)
    qwk = cohen_kappa_score(h, j, weights="quadratic", labels=[1, 2, 3, 4, 5])
    assert res["qwk"] == pytest.approx(qwk, abs=TOL)


def test_agreement_hand_worked() -> None:
    res = agreement([1, 3, 5, 2], [2, 3, 2, 2])
    assert res["mae"] == pytest.approx(1.0)  # |1| + 0 + |−3| + 0 over 4
    assert res["bias"] == pytest.approx(-0.5)
    assert res["exact"] == 0.5 and res["within_1"] == 0.75


def test_agreement_degenerate_cases_give_none() -> None:
    same = agreement([3, 3, 3], [3, 3, 3])
    assert same["spearman_rho"] is None and same["spearman_p"] is None and same["qwk"] is None
    assert same["exact"] == 1.0 and same["mae"] == 0.0
    one = agreement([4], [5])
    assert one["n"] == 1 and one["spearman_rho"] is None and one["bias"] == 1.0
    empty = agreement([], [])
    assert empty["n"] == 0 and empty["mae"] is None and empty["qwk"] is None
    assert agreement([3, None, 4], [2, 5, None])["n"] == 1
    for res in (same, one, empty):
        assert _no_nan(res)


def test_agreement_rejects_scores_outside_the_rubric() -> None:
    with pytest.raises(ValueError, match="1 to 5"):
        agreement([1, 6], [1, 2])


def test_agreement_table_one_row_per_dimension() -> None:
    pairs = [
        {"dimension": "accuracy", "human": h, "judge": j} for h, j in zip(HUMAN, JUDGE, strict=True)
    ]
    pairs += [{"dimension": "clarity", "human": [4, 5, 3], "judge": [4, 4, 3]}]
    pairs += [{"dimension": "tone", "human": 2, "judge": 3}]
    rows = agreement_table(pairs)
    assert [r["dimension"] for r in rows] == [
        "accuracy",
        "completeness",
        "relevance",
        "clarity",
        "tone",
    ]
    assert rows[0] == {"dimension": "accuracy", **agreement(HUMAN, JUDGE)}
    assert rows[1]["n"] == 0 and rows[1]["qwk"] is None
    assert rows[3]["n"] == 3 and rows[3]["exact"] == pytest.approx(2 / 3)
    assert _no_nan(rows)


# ---------------------------------------------------------------- accuracy table


def _rows(model: str, cond: str, cats: list[str], scores: list[float | None]) -> list[dict]:
    return [
        {"model": model, "condition": cond, "category": c, "question_id": f"q{i}", "score": s}
        for i, (c, s) in enumerate(zip(cats, scores, strict=True))
    ]


SMALL = _rows("m", "no_rag", ["F", "F", "FT"], [3, 3, 4]) + _rows(
    "m", "rag", ["F", "F", "FT"], [4, 4, 5]
)


def test_accuracy_and_delta_hand_worked() -> None:
    table = accuracy_table(SMALL, n_resamples=500)
    base = table["cells"]["m"]["no_rag"]["overall"]
    rag = table["cells"]["m"]["rag"]["overall"]
    assert base["accuracy"] == pytest.approx(200 / 3)  # mean 10/3 of 5 → 66.67 %
    assert rag["accuracy"] == pytest.approx(260 / 3)  # mean 13/3 of 5 → 86.67 %
    assert rag["delta_pct"] == pytest.approx(30.0)  # (86.67 − 66.67) / 66.67
    assert rag["n_paired"] == 3 and rag["mean_diff"] == pytest.approx(1.0)
    assert (rag["ci_low"], rag["ci_high"]) == (1.0, 1.0)
    assert base["delta_pct"] is None and base["is_baseline"]
    assert table["cells"]["m"]["rag"]["F"]["delta_pct"] == pytest.approx(100 * (4 - 3) / 3)
    assert table["cells"]["m"]["rag"]["FT"]["delta_pct"] == pytest.approx(25.0)


def test_missing_category_gives_empty_cells_and_a_dash() -> None:
    table = accuracy_table(SMALL, n_resamples=500)
    cell = table["cells"]["m"]["rag"]["T"]
    assert cell["n"] == 0 and cell["accuracy"] is None and cell["wilcoxon_p"] is None
    assert table["cells"]["m"]["no_rag"]["T"]["accuracy"] is None
    assert "| No-RAG | 60.0 | — | 80.0 | 66.7 |" in to_markdown(table)
    assert _no_nan(table)


def test_accuracy_table_tests_pairs_and_holm() -> None:
    rng = np.random.default_rng(11)
    cats = ["F", "T", "FT"] * 10
    rows = _rows("m1", "no_rag", cats, list(rng.integers(1, 4, 30)))
    rows += _rows("m1", "rag", cats, list(rng.integers(2, 6, 30)))
    rows += _rows("m1", "oracle", cats[:24], list(rng.integers(3, 6, 24)))  # 6 questions fewer
    rows += _rows("m2", "no_rag", cats, list(rng.integers(1, 6, 30)))
    rows += _rows("m2", "rag", cats, list(rng.integers(1, 6, 30)))
    table = accuracy_table(rows, n_resamples=500)
    lanes = [c for c in flatten(table) if c["wilcoxon_p"] is not None]
    assert table["n_lanes"] == len(lanes) == 3 * 4
    adjusted = multipletests([c["wilcoxon_p"] for c in lanes], method="holm")[1]
    assert [c["wilcoxon_p_holm"] for c in lanes] == pytest.approx(list(adjusted), abs=TOL)
    assert [c["stars"] for c in lanes] == [stars(p) for p in adjusted]

    # The oracle lane pairs only the 24 questions it answered, against the same baseline ones.
    base = {r["question_id"]: r["score"] for r in rows[:30]}
    oracle = {r["question_id"]: r["score"] for r in rows[60:84] if r["category"] == "T"}
    a = [float(base[q]) for q in sorted(oracle)]
    b = [float(oracle[q]) for q in sorted(oracle)]
    cell = table["cells"]["m1"]["oracle"]["T"]
    assert cell["n"] == cell["n_paired"] == 8
    assert cell["t_p"] == pytest.approx(stats.ttest_rel(b, a).pvalue, abs=TOL)
    assert cell["wilcoxon_p"] == pytest.approx(stats.wilcoxon(b, a).pvalue, abs=TOL)
    assert table["n_questions"]["m1"] == {"F": 10, "T": 10, "FT": 10, "overall": 30}
    assert table["conditions"] == ["no_rag", "rag", "oracle"]
    assert table["cells"]["m2"]["oracle"]["overall"]["n"] == 0  # every model has every cell
    assert _no_nan(table)


def test_repeated_scores_are_averaged_and_unscored_rows_skipped() -> None:
    rows = SMALL + _rows("m", "rag", ["F"], [2]) + _rows("m", "rag", ["F", "F"], [None, None])
    cell = accuracy_table(rows, n_resamples=500)["cells"]["m"]["rag"]["F"]
    assert cell["n"] == 2
    assert cell["accuracy"] == pytest.approx((3 + 4) / 2 / 5 * 100)  # q0 = mean(4, 2)


def test_accuracy_table_rejects_scores_outside_the_rubric() -> None:
    with pytest.raises(ValueError, match="outside 1–5"):
        accuracy_table(_rows("m", "no_rag", ["F"], [7]))


def test_to_markdown_small_table() -> None:
    rows = _rows("m", "no_rag", ["F", "F", "FT", "T"] * 2, [3, 2, 4, 3, 3, 2, 4, 3])
    rows += _rows("m", "rag", ["F", "F", "FT", "T"] * 2, [5, 4, 5, 3, 5, 5, 4, 4])
    rows += _rows("m", "tool_use", ["F", "F", "FT"], [4, 3, 4])
    table = accuracy_table(rows, n_resamples=500)
    text = to_markdown(table, ["no_rag", "rag", "indicator_rag", "tool_use"])
    expected = (
        "**m** (n = 8 questions: F 4, T 2, FT 2)\n"
        "\n"
        "| Condition | F | T | FT | Overall |\n"
        "|:--|--:|--:|--:|--:|\n"
        "| No-RAG | 50.0 | 60.0 | 80.0 | 60.0 |\n"
        "| RAG | 95.0 (+90.0%) | 70.0 (+16.7%) | 90.0 (+12.5%) | 87.5 (+45.8%) |\n"
        "| Indicator-RAG | — | — | — | — |\n"
        "| Tool-Use | 70.0 (+40.0%) | — | 80.0 (+0.0%) | 73.3 (+22.2%) |\n"
        "\n"
        "Accuracy % = mean score / 5 × 100. Δ = relative change vs No-RAG: "
        "(acc − acc No-RAG) / acc No-RAG × 100. Marks: * p < 0.05, ** p < 0.01, "
        "*** p < 0.001, paired Wilcoxon signed-rank test on the questions answered under both "
        "conditions, Holm-corrected over 6 lanes (model × condition × category). "
        "n = questions per model.\n"
    )
    assert text == expected


def test_to_markdown_shows_stars_from_the_holm_p() -> None:
    n = 40
    rows = _rows("m", "no_rag", ["F"] * n, [2, 3] * (n // 2))
    rows += _rows("m", "rag", ["F"] * n, [4, 5] * (n // 2))
    table = accuracy_table(rows, n_resamples=500)
    cell = table["cells"]["m"]["rag"]["F"]
    assert cell["wilcoxon_p_holm"] < 0.001 and cell["stars"] == "***"
    assert "| RAG | 90.0 (+80.0%***) | — | — | 90.0 (+80.0%***) |" in to_markdown(table)


def test_importing_the_room_does_not_load_sklearn() -> None:
    code = (
        "import sys, fintrade_tui.stats.paired, fintrade_tui.stats.agreement, "
        "fintrade_tui.stats.tables; print('sklearn' in sys.modules, 'textual' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
