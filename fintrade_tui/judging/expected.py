"""Expected scores room: a judge's rubric scores weighted by its own token probabilities
(G-Eval's trick). A small judge gives 5 to most answers; the probability it puts on each of 1-5
where it wrote the score still tells a sure 5 from a hesitant one, so two answers it scored
alike can still be ranked. Needs the reply's per-token logprobs (OpenAI's shape); without them,
or when the reply cannot be lined up with its tokens, there is no expected score.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from typing import Any

_SCORE = re.compile(r'"score"\s*:\s*([1-5])')  # escaped quotes inside strings never match


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def expected_scores(
    raw: str, tokens: list[Any], written: dict[str, int]
) -> dict[str, float] | None:
    """{dimension: Σ d·p(d) / Σ p(d)} over the digits 1-5 among each score token's likeliest
    rivals, for the dimensions of `written` (their scores as parsed, in the reply's order);
    None when the tokens do not spell the reply or a score's token is not the digit alone."""
    pieces = [_get(t, "token") or "" for t in tokens]
    if not "".join(pieces).startswith(raw) or not raw:
        return None
    starts, at = [], 0
    for p in pieces:
        starts.append(at)
        at += len(p)
    found = list(_SCORE.finditer(raw))
    if len(found) < len(written):
        return None
    out: dict[str, float] = {}
    for (dim, score), m in zip(written.items(), found, strict=False):
        tok = tokens[bisect_right(starts, m.start(1)) - 1]
        if (_get(tok, "token") or "").strip() != m.group(1) or int(m.group(1)) != score:
            return None
        weight = dict.fromkeys(range(1, 6), 0.0)
        for alt in _get(tok, "top_logprobs") or []:
            digit = (_get(alt, "token") or "").strip()
            if len(digit) == 1 and digit in "12345":
                weight[int(digit)] += math.exp(_get(alt, "logprob"))
        total = sum(weight.values())
        if total <= 0:
            return None
        out[dim] = sum(d * w for d, w in weight.items()) / total
    return out
