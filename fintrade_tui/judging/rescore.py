"""Re-scoring room: the deterministic checks applied again to stored or imported runs — the
answer matcher (scoring/answer_checks.py: the tolerance mode read as a person reads, or the
mode asked for: `benchmark` for each question's own rule) and the numeric audit
(judging/session.py `audit_answer`) — without calling any model. `judge --rescore` and the
Results screen's `m` key run it; `--with-llm` then asks the
LLM judge too (judging/session.py `judge_runs`, every selected run again).

Every re-scored run gets one new score of kind `match` (annotator `matcher`), appended as a new
version: the earlier versions stay in the history, reads take the latest. Its label is
`correct` (verdict equal), `refusal` (the answer declines: refused) or `incorrect` (not_equal,
no_number, unfinished); a question without a reference (no_reference), with an open-ended
reference (open: a claim-level line), a reference stating no figure (deferred) or an answer
giving a range that holds the reference (in_range) gets no label,
so the run does not count in the matrix, but its audit is kept. The detail holds {mode,
verdict, reason, figure, reference, answer_value, reference_value, audit} (tatqa adds em, f1,
scale_ok); `audit` is the numeric audit as the LLM judge's record keeps it, which the failure
filters and exports read (failures.latest_audits).

With `corrected`, a run whose question's reference is disputed with a correction
(workspace/disputes.py) is scored against the corrected reference: its label is that verdict,
and the detail adds `against: "corrected"`, `dispute` (question id and version) and
`published` (the verdict, label and reason against the published reference): both shown.

Fast and all-or-nothing: one read of the runs and one of the questions, one store connection
and one company index for every audit, pure-python matching chunk by chunk, then one
transaction appending one batch per chunk — a failure or a kill before its commit leaves the
workspace as it was.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.scoring.answer_checks import (
    BENCHMARK,
    DEFAULT_MODE,
    check_match,
    mode_for,
    reference_for,
)
from fintrade_tui.scoring.answer_match import MODES
from fintrade_tui.scoring.verdict import (
    DEFERRED,
    EQUAL,
    NO_NUMBER,
    NO_REFERENCE,
    REFUSED,
    UNDECIDED,
)
from fintrade_tui.workspace.questions import load_questions
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.scores import Score, ScoreStore, append_scores

if TYPE_CHECKING:
    import duckdb

    from fintrade_tui.models.resolve import Model
    from fintrade_tui.workspace.connection_api import Connection

MATCH_KIND, MATCHER = "match", "matcher"  # the score kind and annotator re-scoring writes
READABLE = (DEFERRED, NO_NUMBER)  # deferred verdicts a model may read the conclusion of
CORRECT = (EQUAL,)  # verdicts labelled correct


def label_of(verdict: str) -> str | None:
    """A matcher verdict as a score label: correct, refusal, incorrect — or none where the
    matcher defers (no reference, an open-ended reference, a reference with no figure)."""
    if verdict in UNDECIDED:
        return None
    if verdict == REFUSED:
        return "refusal"
    return "correct" if verdict in CORRECT else "incorrect"


CHUNK = 500  # runs matched between progress ticks, and rows per insert


@dataclass
class Selection:
    """The runs to re-score and every question of the workspace (one read of each)."""

    runs: list[dict[str, Any]]
    questions: dict[str, Any]


@dataclass
class Outcome:
    """What a re-scoring appended: the stored rows and the counts `--json` reports."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    store: bool = False  # the audit compared figures with the market-data store

    def summary(self) -> dict[str, Any]:
        verdicts = Counter(r["detail"]["verdict"] for r in self.rows)
        correct = sum(r["label"] == "correct" for r in self.rows)
        scored = sum(r["label"] is not None for r in self.rows)
        audits = [r["detail"].get("audit") for r in self.rows]
        return {
            "runs": len(self.rows),
            "scored": scored,
            "correct": correct,
            "incorrect": sum(r["label"] == "incorrect" for r in self.rows),
            "refusal": sum(r["label"] == "refusal" for r in self.rows),
            "no_reference": verdicts.get(NO_REFERENCE, 0),
            "accuracy": round(correct / scored, 4) if scored else None,
            "verdicts": dict(sorted(verdicts.items())),
            "modes": dict(sorted(Counter(r["detail"]["mode"] for r in self.rows).items())),
            "audited": sum(a is not None for a in audits),
            "contradicted": sum(bool(a and _audit_counts(a)["CONTRADICTED"]) for a in audits),
            "store": self.store,
            "against_corrected": sum(r["detail"].get("against") == "corrected" for r in self.rows),
            "seconds": round(self.seconds, 2),
        }


