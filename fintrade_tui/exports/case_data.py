"""Case data room: what a case study shows, read once from the workspace (and the store) for the
Markdown and HTML writers alike — the runs, their latest scores and numeric audits, whether each
counts as right (reports/rightness.py: the judge's accuracy and the audit side by side), pairwise
preferences, the questions, and the company's quarter and chart series at each question's as_of.

Nothing here formats; the writers in case_study.py and html_report.py do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError
from fintrade_tui.reports.rightness import Verdict, latest_audits, run_verdicts
from fintrade_tui.workspace.judge_agreement import agreement_for, describe, read_latest
from fintrade_tui.workspace.questions import load_questions, natural_key
from fintrade_tui.workspace.run_records import RunStore
from fintrade_tui.workspace.scores import ScoreStore

if TYPE_CHECKING:
    import duckdb

    from fintrade_tui.workspace.connection_api import Connection


@dataclass
class CaseData:
    """The runs of one or more questions with everything recorded about them."""

    runs: list[dict[str, Any]]
    questions: dict[str, Any]  # id -> Question (absent when not in the bank)
    question_ids: list[str]  # natural order
    scores: dict[str, list[dict[str, Any]]]  # run id -> latest score versions
    audits: dict[str, dict[str, Any]]  # run id -> newest numeric audit
    preferences: list[dict[str, Any]] = field(default_factory=list)  # latest, between these runs
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)  # run id -> answer checks
    companies: dict[tuple[str, date], dict[str, Any]] = field(default_factory=dict)
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # run id -> counts as right?

    def runs_of(self, qid: str) -> list[dict[str, Any]]:
        return [r for r in self.runs if r["question_id"] == qid]


def resolve_runs(ws_con: Connection, run_ids: list[str]) -> list[dict[str, Any]]:
    """The runs these ids (or unique prefixes) name, each once, in the order given."""
    if not run_ids:
        raise UserError("case study", "names no runs", "pick a case with runs")
    store = RunStore(ws_con, read_only=True)
    runs: list[dict[str, Any]] = []
    for rid in run_ids:
        run = store.get(rid)
        if run["id"] not in {r["id"] for r in runs}:
            runs.append(run)
    return runs


def runs_of_question(ws_con: Connection, question_id: str) -> list[str]:
    """Every run id of a question (oldest first); one line naming the question when none."""
    rows = ws_con.execute(
        "SELECT id FROM runs WHERE question_id = ? ORDER BY started_at, id", [question_id]
    ).fetchall()
    if not rows:
        raise UserError(
            f"question {question_id!r}", "has no runs", "see `fintrade-tui runs list --json`"
        )
    return [r[0] for r in rows]


def load_case(
    ws_con: Connection,
    runs: list[dict[str, Any]],
    *,
    preferences: bool = True,
) -> CaseData:
    """Scores, audits, verdicts, questions and preferences of `runs` (see `resolve_runs`)."""
    scores_store = ScoreStore(ws_con, read_only=True)
    ids = [r["id"] for r in runs]
    by_run: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    measured = read_latest(ws_con)  # each judge model's agreement with people, if measured
    for s in scores_store.latest(run_ids=ids, status=None):
        if s["kind"] == "llm":
            model = (s.get("detail") or {}).get("judge_model")
            s["agreement"] = describe(agreement_for(measured, model, s["annotator"]))
        by_run[s["run_id"]].append(s)
    audits = {k: v for k, v in latest_audits(scores_store).items() if k in by_run}
    qids = sorted({r["question_id"] for r in runs}, key=natural_key)
    questions = {q.id: q for q in load_questions(ws_con, ids=qids)}
    prefs: list[dict[str, Any]] = []
    if preferences:
        from fintrade_tui.workspace.preferences import PreferenceStore

        wanted = set(ids)
        prefs = [
            p
            for p in PreferenceStore(ws_con, read_only=True).latest()
            if p["run_a"] in wanted and p["run_b"] in wanted
        ]
    checks = answer_checks(runs, questions)
    verdicts = run_verdicts(scores_store, audits, ids)
    return CaseData(runs, questions, qids, by_run, audits, prefs, checks, verdicts=verdicts)


def answer_checks(runs: list[dict[str, Any]], questions: dict[str, Any]) -> dict[str, Any]:
    """Each completed answer's match against its question's reference and, for a program
    question, its traces (scoring/answer_checks.py), as JSON-ready dicts."""
    from fintrade_tui.scoring.answer_checks import check_answer

    out = {}
    for r in runs:
        q = questions.get(r["question_id"])
        if q is not None and r.get("answer") and r.get("status") == "completed":
            out[r["id"]] = check_answer(q, r["answer"]).to_dict()
    return out


def known_quarter(
    store_con: duckdb.DuckDBPyConnection, ticker: str, as_of: date, lag_days: int | None = None
) -> dict[str, Any] | None:
    """The latest quarter of `ticker` whose figures were public by `as_of` (a `quarters` row),
    None when the store has no such quarter or no such ticker."""
    from fintrade_tui.store.company import DEFAULT_LAG, quarters

    try:
        qs = quarters(store_con, ticker, DEFAULT_LAG if lag_days is None else lag_days)
    except UserError:
        return None
    seen = [x for x in qs if x["as_of"] <= as_of]
    return seen[-1] if seen else None


def add_companies(
    data: CaseData, store_con: duckdb.DuckDBPyConnection, lag_days: int | None = None
) -> None:
    """The quarter view (fundamentals) of each question's first ticker at the question's as_of
    (the latest quarter filed by that day, never a later one) and its chart series over the
    months up to that day.
    A ticker the store does not hold is skipped (imported questions may name any company)."""
    from fintrade_tui.store.company import DEFAULT_LAG, quarter_view
    from fintrade_tui.store.company_chart import LEAD_DAYS, chart_series

    lag = DEFAULT_LAG if lag_days is None else lag_days
    for qid in data.question_ids:
        q = data.questions.get(qid)
        if q is None or not q.tickers or q.as_of is None:
            continue
        key = (q.tickers[0], q.as_of)
        if key in data.companies:
            continue
        known = known_quarter(store_con, key[0], q.as_of, lag)
        if known is None:
            continue
        view = quarter_view(store_con, key[0], known["key"], lag)
        # the months before the question's day, up to that close: what the model could see
        start = q.as_of - timedelta(days=LEAD_DAYS)
        series = chart_series(store_con, key[0], start, q.as_of, as_of=q.as_of)
        data.companies[key] = {"view": view, "series": series}
