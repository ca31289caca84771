"""SECQUE panel aggregation and the round-robin pairwise tournament."""

from __future__ import annotations

import asyncio
import json

import pytest

from fintrade_tui.judging.panel import (
    PANEL_SCHEMA,
    panel_accuracy,
    panel_score,
    parse_vote,
    parse_vote_with_reason,
)
from fintrade_tui.judging.tournament import (
    PAIR_SCHEMA,
    parse_pair,
    parse_pair_with_reason,
    round_robin,
)

# --- panel ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "total", "final"),
    [
        ([2, 2, 2, 0, 0], 6, 2),  # S = full -> 2
        ([2, 2, 2, 2, 2], 10, 2),
        ([2, 2, 1, 0, 0], 5, 1),  # full - 1 -> 1
        ([1, 1, 1, 1, 0], 4, 1),  # S = partial -> 1
        ([1, 1, 1, 0, 0], 3, 0),  # partial - 1 -> 0
        ([0, 0, 0, 0, 0], 0, 0),
    ],
)
def test_panel_thresholds(votes: list[int], total: int, final: int) -> None:
    r = panel_score(votes)
    assert (r["sum"], r["final"], r["n"]) == (total, final, 5)
    assert r["votes"] == votes


def test_panel_custom_thresholds() -> None:
    assert panel_score([2, 2, 2], full=5, partial=3)["final"] == 2
    assert panel_score([1, 1, 1], full=5, partial=3)["final"] == 1
    assert panel_score([2], full=2, partial=1)["final"] == 2


@pytest.mark.parametrize("votes", [[2, 3, 0], [-1, 2], [1.5, 1], [True, 2], ["2", 1], []])
def test_panel_rejects_bad_votes(votes: list) -> None:
    with pytest.raises(ValueError):
        panel_score(votes)


def test_panel_rejects_inverted_thresholds() -> None:
    with pytest.raises(ValueError, match="partial"):
        panel_score([1, 1], full=3, partial=4)


def test_panel_accuracy() -> None:
    r = panel_accuracy([2, 2, 1, 0, 2, 1, 0, 2])
    assert r["n"] == 8
    assert r["strict"] == pytest.approx(4 / 8)
    assert r["normalized"] == pytest.approx((2 * 4 + 2) / 16)  # mean 1.25 / 2
    assert r["counts"] == {0: 2, 1: 2, 2: 4}
    assert panel_accuracy([])["strict"] is None
    with pytest.raises(ValueError):
        panel_accuracy([2, 5])


def test_panel_schema_shape() -> None:
    assert PANEL_SCHEMA["properties"]["score"]["enum"] == [0, 1, 2]
    assert set(PANEL_SCHEMA["required"]) == {"score", "reason"}
    json.dumps(PANEL_SCHEMA)  # serializable for response_format


def test_parse_vote_valid() -> None:
    assert parse_vote('{"score": 2, "reason": "matches the filing"}') == 2
    assert parse_vote(' {"reason": "off by a year", "score": 0} \n') == 0
    assert parse_vote('```json\n{"score": 1, "reason": "partly"}\n```') == 1