def select_runs(
    ws: Connection,
    run_ids: list[str] | None = None,
    batch: str | None = None,
    source: str | None = None,
    with_reference: bool = False,
) -> Selection:
    """Completed runs (these ids or prefixes, this batch, this question set); a benchmark's
    reference answers only when named by id or `with_reference`. Nothing selected is one line."""
    runs = RunStore(ws).list(status=COMPLETED, batch=batch, limit=1_000_000_000)
    questions = {q.id: q for q in load_questions(ws)}
    if run_ids:
        for p in run_ids:
            if not any(r["id"].startswith(p) for r in runs):
                raise UserError(f"--runs {p}", "matches no completed run", "see `runs list`")
        runs = [r for r in runs if any(r["id"].startswith(p) for p in run_ids)]
    elif not with_reference:
        runs = [r for r in runs if r["condition"] != "reference"]
    runs = [r for r in runs if r["question_id"] in questions]  # a run's question is needed
    if source:
        sets = sorted({q.source for q in questions.values() if q.source})
        if source not in sets:
            raise UserError(f"--source {source}", "is no question set here", _one_of(sets))
        runs = [r for r in runs if questions[r["question_id"]].source == source]
    if not runs:
        where = f" in batch {batch}" if batch else ""
        where += f" of the {source} questions" if source else ""
        fix = "check the selectors (see `runs list`)" if where else "run or import some first"
        raise UserError("judge --rescore", f"no completed run{where}", fix)
    runs.sort(key=lambda r: r["id"])  # a stable order: results and progress read the same
    return Selection(runs, questions)


def _one_of(names: list[str]) -> str:
    return f"use one of {', '.join(names)}" if names else "import or add questions first"


def rescore(
    cfg: Config,
    ws: Connection,
    sel: Selection,
    mode: str | None = None,
    store_con: duckdb.DuckDBPyConnection | None = None,
    audit: bool = True,
    on_progress: Callable[[int], None] | None = None,
    chunk: int = CHUNK,
    corrected: bool = False,
    reader: Model | None = None,
) -> Outcome:
    """Match (and audit) every selected run, then append one `match` score per run in one
    transaction. `mode` None: tolerance (read as a person reads); `benchmark`: each question's
    own rule. `store_con`: the market-data store the audit compares with (None: supplied
    evidence and reference only). `corrected`: score against disputed references'
    corrections (the module docstring). `reader`: a model that reads the conclusion of each
    answer the rules defer on (`read_by_model`); None: no model is called."""
    from fintrade_tui.judging.session import audit_answer
    from fintrade_tui.workspace.disputes import DisputeStore

    if mode is not None and mode not in (*MODES, BENCHMARK):
        raise UserError(
            f"--mode {mode}", "is unknown", f"use one of {', '.join(MODES)}, {BENCHMARK}"
        )
    if reader is not None and mode not in (None, DEFAULT_MODE):
        why = "reads as a person reads (tolerance mode)"
        raise UserError("--with-extraction", why, "drop --mode, or --mode tolerance")
    t0 = time.perf_counter()
    index = None
    if audit and store_con is not None:
        from fintrade_tui.questions.companies import CompanyIndex

        index = CompanyIndex(store_con)  # once: building it costs more than an audit
    disputes = DisputeStore(ws, read_only=True).latest() if corrected else {}
    parts: list[list[Score]] = []
    for at in range(0, len(sel.runs), chunk):
        part = sel.runs[at : at + chunk]
        scores = []
        for run in part:
            q = sel.questions[run["question_id"]]
            report = audit_answer(cfg, run, q, store_con, index) if audit else None
            score = match_score(cfg, run, q, mode, report)
            if reader is not None and score.detail.get("verdict") in READABLE:
                score = read_by_model(cfg, run, q, reader, score)
            if (d := disputes.get(q.id)) and d["corrected"]:
                score = against_correction(cfg, run, q, mode, report, d, score)
            scores.append(score)
        parts.append(scores)
        if on_progress:
            on_progress(len(part))
    store = ScoreStore(ws)
    out = Outcome(store=audit and store_con is not None)
    with store.transaction() as cur:  # all chunks or none
        for scores in parts:
            out.rows += append_scores(cur, scores)
    out.seconds = time.perf_counter() - t0
    return out


