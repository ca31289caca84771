"""Preferences room: blinded pairwise A/B/Tie preferences of people, and the LLM judge's pairwise
verdicts on the same pairs, both append-only in the workspace.

A preference records the two runs as they were SHOWN (A left, B right), the run the annotator
started from and the side it was drawn onto (from a recorded seed), the label in the shown frame
(A | B | tie) and normalised to the runs (`winner`: a run id or "tie"). An edit is a new row;
reports read the newest row per (annotator, unordered pair). A pair's judge verdict is judged in
both orders (tournament.round_robin) and cached per (pair, judge) so reports never re-judge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fintrade_tui.workspace.preferences import PreferenceStore, unordered_pair

if TYPE_CHECKING:
    from fintrade_tui.models.resolve import Model
    from fintrade_tui.workspace.connection_api import Connection


def verdict_row(question_id: str, judge: str, match: dict[str, Any]) -> dict[str, Any]:
    """A `pair_verdicts` row from a round_robin match of two runs. The pair's verdict is the
    winner both orders agree on; two orders that disagree make it a tie (position bias)."""
    x, y = unordered_pair(match["a"], match["b"])
    first, second = match["first"], match["second"]
    if (x, y) != (match["a"], match["b"]):  # stored with x shown as A in `first`
        first, second = second, first
    return {
        "question_id": question_id,
        "run_x": x,
        "run_y": y,
        "judge": judge,
        "first": first,
        "second": second,
        "consistent": bool(match["consistent"]),
        "winner": match["winner"] or "tie",
    }


async def judge_missing(
    cfg: Any,
    store: PreferenceStore,
    con: Connection,
    judge: str | Model,
    rows: list[dict[str, Any]],
    on_done: Callable[[], None] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Judge, in both orders, the pairs of `rows` (preferences) `judge` has no verdict on yet.
    Returns (verdicts saved, failures as {"pair", "error"}); one pair failing spares the rest."""
    from fintrade_tui.judging.asking import judge_model
    from fintrade_tui.judging.judge import pair_judge, prompt_hash
    from fintrade_tui.judging.tournament import round_robin
    from fintrade_tui.workspace.questions import get_question
    from fintrade_tui.workspace.run_records import RunStore

    model = judge_model(cfg, judge)  # once for all the pairs
    judge = model.name
    have = store.verdicts(judge)
    todo = sorted({(r["question_id"], *unordered_pair(r["run_a"], r["run_b"])) for r in rows})
    todo = [t for t in todo if t[1:] not in have]
    runs = RunStore(con)
    sem = asyncio.Semaphore(2)  # two pairs (four calls) at once
    saved: list[dict[str, Any]] = []
    failures: list[dict[str, str]] = []

    async def one(qid: str, x: str, y: str) -> None:
        try:
            question = get_question(con, qid)
            answers = {rid: runs.get(rid)["answer"] or "" for rid in (x, y)}
            async with sem:
                result = await round_robin([x, y], pair_judge(cfg, question, answers, model))
            row = verdict_row(qid, judge, result["matches"][0])
            row |= {"judge_model": model.string, "prompt_hash": prompt_hash()}
            saved.append(store.save_verdict(row))
        except Exception as exc:  # recorded per pair: the report shows it unjudged
            failures.append({"pair": f"{x} vs {y}", "error": str(exc).splitlines()[0][:200]})
        if on_done is not None:
            on_done()

    await asyncio.gather(*(one(*t) for t in todo))
    return saved, failures
