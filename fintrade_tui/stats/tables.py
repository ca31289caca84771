"""Statistics room: the accuracy table in the shape of FinTradeBench's Table 2.

Rows are conditions, columns the categories the question set carries (FinTradeBench's F, T,
FT; SECQUE's question types; a file's own `category`) and overall; every non-baseline
cell carries its relative change against the baseline condition, a paired Wilcoxon test on the
questions both conditions answered, a bootstrap interval of the score difference and a Holm
correction over every lane of the table (a lane = model × condition × category).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from fintrade_tui.stats.paired import bootstrap_ci, finite_or_none, holm, paired_tests, stars
from fintrade_tui.workspace.evidence import CONDITIONS, LABELS

CATEGORIES = ("F", "T", "FT")  # FinTradeBench's: always shown together when any is present
COLUMNS = (*CATEGORIES, "overall")
MAX_SCORE = 5.0
RUBRIC = (1.0, MAX_SCORE)  # judge and human scores
LABELS_SCALE = (0.0, 1.0)  # correctness from labels: 1 correct, 0.5 partial, 0 otherwise
DASH = "—"

# Keys filled only for non-baseline cells (None elsewhere, so every cell has the same keys and a
# flattened table loads straight into a DataFrame).
_COMPARISON_KEYS = (
    "baseline_accuracy",
    "delta_pct",
    "n_paired",
    "mean_diff",
    "ci_low",
    "ci_high",
    "t_stat",
    "t_p",
    "wilcoxon_stat",
    "wilcoxon_p",
    "wilcoxon_p_holm",
    "reason",
)


def _accuracy(values: Iterable[float], top: float = MAX_SCORE) -> float | None:
    """Accuracy % of scores: mean / top × 100 (None for no scores)."""
    v = list(values)
    return finite_or_none(np.mean(v) / top * 100.0) if v else None


def category_columns(categories: Iterable[str]) -> list[str]:
    """The table's columns: F, T, FT when the set has any of them, then every other category
    in natural order ("Q2" before "Q10"), then overall."""
    from fintrade_tui.workspace.questions import natural_key

    seen = {c for c in categories if c}
    head = list(CATEGORIES) if seen & set(CATEGORIES) else []
    rest = sorted(seen - set(CATEGORIES), key=natural_key)
    return [*head, *rest, "overall"]


def _collect(
    rows: list[dict[str, Any]], scale: tuple[float, float] = RUBRIC
) -> tuple[dict[str, Any], dict[Any, str], list[str], list[str]]:
    """scores[model][condition][question_id] -> list of scores, category per question, and
    the models and conditions in first-seen order. Rows with no score (unjudged) are skipped."""
    scores: dict[str, dict[str, dict[Any, list[float]]]] = {}
    category: dict[Any, str] = {}
    models: list[str] = []
    conditions: list[str] = []
    for r in rows:
        model, cond, qid = str(r["model"]), str(r["condition"]), r["question_id"]
        if model not in scores:
            scores[model] = {}
            models.append(model)
        if cond not in conditions:
            conditions.append(cond)
        cat = str(r.get("category") or "").strip()
        category.setdefault(qid, cat.upper() if cat.upper() in CATEGORIES else cat)
        s = finite_or_none(r.get("score"))
        if s is None:
            continue
        if not scale[0] <= s <= scale[1]:
            lo, hi = scale
            raise ValueError(f"score {r.get('score')!r} for {qid!r} is outside {lo:g}–{hi:g}")
        scores[model].setdefault(cond, {}).setdefault(qid, []).append(s)
    return scores, category, models, conditions


def ordered_conditions(seen: list[str], baseline: str) -> list[str]:
    """Baseline first, then the known conditions in their usual order, then any others."""
    known = [c for c in CONDITIONS if c in seen and c != baseline]
    other = [c for c in seen if c not in CONDITIONS and c != baseline]
    return [baseline, *known, *other]


def accuracy_table(
    rows: list[dict[str, Any]],
    baseline: str = "no_rag",
    *,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int = 0,
    scale: tuple[float, float] = RUBRIC,
) -> dict[str, Any]:
    """Accuracy per model × condition × category, compared with the baseline condition.

    ``rows``: dicts with ``model``, ``condition``, ``category`` (each distinct one is a
    column; F / T / FT always come as a set), ``question_id`` and ``score`` (within
    ``scale``: 1–5 rubric scores, or 0–1 correctness from labels; None = not scored,
    skipped). Several scores for the same model, condition and question (repeats, several
    judges) are averaged first, so every question weighs the same and pairs once.

    Returns ``{"baseline", "models", "conditions", "categories" (the columns, overall last),
    "scale", "n_questions" (model -> distinct questions per category), "n_lanes",
    "confidence", "cells"}`` where ``cells[model][condition][category]`` is a dict with
    ``model``, ``condition``, ``category``, ``is_baseline``, ``n``, ``accuracy`` (%) and,
    for non-baseline cells, ``baseline_accuracy``,
    ``delta_pct`` ((acc − acc_base) / acc_base × 100), ``n_paired`` (questions in both),
    ``mean_diff`` and ``ci_low``/``ci_high`` (paired bootstrap, score units, condition −
    baseline), ``t_stat``, ``t_p``, ``wilcoxon_stat``, ``wilcoxon_p``, ``wilcoxon_p_holm``
    (Holm over all lanes with a Wilcoxon p), ``stars`` (from the Holm-adjusted p) and ``reason``
    (why a test is missing, else None). Every model has every cell; empty ones have n = 0.
    """
    scores, category, models, seen = _collect(rows, scale)
    conditions = ordered_conditions(seen, baseline)
    columns = category_columns(category.values())
    top = scale[1]

    def per_question(model: str, cond: str, col: str) -> dict[Any, float]:
        qs = scores[model].get(cond, {})
        return {
            q: float(np.mean(v)) for q, v in qs.items() if col == "overall" or category[q] == col
        }

    cells: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    lanes: list[dict[str, Any]] = []
    for model in models:
        cells[model] = {}
        for cond in conditions:
            cells[model][cond] = {}
            for col in columns:
                mine = per_question(model, cond, col)
                cell: dict[str, Any] = {
                    "model": model,
                    "condition": cond,
                    "category": col,
                    "is_baseline": cond == baseline,
                    "n": len(mine),
                    "accuracy": _accuracy(mine.values(), top),
                    **dict.fromkeys(_COMPARISON_KEYS),
                    "stars": "",
                }
                cells[model][cond][col] = cell
                if cond != baseline and mine:
                    _compare(
                        cell,
                        per_question(model, baseline, col),
                        mine,
                        confidence,
                        n_resamples,
                        seed,
                        top,
                    )
                    if cell["wilcoxon_p"] is not None:
                        lanes.append(cell)

    # One correction over the whole table: each lane is one more chance of a false "*".
    for cell, p_adj in zip(lanes, holm([c["wilcoxon_p"] for c in lanes]), strict=True):
        cell["wilcoxon_p_holm"] = p_adj
        cell["stars"] = stars(p_adj)

    n_questions = {}
    for m in models:
        asked = {q for qs in scores[m].values() for q in qs}
        n_questions[m] = {k: sum(category[q] == k for q in asked) for k in columns[:-1]}
        n_questions[m]["overall"] = len(asked)
    return {
        "baseline": baseline,
        "models": models,
        "conditions": conditions,
        "categories": columns,
        "scale": list(scale),
        "n_questions": n_questions,
        "n_lanes": len(lanes),
        "confidence": confidence,
        "cells": cells,
    }


def _compare(
    cell: dict[str, Any],
    base: dict[Any, float],
    mine: dict[Any, float],
    confidence: float,
    n_resamples: int,
    seed: int,
    top: float = MAX_SCORE,
) -> None:
    """Fill a non-baseline cell's comparison with the baseline (in place)."""
    base_acc = _accuracy(base.values(), top)
    cell["baseline_accuracy"] = base_acc
    if base_acc:  # None (no baseline questions) or 0 leave Δ undefined
        cell["delta_pct"] = finite_or_none((cell["accuracy"] - base_acc) / base_acc * 100.0)
    # Pair on the questions both conditions answered; sorted so the bootstrap is reproducible.
    common = sorted(set(base) & set(mine), key=str)
    a = [base[q] for q in common]
    b = [mine[q] for q in common]
    tests = paired_tests(a, b)
    ci = bootstrap_ci(a, b, confidence=confidence, n_resamples=n_resamples, seed=seed)
    cell.update(
        n_paired=tests["n"],
        mean_diff=tests["mean_diff"],
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        t_stat=tests["t_stat"],
        t_p=tests["t_p"],
        wilcoxon_stat=tests["wilcoxon_stat"],
        wilcoxon_p=tests["wilcoxon_p"],
        reason=tests["wilcoxon_reason"] or tests["t_reason"],
    )
    if not base:
        cell["reason"] = "no baseline scores in this category"


