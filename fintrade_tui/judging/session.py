"""Judging session room: judge stored runs in bulk (audit, then LLM judge or panel, then the
record), and gather the rows the statistics need — the shared core of `judge`, `report` and
the TUI's Results screen. Every read keeps one judging protocol (`per_condition` unless
`protocol=` says `common`): scores of the two are never mixed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.judging.asking import judge_model
from fintrade_tui.judging.judge import JudgeInput, judge_run, panel_run
from fintrade_tui.kill_points import stop_at
from fintrade_tui.models.resolve import Model, local_string
from fintrade_tui.store.db import connect
from fintrade_tui.workspace.questions import load_questions
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.score_reader import mean_by_run
from fintrade_tui.workspace.scores import DIMENSIONS, LABEL_RUBRIC, PROTOCOLS, ScoreStore

if TYPE_CHECKING:
    import duckdb

    from fintrade_tui.workspace.connection_api import Connection


def audit_run(cfg: Config, run: dict[str, Any], q: Any) -> dict[str, Any] | None:
    """The deterministic numeric audit of one answer: against the store at the question's
    as_of, and against the evidence the question (or an imported run) supplies and its
    reference answer (audits/evidence.py); one merged result naming what it compared with."""
    if not run.get("answer"):
        return None
    if q.as_of or cfg.store.exists():  # an as_of question needs the store; else it may help
        with connect(cfg.store) as con:
            return audit_answer(cfg, run, q, con)
    return audit_answer(cfg, run, q, None)


def audit_answer(
    cfg: Config,
    run: dict[str, Any],
    q: Any,
    con: duckdb.DuckDBPyConnection | None,
    index: Any = None,
) -> dict[str, Any] | None:
    """`audit_run` on an open store connection (None: without the store, against the supplied
    evidence and reference only). `index`: the store's CompanyIndex, built once by a caller
    auditing many answers (re-scoring) instead of once per answer."""
    from fintrade_tui.audits.company import company_check
    from fintrade_tui.audits.evidence import audit_text, merge_audits
    from fintrade_tui.audits.numeric import audit

    answer = run.get("answer")
    if not answer:
        return None
    store = audit(answer, q, con, cfg.judging.audit_tolerance, index) if con and q.as_of else None
    companies = company_check(answer, q.tickers, con, index)
    texts = supplied_texts(q, run)
    # a benchmark's own reference answer is not audited against itself
    reference = None if run.get("condition") == "reference" else q.reference_answer
    text = None
    if texts or (reference and reference.strip()):
        text = audit_text(answer, texts, reference, cfg.judging.audit_tolerance)
    merged = merge_audits(store, text) if store or text else None
    if companies and (merged or companies["off_company"]):
        merged = (merged or {"claims": [], "summary": {}, "against": []}) | {"companies": companies}
    return merged


def supplied_texts(q: Any, run: dict[str, Any]) -> list[str]:
    """The evidence supplied with a question (context, tables) or with an imported run, each
    text once: not the store's values (the store audit has them) nor retrieved chunks."""
    texts: list[str] = []

    def add(v: Any) -> None:
        t = v if isinstance(v, str) else json.dumps(v, default=str)
        if t and t.strip() and t not in texts:
            texts.append(t)

    for s in (q.oracle.get("supplied") or {}).values():
        add(s.get("value") if isinstance(s, dict) else s)
    for v in (q.extra.get("context") or {}).values():
        add(v)
    if "table" in q.extra:
        add(q.extra["table"])
    for item in (run.get("evidence") or {}).get("items") or []:
        if item.get("track") == "context":
            add(item.get("text") or "")
    return texts


def runs_to_judge(
    ws: Connection,
    kind: str,
    judge: str,
    run_ids: list[str] | None = None,
    batch: str | None = None,
    force: bool = False,
    with_reference: bool = False,
    protocol: str = "per_condition",
) -> list[dict[str, Any]]:
    """Completed runs (optionally these ids/prefixes or this batch) not yet scored ok by
    `judge` under `kind` and `protocol`, unless `force`. A benchmark's reference answers (condition
    `reference`) are judged when named by id or `with_reference`, not by default."""
    runs = RunStore(ws).list(status=COMPLETED, batch=batch, limit=1_000_000)
    if run_ids:
        runs = [r for r in runs if any(r["id"].startswith(p) for p in run_ids)]
    elif not with_reference:
        runs = [r for r in runs if r["condition"] != "reference"]
    if force:
        return runs
    latest = ScoreStore(ws).latest(kind=kind, protocol=protocol)
    done = {s["run_id"] for s in latest if s["annotator"] == judge}
    return [r for r in runs if r["id"] not in done]


