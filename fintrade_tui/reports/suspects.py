"""Suspect references of a workspace: the rules audits/suspects.py applies to each question,
and two that read the workspace's runs and scores —
- `oracle_consensus`: two or more models' Oracle answers agree on one figure and the
  reference says another (the matcher's values, `judge --rescore`);
- `store_disagrees`: the reference answer's numeric audit contradicts the store or its
  evidence (`judge --rescore --with-reference`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fintrade_tui.audits.suspects import close, question_suspects
from fintrade_tui.reports.failures import latest_audits
from fintrade_tui.workspace.questions import load_questions
from fintrade_tui.workspace.run_records import COMPLETED, RunStore
from fintrade_tui.workspace.scores import ScoreStore

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection


def workspace_suspects(ws: Connection) -> dict[str, list[dict[str, str]]]:
    """question id -> the rules that fire for it, from the question and the workspace's runs
    and scores."""
    out: dict[str, list[dict[str, str]]] = {}
    for q in load_questions(ws):
        if found := question_suspects(q):
            out[q.id] = found
    runs = RunStore(ws, read_only=True).list(status=COMPLETED, limit=1_000_000_000)
    scores = ScoreStore(ws, read_only=True)
    match = {s["run_id"]: s["detail"] or {} for s in scores.latest(kind="match")}
    oracle: dict[str, dict[str, list[float]]] = {}
    refs: dict[str, float] = {}
    for r in runs:
        d = match.get(r["id"]) or {}
        if r["condition"] == "oracle" and isinstance(d.get("answer_value"), int | float):
            oracle.setdefault(r["question_id"], {}).setdefault(r["model"], []).append(
                d["answer_value"]
            )
            if isinstance(d.get("reference_value"), int | float):
                refs[r["question_id"]] = d["reference_value"]
    for qid, by_model in oracle.items():
        values = [v for vs in by_model.values() for v in vs]
        ref = refs.get(qid)
        if len(by_model) < 2 or ref is None:
            continue
        if all(close(v, values[0]) for v in values) and not close(values[0], ref, 0.02):
            why = f"{len(by_model)} models' Oracle answers agree on {values[0]:g}; the reference"
            out.setdefault(qid, []).append({"rule": "oracle_consensus", "why": f"{why} {ref:g}"})
    audits = latest_audits(scores)
    for r in runs:
        if r["model"] != "reference":
            continue
        bad = [c for c in (audits.get(r["id"]) or {}).get("claims") or []]
        bad = [c for c in bad if c.get("verdict") == "CONTRADICTED"]
        if bad:
            what = ", ".join(str(c.get("text") or c.get("value")) for c in bad[:3])
            why = f"the reference answer's audit contradicts {what}"
            out.setdefault(r["question_id"], []).append({"rule": "store_disagrees", "why": why})
    return out
