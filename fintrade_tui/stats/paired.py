"""Statistics room: paired tests, Holm's step-down correction, a paired bootstrap interval
and significance stars.

Every statistic comes from scipy; only Holm's adjustment is written here (scipy has none) and
the tests check it against statsmodels. Nothing here raises on degenerate data (n < 2, identical
scores) and no NaN or infinity ever reaches a result: undefined numbers are ``None``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import stats


def finite_or_none(x: Any) -> float | None:
    """A plain float, or None for NaN / infinity / None (JSON and the UI cannot show NaN)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _paired_arrays(a: Sequence[float | None], b: Sequence[float | None]) -> tuple[Any, Any]:
    """Two float arrays with the pairs that miss a value (None / NaN) on either side dropped."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    x = np.array([np.nan if v is None else v for v in a], dtype=float)
    y = np.array([np.nan if v is None else v for v in b], dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def paired_tests(a: Sequence[float | None], b: Sequence[float | None]) -> dict[str, Any]:
    """Paired t-test and Wilcoxon signed-rank test of b against a (same questions, same order).

    Pairs with a missing value on either side are dropped. Keys: ``n``, ``mean_a``,
    ``mean_b``, ``mean_diff`` (b − a), ``t_stat``, ``t_p``, ``t_reason``, ``wilcoxon_stat``,
    ``wilcoxon_p``, ``wilcoxon_reason``. A ``*_reason`` is None when the test ran, otherwise one
    line saying why its numbers are what they are.
    """
    x, y = _paired_arrays(a, b)
    n = int(x.size)
    d = y - x
    out: dict[str, Any] = {
        "n": n,
        "mean_a": finite_or_none(x.mean()) if n else None,
        "mean_b": finite_or_none(y.mean()) if n else None,
        "mean_diff": finite_or_none(d.mean()) if n else None,
        "t_stat": None,
        "t_p": None,
        "t_reason": None,
        "wilcoxon_stat": None,
        "wilcoxon_p": None,
        "wilcoxon_reason": None,
    }
    if n < 2:
        out["t_reason"] = out["wilcoxon_reason"] = f"n = {n}: a paired test needs 2 pairs"
        return out
    if not np.any(d):
        # No difference at all: nothing to test, and "no evidence of a difference" is p = 1.
        out["t_p"] = out["wilcoxon_p"] = 1.0
        out["t_reason"] = out["wilcoxon_reason"] = "all differences are zero"
        return out

    with warnings.catch_warnings():
        # scipy warns on small or tied samples; the numbers are still the ones we want.
        warnings.simplefilter("ignore")
        if np.ptp(d) == 0:
            # Constant non-zero differences: zero variance makes t infinite and p exactly 0,
            # an artefact of the formula rather than evidence, so we report no t-test.
            out["t_reason"] = "the differences are all equal: t is undefined"
        else:
            t = stats.ttest_rel(y, x)
            out["t_stat"], out["t_p"] = finite_or_none(t.statistic), finite_or_none(t.pvalue)
        w = stats.wilcoxon(y, x)
        out["wilcoxon_stat"], out["wilcoxon_p"] = (
            finite_or_none(w.statistic),
            finite_or_none(w.pvalue),
        )
    return out


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values, in the input order.

    None (or NaN) entries pass through as None and do not count towards the number of tests.
    Adjusted values are monotone in the raw p-values and capped at 1.
    """
    finite = {i: f for i, p in enumerate(pvalues) if (f := finite_or_none(p)) is not None}
    out: list[float | None] = [None] * len(pvalues)
    m = len(finite)
    running = 0.0
    # Smallest p first: multiply the k-th smallest (0-based) by m − k, then carry the running
    # maximum forward so an adjusted p never drops below that of a smaller raw p.
    for k, i in enumerate(sorted(finite, key=finite.__getitem__)):
        running = max(running, min(1.0, (m - k) * finite[i]))
        out[i] = running
    return out


def bootstrap_ci(
    a: Sequence[float | None],
    b: Sequence[float | None],
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Paired bootstrap confidence interval of the mean difference b − a.

    Uses ``scipy.stats.bootstrap(paired=True)`` with the BCa method (bias-corrected and
    accelerated: better coverage on skewed 1–5 score differences). BCa is undefined on
    degenerate data (e.g. every difference equal); then the percentile method is used instead.
    Returns None when fewer than 2 complete pairs remain. Reproducible for a fixed ``seed``.
    """
    x, y = _paired_arrays(a, b)
    n = int(x.size)
    if n < 2:
        return None
    d = y - x
    if np.ptp(d) == 0:
        # Every resample has the same mean: the interval is that one point.
        return (float(d[0]), float(d[0]))

    def mean_diff(xs: Any, ys: Any, axis: int = -1) -> Any:
        return np.mean(ys - xs, axis=axis)

    # Bounded batches keep memory at about 8 MB whatever the number of questions.
    batch = max(1, min(n_resamples, 1_000_000 // n))
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # DegenerateDataWarning: handled by the fallback
            try:
                res = stats.bootstrap(
                    (x, y),
                    mean_diff,
                    paired=True,
                    vectorized=True,
                    n_resamples=n_resamples,
                    batch=batch,
                    confidence_level=confidence,
                    method=method,
                    rng=np.random.default_rng(seed),
                )
            except (ValueError, FloatingPointError):
                continue
        low, high = (
            finite_or_none(res.confidence_interval.low),
            finite_or_none(res.confidence_interval.high),
        )
        if low is not None and high is not None:
            return (low, high)
    return None


def stars(p: float | None) -> str:
    """Significance marks: "***" p < 0.001, "**" p < 0.01, "*" p < 0.05, "" otherwise."""
    p = finite_or_none(p)
    if p is None:
        return ""
    if p < 0.001:
        return "***"
    if p < 0.01:
        return "**"
    if p < 0.05:
        return "*"
    return ""
