"""Expected scores room: a judge's rubric scores weighted by its own token probabilities
(G-Eval's trick). A small judge gives 5 to most answers; the probability it puts on each of 1-5
where it wrote the score still tells a sure 5 from a hesitant one, so two answers it scored
alike can still be ranked. Needs the reply's per-token logprobs (OpenAI's shape); without them,
or when a score cannot be found among its tokens, there is no expected score.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from typing import Any

_SCORE = re.compile(r'"score"\s*:\s*([1-5])')  # escaped quotes inside strings never match


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def expected_scores(tokens: list[Any], written: dict[str, int]) -> dict[str, float] | None:
    """{dimension: Σ d·p(d) / Σ p(d)} over the digits 1-5 among each score token's likeliest
    rivals, for the dimensions of `written` (their scores as parsed, in the reply's order);
    None when a score's token is not the digit alone or differs from the parsed score. The
    scores are found in the tokens' own text: a character split over two tokens ("—") spells
    differently there, but only inside a justification, never in `"score": 5`."""
    pieces = [_get(t, "token") or "" for t in tokens]
    starts, at = [], 0
    for p in pieces:
        starts.append(at)
        at += len(p)
    found = list(_SCORE.finditer("".join(pieces)))
    if not written or len(found) < len(written):
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
