"""Results screen's reads and writes in worker threads: the accuracy matrix (with its bootstrap,
fewer resamples than the CLI's), the agreement tables, the failure cases, and the case study
and view exports. Plain functions over the state (its lock: one query at a time) and the app
(its workspace and store cursors); no widgets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fintrade_tui.stats.lanes import workspace_lanes

from .state import AccuracyRead, AgreementRead, Case, ResultsState, Row

if TYPE_CHECKING:
    from fintrade_tui.ui.app import FinTradeApp

RESAMPLES = 2000  # fewer than the CLI's: Δ and the marks do not depend on them, the lanes' CIs
# move in the second decimal at most


def read_accuracy(
    state: ResultsState, app: FinTradeApp, kind: str, source: str | None, leave: bool
) -> AccuracyRead:
    """The accuracy table of `kind` scores on `source` (all sets: None), the lanes beside it."""
    from fintrade_tui.judging.session import llm_judges
    from fintrade_tui.reports.accuracy import CREDIT_KINDS, report_table, score_rows
    from fintrade_tui.workspace.disputes import DisputeStore

    with state.db:
        cur = app.workspace()
        try:
            disputed = set(DisputeStore(cur, read_only=True).latest())
            rows = score_rows(cur, kind, leave_out=disputed if leave else set())
            judges = llm_judges(cur) if kind == "llm" else []
        finally:
            cur.close()
    sources = sorted({r["source"] for r in rows if r["source"]})
    rows = [r for r in rows if source is None or r["source"] == source]
    table = report_table(rows, kind, "no_rag", RESAMPLES)  # as `report` and the view report
    lanes: list[Row] = []
    if kind not in CREDIT_KINDS:  # lanes compare rubric scores
        with state.db:
            cur = app.workspace()
            try:
                lanes = workspace_lanes(cur, kind, source, n_resamples=RESAMPLES)
            finally:
                cur.close()
    return AccuracyRead(kind, source, table, sources, judges, lanes, leave, len(disputed))


def read_agreement(state: ResultsState, app: FinTradeApp) -> AgreementRead:
    """Human–judge agreement per dimension, and the annotators' agreement among themselves."""
    from fintrade_tui.judging.session import agreement_pairs
    from fintrade_tui.stats.agreement import agreement_table
    from fintrade_tui.stats.annotators import annotator_agreement, annotator_rows, human_scores

    with state.db:
        cur = app.workspace()
        try:
            pairs = agreement_pairs(cur)
            humans = human_scores(cur)
        finally:
            cur.close()
    return AgreementRead(agreement_table(pairs), annotator_rows(annotator_agreement(humans)))


def read_failures(state: ResultsState, app: FinTradeApp) -> list[Case]:
    """Every failure case, each with its cause."""
    from fintrade_tui.reports.causes import annotate, failure_causes
    from fintrade_tui.reports.failures import failure_cases

    with state.db:
        cur = app.workspace()
        try:
            cfg = app.cfg
            cases = failure_cases(cur, None, cfg.judging.disagreement, cfg.models)
            annotate(cases, failure_causes(cur))
            return cases
        finally:
            cur.close()


def write_case(state: ResultsState, app: FinTradeApp, run_ids: list[str]) -> str:
    """A case study of `run_ids` as HTML (with the explorer's screenshots) and Markdown."""
    from fintrade_tui.exports.case_study import write_case_study
    from fintrade_tui.exports.html_report import write_case_html
    from fintrade_tui.ui.case_shots import case_screenshots

    cfg = app.cfg
    with state.db:
        cur, store = app.workspace(), app.store()
        try:
            md = write_case_study(cfg, cur, run_ids)
            shots = case_screenshots(cfg, store, cur, run_ids)
            page = write_case_html(cfg, cur, run_ids, store_con=store, screenshots=shots)
        finally:
            cur.close()
            store.close()
    return f"{page}\n{md}"


def write_view(
    state: ResultsState,
    app: FinTradeApp,
    cases: list[Case],
    table: dict[str, Any] | None,
    subtitle: str,
) -> str:
    """The filtered view as an HTML report, its runs as JSONL and its matrix as CSV."""
    from fintrade_tui.exports.html_view import write_view_html
    from fintrade_tui.exports.runs_table import write_view as write_runs

    cfg = app.cfg
    run_ids = sorted({r for c in cases for r in c["run_ids"]})
    with state.db:
        cur, store = app.workspace(), app.store()
        try:
            files = write_runs(cfg.store.parent / "exports", cur, run_ids, table)
            html = files.with_name(files.name.replace("-runs.jsonl", ".html"))
            page = write_view_html(cfg, cur, cases, table, html, store_con=store, subtitle=subtitle)
        finally:
            cur.close()
            store.close()
    return f"{page}\n{files}"