def flatten(table: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cell of an accuracy table as one flat list (for CSV / DataFrame export)."""
    return [
        table["cells"][m][c][k]
        for m in table["models"]
        for c in table["conditions"]
        for k in table["categories"]
    ]


def fmt_cell(cell: dict[str, Any] | None) -> str:
    """ "62.4" for the baseline, "71.0 (+13.8%**)" for others, "—" when there are no scores."""
    if not cell or cell["accuracy"] is None:
        return DASH
    acc = f"{cell['accuracy']:.1f}"
    if cell["is_baseline"] or cell["delta_pct"] is None:
        return acc
    delta = round(cell["delta_pct"], 1) + 0.0  # + 0.0 turns -0.0 into 0.0
    return f"{acc} ({delta:+.1f}%{cell['stars']})"


def shown_conditions(
    table: dict[str, Any], model: str, conditions: list[str] | None = None
) -> list[str]:
    """The conditions worth a row for `model`: the baseline, and every other one it has scores
    under (imported files bring their own condition names; most models have few of them)."""
    cells = table["cells"][model]
    return [
        c
        for c in conditions or table["conditions"]
        if c == table["baseline"] or (c in cells and cells[c]["overall"]["n"])
    ]


def to_markdown(table: dict[str, Any], condition_order: list[str] | None = None) -> str:
    """The table as Markdown: one block per model, rows = conditions, columns the categories
    and Overall, then a footnote explaining Δ and the significance marks."""
    columns = table["categories"]
    heads = [("Overall" if k == "overall" else k) for k in columns]
    labels = list(table.get("scale") or RUBRIC) == list(LABELS_SCALE)
    baseline = table["baseline"]
    base_label = LABELS.get(baseline, baseline)
    blocks: list[str] = []
    for model in table["models"]:
        by_cond = table["cells"][model]
        counts = table["n_questions"][model]
        per_cat = ", ".join(f"{k} {counts[k]}" for k in columns[:-1])
        lines = [
            f"**{model}** (n = {counts['overall']} questions: {per_cat})",
            "",
            "| Condition | " + " | ".join(heads) + " |",
            "|:--|" + "--:|" * len(heads),
        ]
        # an explicit order shows every row asked for; by default, the ones with scores
        for cond in condition_order or shown_conditions(table, model):
            row = by_cond.get(cond, {})
            vals = " | ".join(fmt_cell(row.get(k)) for k in columns)
            lines.append(f"| {LABELS.get(cond, cond)} | {vals} |")
        blocks.append("\n".join(lines))
    n_lanes = table["n_lanes"]
    # The marks never start the line and sit before a space, so Markdown keeps them literal.
    what = (
        "Accuracy % = share of runs labelled correct (partial counts half)"
        if labels
        else "Accuracy % = mean score / 5 × 100"
    )
    footnote = (
        f"{what}. Δ = relative change vs {base_label}: "
        f"(acc − acc {base_label}) / acc {base_label} × 100. "
        "Marks: * p < 0.05, ** p < 0.01, *** p < 0.001, paired Wilcoxon signed-rank test "
        "on the questions answered under both conditions, Holm-corrected over "
        f"{n_lanes} lane{'s' if n_lanes != 1 else ''} (model × condition × category). "
        "n = questions per model."
    )
    return "\n\n".join([*blocks, footnote]) + "\n"
