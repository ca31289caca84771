"""Lane tables (stats/lanes.py) on fixed data against an independent computation: N, Δ,
W/T/L and the paired bootstrap CI per lane from numpy / scipy directly, the Wilcoxon p from
scipy, the Holm family (its size and adjusted p) from statsmodels; protocols never mixed."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from fintrade_tui.stats.lanes import ALL, forest_bar, lane_table, lane_tables, to_markdown

RESAMPLES = 2000
CATS = {"F": 9, "T": 8, "FT": 7}  # questions per category


def _rows() -> list[dict]:
    """One model, three conditions, 24 questions in F / T / FT; integer-ish rubric means."""
    rng = np.random.default_rng(7)
    rows = []
    for cat, n in CATS.items():
        for i in range(n):
            q = f"{cat}{i}"
            base = int(rng.integers(1, 6))
            for cond, shift in (("no_rag", 0), ("rag", 1), ("oracle", 2)):
                s = float(
                    np.clip(base + shift * int(rng.integers(0, 2)) - int(rng.integers(0, 2)), 1, 5)
                )
                rows.append(
                    {"model": "m", "condition": cond, "category": cat, "question_id": q, "score": s}
                )
    rows.append(  # a rag answer with no baseline: not paired
        {"model": "m", "condition": "rag", "category": "F", "question_id": "lone", "score": 5.0}
    )
    return rows


def _independent(rows: list[dict], cond: str, lane: str) -> dict:
    base = {r["question_id"]: r["score"] for r in rows if r["condition"] == "no_rag"}
    mine = {r["question_id"]: r["score"] for r in rows if r["condition"] == cond}
    cat = {r["question_id"]: r["category"] for r in rows}
    qs = sorted(q for q in base.keys() & mine.keys() if lane == ALL or cat[q] == lane)
    x = np.array([base[q] for q in qs])
    y = np.array([mine[q] for q in qs])
    d = y - x
    ci = stats.bootstrap(
        (x, y),
        lambda a, b, axis=-1: np.mean(b - a, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=RESAMPLES,
        method="BCa",
        rng=np.random.default_rng(0),
    ).confidence_interval
    return {
        "n_paired": len(qs),
        "delta": d.mean(),
        "win_pct": 100 * np.sum(d > 0) / len(d),
        "tie_pct": 100 * np.sum(d == 0) / len(d),
        "loss_pct": 100 * np.sum(d < 0) / len(d),
        "ci": (ci.low, ci.high),
        "p": stats.wilcoxon(y, x).pvalue,
    }


def test_lanes_equal_an_independent_computation() -> None:
    rows = _rows()
    table = lane_table(rows, "no_rag", n_resamples=RESAMPLES, seed=0)
    assert table["lanes"] == ["All", "F", "T", "FT"]
    assert table["comparisons"] == [["m", "rag"], ["m", "oracle"]]
    assert len(table["rows"]) == 8
    for r in table["rows"]:
        want = _independent(rows, r["condition"], r["lane"])
        n = sum(CATS.values()) if r["lane"] == ALL else CATS[r["lane"]]
        assert r["n_paired"] == want["n_paired"] == n
        assert r["delta"] == pytest.approx(want["delta"], abs=1e-12)
        for k in ("win_pct", "tie_pct", "loss_pct"):
            assert r[k] == pytest.approx(want[k], abs=1e-12)
        assert r["win_pct"] + r["tie_pct"] + r["loss_pct"] == pytest.approx(100.0)
        assert (r["ci_low"], r["ci_high"]) == pytest.approx(want["ci"], abs=1e-12)
        assert r["ci_low"] <= r["delta"] <= r["ci_high"]
        assert r["wilcoxon_p"] == pytest.approx(want["p"], abs=1e-12)


def test_holm_family_is_the_one_named() -> None:
    table = lane_table(_rows(), "no_rag", n_resamples=200)
    raw = [r["wilcoxon_p"] for r in table["rows"]]
    assert all(p is not None for p in raw)
    reject, adjusted, _, _ = multipletests(raw, method="holm")
    assert table["holm"]["m"] == len(raw) == 8
    assert table["holm"]["family"] == "Holm over the 8 tests of this table: 2 comparisons × 4 lanes"
    assert [r["wilcoxon_p_holm"] for r in table["rows"]] == pytest.approx(list(adjusted))
    assert [r["stars"] != "" for r in table["rows"]] == list(reject)
    md = to_markdown(table)
    assert "Holm over the 8 tests of this table: 2 comparisons × 4 lanes" in md


def test_a_lane_without_a_test_leaves_the_family_and_is_named() -> None:
    rows = [
        {"model": "m", "condition": c, "category": cat, "question_id": q, "score": s}
        for c, cat, q, s in [
            ("no_rag", "F", "a", 2.0),
            ("no_rag", "F", "b", 3.0),
            ("no_rag", "T", "c", 1.0),
            ("rag", "F", "a", 4.0),
            ("rag", "F", "b", 4.5),
            ("rag", "T", "c", 5.0),
        ]
    ]
    table = lane_table(rows, n_resamples=200)
    by = {r["lane"]: r for r in table["rows"]}
    assert by["T"]["n_paired"] == 1 and by["T"]["wilcoxon_p"] is None
    assert by["T"]["delta"] == 4.0 and by["T"]["win_pct"] == 100.0 and by["T"]["ci_low"] is None
    assert table["holm"]["m"] == 2
    assert table["holm"]["family"] == (
        "Holm over the 2 tests of this table: 1 comparison × 3 lanes, "
        "less 1 with no test (fewer than 2 pairs)"
    )
    _, adjusted, _, _ = multipletests(
        [by["All"]["wilcoxon_p"], by["F"]["wilcoxon_p"]], method="holm"
    )
    assert [by["All"]["wilcoxon_p_holm"], by["F"]["wilcoxon_p_holm"]] == pytest.approx(adjusted)


def test_protocols_are_never_mixed() -> None:
    rows = _rows()
    common = [r | {"protocol": "common", "score": 6.0 - r["score"]} for r in rows]
    tables = lane_tables([*rows, *common], "no_rag", n_resamples=200)
    assert [t["protocol"] for t in tables] == ["per_condition", "common"]
    alone = lane_table(rows, "no_rag", n_resamples=200)
    flipped = lane_table(common, "no_rag", n_resamples=200)
    assert [r["delta"] for r in tables[0]["rows"]] == [r["delta"] for r in alone["rows"]]
    assert [r["delta"] for r in tables[1]["rows"]] == [r["delta"] for r in flipped["rows"]]
    assert tables[1]["rows"][0]["delta"] == pytest.approx(-alone["rows"][0]["delta"])
    assert tables[0]["holm"]["m"] == tables[1]["holm"]["m"] == 8  # each its own family


def test_forest_bar_marks_zero_delta_and_interval() -> None:
    row = {"delta": 1.0, "ci_low": 0.5, "ci_high": 1.5}
    bar = forest_bar(row, span=2.0, width=9)  # cells at -2, -1.5, ..., +2
    assert bar == "    │─●─ "  # 0.5 at cell 5, Δ 1.0 at 6, 1.5 at 7
    assert forest_bar({"delta": None, "ci_low": None, "ci_high": None}, 1.0, 5) == "  │  "