def test_parse_vote_accepts_raw_newline_in_string() -> None:
    text = '{"score": 1, "reason": "first line\nsecond line"}'
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # what a strict parser would do
    assert parse_vote_with_reason(text) == (1, "first line\nsecond line")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"score": 35, "reason": "x"}', "0, 1 or 2"),
        ('{"score": -1, "reason": "x"}', "0, 1 or 2"),
        ('{"score": "2", "reason": "x"}', "0, 1 or 2"),
        ('{"score": true, "reason": "x"}', "0, 1 or 2"),
        ('{"reason": "no score"}', "missing field(s) score"),
        ('{"score": 2}', "missing field(s) reason"),
        ('{"score": 2, "reason": 7}', "reason must be a string"),
        ("[2]", "JSON object"),
        ('{"score": 2, "reason": "unterminated', "not valid JSON"),
        ("", "not valid JSON"),
    ],
)
def test_parse_vote_rejects_malformed(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_vote(text)


# --- tournament ----------------------------------------------------------------------------

ANSWERS = {
    "run-a": "x" * 10,
    "run-b": "x" * 30,
    "run-c": "x" * 20,
    "run-d": "x" * 20,
}


async def longer_wins(x: str, y: str) -> str:
    lx, ly = len(ANSWERS[x]), len(ANSWERS[y])
    return "A" if lx > ly else "B" if ly > lx else "tie"


async def always_a(x: str, y: str) -> str:
    return "A"


def test_round_robin_with_a_consistent_judge() -> None:
    r = asyncio.run(round_robin(list(ANSWERS), longer_wins))
    # 4 items: 6 pairs, 12 calls; each item plays 6 calls
    assert (r["n_pairs"], r["n_calls"]) == (6, 12)
    assert r["points"] == {"run-a": 0.0, "run-b": 6.0, "run-c": 3.0, "run-d": 3.0}
    assert sum(r["points"].values()) == 12
    assert r["ranking"] == ["run-b", "run-c", "run-d", "run-a"]  # c/d tie broken by id
    assert r["consistency"] == 1.0
    cd = next(m for m in r["matches"] if {m["a"], m["b"]} == {"run-c", "run-d"})
    assert (cd["first"], cd["second"], cd["winner"]) == ("tie", "tie", "tie")
    ab = next(m for m in r["matches"] if (m["a"], m["b"]) == ("run-a", "run-b"))
    assert (ab["first"], ab["second"], ab["winner"], ab["consistent"]) == (
        "B",
        "A",
        "run-b",
        True,
    )


def test_position_biased_judge_gives_equal_points_and_no_consistency() -> None:
    r = asyncio.run(round_robin(["z", "y", "x"], always_a))
    assert r["points"] == {"z": 2.0, "y": 2.0, "x": 2.0}
    assert r["ranking"] == ["x", "y", "z"]
    assert r["consistency"] == 0.0
    assert all(m["winner"] is None and not m["consistent"] for m in r["matches"])


def test_round_robin_respects_the_concurrency_limit() -> None:
    state = {"now": 0, "peak": 0, "calls": []}

    async def slow(x: str, y: str) -> str:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        state["calls"].append((x, y))
        await asyncio.sleep(0)  # a yield, not a wait: the calls admitted meanwhile overlap
        state["now"] -= 1
        return "tie"

    items = [f"r{i}" for i in range(6)]
    r = asyncio.run(round_robin(items, slow, limit=3))
    assert state["peak"] == 3
    assert len(state["calls"]) == 30 == r["n_calls"]
    assert len(set(state["calls"])) == 30  # every ordered pair exactly once
    assert set(r["points"].values()) == {5.0}
    assert r["consistency"] == 1.0


def test_round_robin_edge_cases() -> None:
    r = asyncio.run(round_robin(["only"], always_a))
    assert (r["points"], r["ranking"], r["matches"], r["consistency"]) == (
        {"only": 0.0},
        ["only"],
        [],
        None,
    )
    with pytest.raises(ValueError, match="unique"):
        asyncio.run(round_robin(["a", "a"], always_a))
    with pytest.raises(ValueError, match="limit"):
        asyncio.run(round_robin(["a", "b"], always_a, limit=0))


def test_round_robin_rejects_an_invalid_verdict() -> None:
    async def rambling(x: str, y: str) -> str:
        return "both are fine"

    with pytest.raises(ValueError, match="'A', 'B' or 'tie'"):
        asyncio.run(round_robin(["a", "b"], rambling))


def test_parse_pair() -> None:
    assert PAIR_SCHEMA["properties"]["winner"]["enum"] == ["A", "B", "tie"]
    assert parse_pair('{"winner": "A", "reason": "cites the filing"}') == "A"
    assert parse_pair('{"winner": "b", "reason": "x"}') == "B"
    assert parse_pair_with_reason('{"winner": "Tie", "reason": "same\nanswer"}') == (
        "tie",
        "same\nanswer",
    )
    for bad in ('{"winner": "C", "reason": "x"}', '{"reason": "x"}', "A", '{"winner": 1}'):
        with pytest.raises(ValueError):
            parse_pair(bad)