async def judge_runs(
    cfg: Config,
    ws: Connection,
    runs: list[dict[str, Any]],
    panel: bool = False,
    judge: str | Model | None = None,
    concurrency: int = 2,
    on_done: Callable[[dict[str, Any]], None] | None = None,
    protocol: str = "per_condition",
) -> list[dict[str, Any]]:
    """Audit and judge each run; every result (ok or failure) is saved as it arrives.

    `protocol` common: the judge sees the question's canonical evidence (built once per
    question here) and the audit leaves out the run's own evidence, so nothing the judge
    reads depends on the run's condition but its answer."""
    from fintrade_tui.judging.common_evidence import CommonEvidenceCache

    check_protocol(protocol, panel)
    judge = judge_model(cfg, judge)  # once for all the runs
    common = CommonEvidenceCache(cfg) if protocol == "common" else None
    scores = ScoreStore(ws)
    questions = {q.id: q for q in load_questions(ws, ids=sorted({r["question_id"] for r in runs}))}
    gate = asyncio.Semaphore(concurrency)
    saved: list[dict[str, Any]] = []

    async def one(run: dict[str, Any]) -> None:
        q = questions.get(run["question_id"])
        if q is None:
            return
        async with gate:
            if common is None:
                j = JudgeInput(run, q, await asyncio.to_thread(audit_run, cfg, run, q))
            else:
                bare = run | {"evidence": None}  # its condition's evidence: not the judge's
                report = await asyncio.to_thread(audit_run, cfg, bare, q)
                j = JudgeInput(run, q, report, await common.get(q))
            score = await (panel_run if panel else judge_run)(cfg, j, judge)
        row = scores.save(score)
        stop_at("judge.verdict-saved", run=run["id"])
        saved.append(row)
        if on_done:
            on_done(row)

    await asyncio.gather(*(one(r) for r in runs))
    return saved


def check_protocol(protocol: str, panel: bool = False) -> None:
    """A known protocol; the SECQUE panel is judged per condition only."""
    if protocol not in PROTOCOLS:
        raise UserError(f"--protocol {protocol}", "is unknown", f"use {' or '.join(PROTOCOLS)}")
    if panel and protocol != "per_condition":
        raise UserError("--panel", "has no common-evidence prompt", "drop --protocol common")


def llm_judges(ws: Connection, protocol: str = "per_condition") -> list[dict[str, Any]]:
    """Who gave the latest LLM scores: registry name, model string, how many runs, whether
    the judge ran on this machine (`local/...`), so a report can label such scores, and how far
    that judge model agreed with people (`calibrate-judge`; None and "unmeasured" if never)."""
    seen: dict[tuple[str, str], int] = {}
    for s in ScoreStore(ws).latest(kind="llm", protocol=protocol):
        key = (s["annotator"], (s.get("detail") or {}).get("judge_model") or "?")
        seen[key] = seen.get(key, 0) + 1
    from fintrade_tui.workspace.judge_agreement import agreement_for, describe, read_latest

    measured = read_latest(ws)
    out = []
    for (name, model), n in sorted(seen.items()):
        found = agreement_for(measured, model, name)
        line = describe(found)
        out.append({"judge": name, "model": model, "runs": n, "local": local_string(model),
                    "agreement": _agreement_fields(found), "agreement_line": line})  # fmt: skip
    return out


def _agreement_fields(found: dict[str, Any] | None) -> dict[str, Any] | None:
    """The JSON of a judge's measured agreement with people (`report --json`), or None."""
    if found is None:
        return None
    keys = ("labelled_set", "n", "decided", "agreement", "kappa", "seconds_per_answer")
    return {k: found[k] for k in keys} | {"measured_at": str(found["measured_at"])}


def agreement_pairs(ws: Connection, protocol: str = "per_condition") -> list[dict[str, Any]]:
    """(dimension, human, judge) for every run both a person and the LLM judge (its scores
    under `protocol`) scored."""
    store = ScoreStore(ws)
    human_rows = store.latest(kind="human")
    human = mean_by_run(human_rows)
    judge = mean_by_run(store.latest(kind="llm", protocol=protocol))
    pairs = []
    for rid in sorted(set(human) & set(judge)):
        for d in DIMENSIONS:
            h, j = human[rid].get(d), judge[rid].get(d)
            if h is not None and j is not None:
                pairs.append({"dimension": d, "human": round(h), "judge": round(j), "run_id": rid})
    # a label (correct 5, partial 3, incorrect/refusal 1) against the judge's accuracy
    labelled: dict[str, list[int]] = {}
    for s in human_rows:
        if (v := LABEL_RUBRIC.get((s.get("label") or "").lower())) is not None:
            labelled.setdefault(s["run_id"], []).append(v)
    for rid in sorted(labelled):
        j = judge.get(rid, {}).get("accuracy")
        if j is not None:
            h = round(sum(labelled[rid]) / len(labelled[rid]))
            pairs.append({"dimension": "label", "human": h, "judge": round(j), "run_id": rid})
    return pairs


def panel_rows(ws: Connection) -> list[dict[str, Any]]:
    """Panel finals per model × condition, with strict and normalized accuracy."""
    from fintrade_tui.judging.panel import panel_accuracy

    store = ScoreStore(ws)
    latest = store.latest(kind="panel")
    if not latest:
        return []
    runs = {r["id"]: r for r in RunStore(ws).list(limit=1_000_000)}
    groups: dict[tuple[str, str], list[int]] = {}
    for s in latest:
        r = runs.get(s["run_id"])
        if r is not None and "final" in s["detail"]:
            groups.setdefault((r["model"], r["condition"]), []).append(s["detail"]["final"])
    return [
        {"model": m, "condition": c, **panel_accuracy(finals)}
        for (m, c), finals in sorted(groups.items())
    ]
