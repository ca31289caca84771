"""Judging room: round-robin pairwise tournament between competitors (e.g. runs).

Every unordered pair is judged twice, once in each order, because LLM judges favour a
position; a pair whose two verdicts agree is "consistent". Each call is worth one point:
the winner takes it, a tie splits it 0.5 / 0.5.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from itertools import combinations

from fintrade_tui.judging.panel import choice_schema, load_json_object

VERDICTS = ("A", "B", "tie")

PAIR_SCHEMA: dict = choice_schema("winner", "string", VERDICTS)


def normalize_verdict(value: object) -> str:
    """The verdict as "A", "B" or "tie" (case and spaces forgiven); ValueError otherwise."""
    if isinstance(value, str):
        v = value.strip()
        if v.upper() in ("A", "B"):
            return v.upper()
        if v.lower() == "tie":
            return "tie"
    raise ValueError(f"verdict must be 'A', 'B' or 'tie', got {value!r}")


def parse_pair_with_reason(text: str) -> tuple[str, str]:
    """A pairwise judge's verdict and reason from its JSON output; ValueError if malformed."""
    data = load_json_object(text, "pair verdict")
    missing = [k for k in PAIR_SCHEMA["required"] if k not in data]
    if missing:
        raise ValueError(f"pair verdict: missing field(s) {', '.join(missing)}")
    try:
        winner = normalize_verdict(data["winner"])
    except ValueError as exc:
        raise ValueError(f"pair verdict: {exc}") from None
    if not isinstance(data["reason"], str):
        raise ValueError("pair verdict: reason must be a string")
    return winner, data["reason"]


def parse_pair(text: str) -> str:
    """The verdict ("A": first shown wins, "B" or "tie") from a pairwise judge's JSON output."""
    return parse_pair_with_reason(text)[0]


def _winner(x: str, y: str, verdict: str) -> str:
    """The competitor id a verdict on (x shown first, y second) favours, or "tie"."""
    return {"A": x, "B": y, "tie": "tie"}[verdict]


async def round_robin(
    items: list[str],
    judge_pair: Callable[[str, str], Awaitable[str]],
    limit: int = 4,
) -> dict:
    """Judge every pair of ``items`` in both orders and total the points.

    ``judge_pair(x, y)`` shows x as A and y as B and returns "A", "B" or "tie". At most
    ``limit`` judge calls run at once. Returns:

    * ``points``: {id: float}; the points always sum to the number of calls,
    * ``ranking``: ids by points, highest first, ties broken by id (stable, reproducible),
    * ``matches``: per pair ``{"a", "b", "first", "second", "consistent", "winner"}`` -
      ``first`` is the verdict on (a, b), ``second`` on (b, a); ``winner`` is the id both
      orders favour, "tie" if both tie, None if they disagree,
    * ``consistency``: share of pairs whose two orders agree (None with fewer than 2 items),
    * ``n_pairs``, ``n_calls``.

    Raises ValueError on duplicate ids, limit < 1 or a verdict that is not A/B/tie.
    """
    if len(set(items)) != len(items):
        raise ValueError("tournament items must be unique ids")
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    pairs = list(combinations(items, 2))
    sem = asyncio.Semaphore(limit)  # created here so it binds to the running loop

    async def call(x: str, y: str) -> str:
        async with sem:
            raw = await judge_pair(x, y)
        try:
            return normalize_verdict(raw)
        except ValueError as exc:
            raise ValueError(f"judge on ({x!r}, {y!r}): {exc}") from None

    tasks = [asyncio.ensure_future(call(x, y)) for a, b in pairs for x, y in ((a, b), (b, a))]
    try:
        verdicts = await asyncio.gather(*tasks)
    except BaseException:
        # one bad call fails the tournament: don't leave the other judge calls running
        for task in tasks:
            task.cancel()
        raise

    points = {item: 0.0 for item in items}
    matches = []
    consistent = 0
    for k, (a, b) in enumerate(pairs):
        first, second = verdicts[2 * k], verdicts[2 * k + 1]
        for x, y, verdict in ((a, b, first), (b, a, second)):
            w = _winner(x, y, verdict)
            if w == "tie":
                points[x] += 0.5
                points[y] += 0.5
            else:
                points[w] += 1.0
        w1, w2 = _winner(a, b, first), _winner(b, a, second)
        agree = w1 == w2
        consistent += agree
        matches.append(
            {
                "a": a,
                "b": b,
                "first": first,
                "second": second,
                "consistent": agree,
                "winner": w1 if agree else None,
            }
        )
    ranking = sorted(items, key=lambda item: (-points[item], item))
    return {
        "points": points,
        "ranking": ranking,
        "matches": matches,
        "consistency": consistent / len(pairs) if pairs else None,
        "n_pairs": len(pairs),
        "n_calls": len(tasks),
    }