def rescore_with_store(
    cfg: Config,
    ws: Connection,
    sel: Selection,
    mode: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    corrected: bool = False,
    reader: Model | None = None,
) -> Outcome:
    """`rescore` with the audit reading the market-data store when there is one."""
    from fintrade_tui.store.db import connect

    more: dict[str, Any] = {"on_progress": on_progress, "corrected": corrected, "reader": reader}
    if not cfg.store.exists():
        return rescore(cfg, ws, sel, mode, None, **more)
    with connect(cfg.store) as store:
        return rescore(cfg, ws, sel, mode, store, **more)


def rejudge(
    cfg: Config,
    ws: Connection,
    sel: Selection,
    judge: Model,
    panel: bool = False,
    concurrency: int = 2,
    protocol: str = "per_condition",
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """`--with-llm`: the LLM judge (or panel) over every selected run again (as `judge
    --force`); its scores are saved one by one as they arrive."""
    import asyncio

    from fintrade_tui.judging.session import judge_runs

    return asyncio.run(judge_runs(cfg, ws, sel.runs, panel, judge, concurrency, on_done, protocol))


def judged_summary(judged: list[dict[str, Any]] | None, llm: dict[str, Any]) -> dict | None:
    """The `llm` field of `--json`: None without --with-llm."""
    if judged is None:
        return None
    ok = sum(r["status"] == "ok" for r in judged)
    keep = {k: llm[k] for k in ("protocol", "panel")} | {"judge": llm["judge"].name}
    return keep | {"judged": ok, "failures": len(judged) - ok}


def summary_title(s: dict[str, Any]) -> str:
    """The CLI table's title: how many, how fast, how many correct, what the audit read."""
    acc = "—" if s["accuracy"] is None else f"{100 * s['accuracy']:.1f}%"
    against = "the store and supplied evidence" if s["store"] else "supplied evidence only"
    return (
        f"{s['runs']} runs re-scored in {s['seconds']:.1f} s ({s['mode']} mode): {s['scored']}"
        f" with a verdict, {acc} correct; audit against {against}, {s['contradicted']} with"
        " a contradicted figure"
    )


def match_score(
    cfg: Config, run: dict[str, Any], q: Any, mode: str | None, report: dict[str, Any] | None
) -> Score:
    """The `match` score of one run: the matcher's verdict as a label, its reason, and the
    audit `report` in the detail."""
    used = mode_for(q) if mode == BENCHMARK else (mode or DEFAULT_MODE)
    try:
        m = check_match(q, run.get("answer") or "", cfg, used)
    except UserError as exc:  # e.g. a malformed TAT-QA annotation: said, not scored
        said = {"mode": used, "verdict": NO_REFERENCE, "reason": str(exc).splitlines()[0]}
        return Score(run["id"], MATCH_KIND, MATCHER, detail=said | {"audit": report})
    label = label_of(m.verdict)
    detail: dict[str, Any] = {
        "mode": m.mode,
        "verdict": m.verdict,
        "reason": m.reason,
        "figure": m.answer_figure.text if m.answer_figure is not None else None,
        "reference": reference_for(q, used),
        "answer_value": m.answer_value,
        "reference_value": m.reference_value,
        "audit": report,
    }
    if m.em is not None:
        detail |= {"em": m.em, "f1": m.f1, "scale_ok": m.scale_ok}
    return Score(run["id"], MATCH_KIND, MATCHER, label=label, detail=detail)


def read_by_model(cfg: Config, run: dict[str, Any], q: Any, reader: Model, score: Score) -> Score:
    """Where the rules defer: the model copies the answer's conclusion (judging/extraction.py)
    and the rules decide on it. The rules' own verdict stays in the detail (`rules`), with what
    the model read (`extraction`: kind, final_answer, model, seconds, error)."""
    import asyncio

    from fintrade_tui.judging.extraction import extract, extracted_match

    answer = run.get("answer") or ""
    got = asyncio.run(extract(cfg, reader, q.text, answer))
    m = extracted_match(q, got, cfg, answer)
    read = {"kind": got.kind, "final_answer": got.final_answer, "model": reader.string,
            "seconds": round(got.seconds, 2), "error": got.error}  # fmt: skip
    rules = {"verdict": score.detail["verdict"], "reason": score.detail["reason"]}
    detail = score.detail | {"verdict": m.verdict, "reason": m.reason, "extraction": read,
                             "rules": rules}  # fmt: skip
    return Score(run["id"], MATCH_KIND, MATCHER, label=label_of(m.verdict), detail=detail)


def corrected_question(q: Any, corrected: str) -> Any:
    """The question with its reference replaced by a correction: the benchmark's own figures
    (FinQA's exe_ans, TAT-QA's answer) give way to it, its answer type and scale stay."""
    from dataclasses import replace

    extra = {k: v for k, v in (q.extra or {}).items() if k not in ("exe_ans", "answer")}
    return replace(q, reference_answer=corrected, extra=extra)


def against_correction(
    cfg: Config,
    run: dict[str, Any],
    q: Any,
    mode: str | None,
    report: dict[str, Any] | None,
    dispute: dict[str, Any],
    published: Score,
) -> Score:
    """The run's `match` score against the dispute's corrected reference, the verdict
    against the published one kept beside it."""
    score = match_score(cfg, run, corrected_question(q, dispute["corrected"]), mode, report)
    was = published.detail
    score.detail |= {
        "against": "corrected",
        "dispute": f"{q.id} v{dispute['version']}",
        "published": {
            "verdict": was.get("verdict"),
            "label": published.label,
            "reason": was.get("reason"),
            "reference": was.get("reference"),
        },
    }
    return score


def _audit_counts(report: dict[str, Any]) -> dict[str, int]:
    s = report.get("summary") or {}
    return {k: int(s.get(k, 0)) for k in ("SUPPORTED", "CONTRADICTED", "NOT_FOUND")}


def result_rows(out: Outcome, sel: Selection) -> list[dict[str, Any]]:
    """One row per re-scored run, as `judge --rescore --json` lists them."""
    runs = {r["id"]: r for r in sel.runs}
    rows = []
    for s in out.rows:
        r, d = runs[s["run_id"]], s["detail"]
        audit = d.get("audit")
        rows.append(
            {
                "run_id": s["run_id"],
                "question_id": r["question_id"],
                "model": r["model"],
                "condition": r["condition"],
                "score_id": s["id"],
                "version": s["version"],
                "mode": d["mode"],
                "verdict": d["verdict"],
                "label": s["label"],
                "reason": d["reason"],
                "audit": _audit_counts(audit) if audit else None,
            }
        )
    return rows


def accuracy_by_model(out: Outcome, sel: Selection) -> list[dict[str, Any]]:
    """Share labelled correct per model × condition (runs with a verdict), for the CLI table."""
    runs = {r["id"]: r for r in sel.runs}
    groups: dict[tuple[str, str], list[int]] = {}
    for s in out.rows:
        if s["label"] is not None:
            r = runs[s["run_id"]]
            groups.setdefault((r["model"], r["condition"]), []).append(s["label"] == "correct")
    return [
        {"model": m, "condition": c, "n": len(v), "correct %": round(100 * sum(v) / len(v), 1)}
        for (m, c), v in sorted(groups.items())
    ]
