"""Reports room: the one accuracy-table builder — the matrix `report`, the Results screen and
the HTML view report (`export html --view`) all show, from the same score rows (`score_rows`:
each run's score by the rule of workspace/score_reader.py) on the same scale, so the three
show the same cells for the same workspace (tests/ui/test_results_matrix.py reads all three)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError
from fintrade_tui.stats.breakdown import run_fields
from fintrade_tui.workspace.questions import load_questions
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.score_reader import counted_scores
from fintrade_tui.workspace.scores import ScoreStore, credit

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

SCORE_KINDS = ("llm", "human", "labels", "match")  # what `report --scores` can read
CREDIT_KINDS = ("labels", "match")  # scored by a label's credit (0-1), not a 1-5 rubric


def accuracy_report(
    ws: Connection,
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


def score_rows(
    ws: Connection,
    kind: str = "llm",
    dimension: str = "accuracy",
    source: str | None = None,
    protocol: str = "per_condition",
    by: str = "category",
    models: Mapping[str, Any] | None = None,
    leave_out: set[str] | frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """One row per scored run for the accuracy table: model, condition, category, question,
    score, and the judging `protocol` read (None for human scores, labels and matches). `kind`
    llm or human: the latest ok 1-5 score of that kind on `dimension` (LLM scores of `protocol`
    only), several annotators of one run counted by `counted_scores` (a dimension an
    adjudicator settled is the settled score, any other the annotators' mean); `labels`:
    correctness from the people's labels (1 correct, 0.5 partial, 0 incorrect or refusal),
    averaged over annotators; `match`: the answer matcher's latest verdict (`judge --rescore`:
    1 correct, 0 incorrect). `source` keeps one question set; `by` names what fills `category`
    (stats/breakdown.py: TAT-QA's answer type or scale, or the look-ahead of the run's model,
    whose cutoffs `models` (the registry) gives). `leave_out`: question ids whose runs are left
    out (e.g. those with disputed references)."""
    store = ScoreStore(ws)
    latest = store.latest(kind="human" if kind == "labels" else kind, protocol=protocol)
    if not latest:
        return []
    runs = {r["id"]: r for r in RunStore(ws).list(status=COMPLETED, limit=1_000_000)}
    qs = {q.id: q for q in load_questions(ws)}
    look = _look_ahead(models or {}) if by == "cutoff" else None
    by_run: dict[str, float] = {}
    if kind in CREDIT_KINDS:  # labels and verdicts: every annotator's credit, averaged
        credits: dict[str, list[float]] = {}
        for s in latest:
            if (v := credit(s.get("label"))) is not None:
                credits.setdefault(s["run_id"], []).append(v)
        by_run = {rid: sum(values) / len(values) for rid, values in credits.items()}
    else:  # the one rule (workspace/score_reader.py): a settled dimension, else the mean
        for (rid, _), dims in counted_scores(latest).items():
            if dimension in dims:
                by_run[rid] = dims[dimension]
    out = []
    for rid, score in by_run.items():
        if rid in runs and runs[rid]["question_id"] in leave_out:
            continue
        if (row := run_fields(rid, runs, qs, source, by, look)) is not None:
            read = None if kind in ("human", *CREDIT_KINDS) else protocol
            out.append(row | {"score": score, "protocol": read})
    return out


def _look_ahead(models: Mapping[str, Any]) -> Callable[[dict[str, Any], Any], str]:
    """A run's look-ahead (models/cutoffs.py): its model's cutoff against the question's as-of
    (the run's own as-of for a question no longer in the workspace)."""
    from fintrade_tui.models.cutoffs import run_mark

    def of(run: dict[str, Any], q: Any) -> str:
        return run_mark(models, run, q)["look_ahead"]

    return of
