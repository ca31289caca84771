"""Reports room: the one accuracy-table builder — the matrix `report`, the Results screen and
the HTML view report (`export html --view`) all show, from the same score rows on the same
scale, so the three show the same cells for the same workspace (tests/ui/test_results.py reads
all three)."""

from __future__ import annotations

from typing import Any

import duckdb

from fintrade_tui.errors import UserError
from fintrade_tui.judging.session import CREDIT_KINDS, score_rows


def accuracy_report(
    ws: duckdb.DuckDBPyConnection,
    scores: str = "llm",
    source: str | None = None,
    baseline: str = "no_rag",
    n_resamples: int = 10000,
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The score rows and accuracy table `fintrade-tui report` shows for these options (None
    without scores); a baseline the scores do not hold is one line naming the ones they do.
    The HTML view report computes its matrix here too, so both show the same cells."""
    rows = score_rows(ws, scores, source=source)
    seen = {r["condition"] for r in rows}
    if seen and baseline not in seen:
        raise UserError(
            f"--baseline {baseline}", "has no scores", f"use one of {', '.join(sorted(seen))}"
        )
    return rows, report_table(rows, scores, baseline, n_resamples)


def report_table(
    rows: list[dict[str, Any]], scores: str, baseline: str, n_resamples: int
) -> dict[str, Any] | None:
    """The accuracy table of `score_rows` on the scale of that score kind (None without rows)."""
    from fintrade_tui.stats.tables import LABELS_SCALE, RUBRIC, accuracy_table

    scale = LABELS_SCALE if scores in CREDIT_KINDS else RUBRIC
    return accuracy_table(rows, baseline, n_resamples=n_resamples, scale=scale) if rows else None
