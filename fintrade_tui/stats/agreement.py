"""Statistics room: agreement between human and LLM-judge scores on the 1–5 rubric.

Spearman's rho from scipy, quadratic-weighted Cohen's kappa from scikit-learn (imported inside
the function: it is slow to import). Undefined numbers are None, never NaN.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats

from fintrade_tui.stats.paired import finite_or_none

DIMENSIONS = ("accuracy", "completeness", "relevance", "clarity")
LEVELS = [1, 2, 3, 4, 5]


def _pairs(human: Sequence[int | None], judge: Sequence[int | None]) -> tuple[Any, Any]:
    """Integer arrays of the complete pairs; a score outside 1–5 is an error, not noise."""
    if len(human) != len(judge):
        raise ValueError(f"human and judge scores differ in length: {len(human)} vs {len(judge)}")
    kept = [(h, j) for h, j in zip(human, judge, strict=True) if h is not None and j is not None]
    for h, j in kept:
        for v in (h, j):
            if v not in LEVELS:
                raise ValueError(f"score {v!r} is not an integer from 1 to 5")
    hs = np.array([int(p[0]) for p in kept], dtype=int)
    js = np.array([int(p[1]) for p in kept], dtype=int)
    return hs, js


def agreement(human: Sequence[int | None], judge: Sequence[int | None]) -> dict[str, Any]:
    """Agreement of paired 1–5 scores (pairs with a None on either side are dropped).

    Keys: ``n``, ``mae``, ``bias`` (mean judge − human), ``spearman_rho``, ``spearman_p``,
    ``exact`` (share of equal scores), ``within_1`` (share with |judge − human| <= 1), ``qwk``
    (quadratic-weighted kappa over the labels 1–5).
    """
    h, j = _pairs(human, judge)
    n = int(h.size)
    out: dict[str, Any] = {
        "n": n,
        "mae": None,
        "bias": None,
        "spearman_rho": None,
        "spearman_p": None,
        "exact": None,
        "within_1": None,
        "qwk": None,
    }
    if n == 0:
        return out
    diff = j - h
    out["mae"] = float(np.abs(diff).mean())
    out["bias"] = float(diff.mean())
    out["exact"] = float((diff == 0).mean())
    out["within_1"] = float((np.abs(diff) <= 1).mean())

    with warnings.catch_warnings():
        # Constant inputs and tiny samples warn; the resulting NaN becomes None below.
        warnings.simplefilter("ignore")
        # A constant side makes rho undefined; scipy would return NaN with a warning.
        if n >= 2 and np.ptp(h) > 0 and np.ptp(j) > 0:
            res = stats.spearmanr(h, j)
            out["spearman_rho"] = finite_or_none(res.statistic)
            out["spearman_p"] = finite_or_none(res.pvalue)

        from sklearn.metrics import cohen_kappa_score  # slow import: only when needed

        # Undefined (e.g. both raters give one and the same score) comes back as NaN → None.
        out["qwk"] = finite_or_none(cohen_kappa_score(h, j, weights="quadratic", labels=LEVELS))
    return out


def agreement_table(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One agreement row per rubric dimension.

    Each input dict has ``dimension``, ``human`` and ``judge`` — one annotated score pair (or
    two equal-length lists of scores). Rows come for accuracy, completeness, relevance and
    clarity (n = 0 when nothing was annotated), then any other dimension in first-seen order;
    each row is ``{"dimension": ..., **agreement(...)}``.
    """
    grouped: dict[str, tuple[list[Any], list[Any]]] = {d: ([], []) for d in DIMENSIONS}
    for p in pairs:
        hs, js = grouped.setdefault(str(p["dimension"]), ([], []))
        h, j = p["human"], p["judge"]
        if isinstance(h, Sequence) and not isinstance(h, str):
            if len(h) != len(j):
                raise ValueError(f"{p['dimension']}: {len(h)} human vs {len(j)} judge scores")
            hs.extend(h)
            js.extend(j)
        else:
            hs.append(h)
            js.append(j)
    return [{"dimension": d, **agreement(hs, js)} for d, (hs, js) in grouped.items()]
