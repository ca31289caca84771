"""HTML view report room: a filtered view of the Results screen as one self-contained file —
the accuracy matrix (model × condition × category, Δ against the baseline with its Holm-adjusted
significance stars, exactly the cells `fintrade-tui report --json` gives for the same options),
the list of failure cases with their reasons, each linking to its question's section, and the
sections themselves (question, company quarter and charts, every listed run's answer, evidence,
audit and scores). Rendering is shared with the case study (html_report.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fintrade_tui.config import Config
from fintrade_tui.exports.case_data import add_companies, load_case, resolve_runs
from fintrade_tui.exports.html_report import case_sections, render, write_html
from fintrade_tui.reports.failures import FILTER_LABELS

if TYPE_CHECKING:
    import duckdb

    from fintrade_tui.workspace.connection_api import Connection


def matrix_rows(table: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The accuracy table as rows for the template: one per model × shown condition, each with
    its cells in the table's category order."""
    from fintrade_tui.stats.tables import shown_conditions

    if not table:
        return []
    return [
        {
            "model": m,
            "condition": c,
            "cells": [table["cells"][m][c][k] for k in table["categories"]],
        }
        for m in table["models"]
        for c in shown_conditions(table, m)
    ]


def render_view(
    ws_con: Connection,
    cases: list[dict[str, Any]],
    table: dict[str, Any] | None,
    *,
    store_con: duckdb.DuckDBPyConnection | None = None,
    lag_days: int | None = None,
    title: str = "Results view",
    subtitle: str = "",
) -> str:
    """The view report of these failure cases (judging.failures rows) and accuracy table."""
    ids = list(dict.fromkeys(r for c in cases for r in c["run_ids"]))
    data = load_case(ws_con, resolve_runs(ws_con, ids) if ids else [])
    if store_con is not None:
        add_companies(data, store_con, lag_days)
    sections = case_sections(data)
    anchors = {s["id"]: s["anchor"] for s in sections}
    listed = [
        {**c, "filter_label": FILTER_LABELS.get(c["filter"], c["filter"]),
         "anchor": anchors.get(c["question_id"])}
        for c in cases
    ]  # fmt: skip
    return render(
        "view.html.j2",
        title=title,
        subtitle=subtitle,
        table=table,
        matrix=matrix_rows(table),
        cases=listed,
        sections=sections,
        preferences=data.preferences,
    )


def default_view_path(cfg: Config) -> Path:
    from datetime import datetime

    return cfg.store.parent / "exports" / f"view-{datetime.now():%Y%m%d-%H%M%S}.html"


def write_view_html(
    cfg: Config,
    ws_con: Connection,
    cases: list[dict[str, Any]],
    table: dict[str, Any] | None,
    path: Path | None = None,
    *,
    store_con: duckdb.DuckDBPyConnection | None = None,
    subtitle: str = "",
) -> Path:
    """Write the view report (default data/exports/view-<time>.html); returns its path."""
    html = render_view(
        ws_con,
        cases,
        table,
        store_con=store_con,
        lag_days=cfg.fundamentals.estimated_lag_days,
        subtitle=subtitle,
    )
    return write_html(Path(path) if path else default_view_path(cfg), html)
