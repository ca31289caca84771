"""The regression set of verdicts this project wrote (benchmarks/verdicts/): whole, from enough
public sources, FinanceBench nowhere in it — and the checks still meet issue 40's goals on it,
on the tuned sources and on the held-out one (a change that loses what the checks read fails
here, not only on the benchmarks page). Agreement with people outside the project is
tests/unit/test_people_verdicts.py."""

from __future__ import annotations

import json
from collections import Counter

from benchmarks import bench_checks as bc
from benchmarks.people_verdicts import scores

GOALS = bc.GOALS


def test_every_item_has_one_verdict_from_enough_public_sources() -> None:
    items = [json.loads(x) for x in (bc.HERE / "items.jsonl").read_text().splitlines() if x]
    labelled = bc.load()
    assert len(labelled) == len(items) >= 400
    assert Counter(r["id"] for r in labelled).most_common(1)[0][1] == 1
    assert {r["person"] for r in labelled} <= {"correct", "incorrect", "refusal"}
    sources = Counter(r["source"] for r in labelled)
    assert len(sources) >= 4 and bc.HELD_OUT in sources
    assert all(r["licence"] and r["origin"] for r in labelled)
    text = json.dumps(items).lower()
    assert "financebench" not in text and "patronus" not in text


def test_the_checks_meet_the_goals_on_tuned_and_held_out_sources() -> None:
    rows, _ = bc.run(bc.load(), "tolerance")
    tuned = scores([r for r in rows if r["source"] != bc.HELD_OUT])
    held = scores([r for r in rows if r["source"] == bc.HELD_OUT])
    for s in (tuned, held):
        assert s["precision"] >= GOALS["precision"], s
        assert s["recall"] >= GOALS["recall"], s
        assert s["kappa"] >= GOALS["kappa"], s
        assert s["refusals called correct"] == 0


def test_the_figures_reader_meets_its_goals_on_the_hand_labels() -> None:
    *_, total = bc.figure_scores()
    assert total[0] == "all"
    precision, recall = float(total[4]), float(total[5])
    assert precision >= 0.95 and recall >= 0.9
