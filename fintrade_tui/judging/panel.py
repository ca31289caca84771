"""Judging room: the SECQUE panel - N single-judge votes in {0, 1, 2} folded into one score.

SECQUE asks several independent judge calls to score an answer 0 (wrong), 1 (partially right)
or 2 (right); the votes are summed and the sum is thresholded: S >= full -> 2,
partial <= S < full -> 1, else 0. With the defaults (5 votes, full 6, partial 4) an answer
needs more than a bare majority of "right" to be called right.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

VOTE_VALUES = (0, 1, 2)
# A bounded reason, because llama.cpp's grammar honours maxLength: a small model otherwise
# repeats its justification until the token cap and the JSON is cut off.
REASON: dict = {"type": "string", "minLength": 1, "maxLength": 120}


def choice_schema(field: str, kind: str, values: Sequence[object]) -> dict:
    """The JSON schema of a judge's one-choice reply, `{field: one of values, "reason": ...}`.
    llama.cpp grammars honour `enum`, not minimum/maximum, so the choices are spelled out;
    replies are validated anyway (a hosted model may ignore the schema)."""
    return {
        "type": "object",
        "properties": {field: {"type": kind, "enum": list(values)}, "reason": REASON},
        "required": [field, "reason"],
        "additionalProperties": False,
    }


PANEL_SCHEMA: dict = choice_schema("score", "integer", VOTE_VALUES)


def _check_score(value: object, what: str) -> int:
    # bool is an int subclass: `true` must not pass as a 1
    if isinstance(value, bool) or not isinstance(value, int) or value not in VOTE_VALUES:
        raise ValueError(f"{what} must be 0, 1 or 2, got {value!r}")
    return value


def panel_score(votes: Sequence[int], full: int = 6, partial: int = 4) -> dict:
    """Fold single-judge votes into a panel score.

    Returns ``{"votes": [...], "n": N, "sum": S, "final": 0|1|2, "full": full,
    "partial": partial}``. Raises ValueError on an empty panel, a vote outside {0, 1, 2} or
    thresholds with partial > full.
    """
    if partial > full:
        raise ValueError(f"partial threshold {partial} is above the full threshold {full}")
    checked = [_check_score(v, f"vote {i}") for i, v in enumerate(votes)]
    if not checked:
        raise ValueError("a panel needs at least one vote")
    total = sum(checked)
    final = 2 if total >= full else 1 if total >= partial else 0
    return {
        "votes": checked,
        "n": len(checked),
        "sum": total,
        "final": final,
        "full": full,
        "partial": partial,
    }


def panel_accuracy(finals: Sequence[int]) -> dict:
    """Accuracy over panel finals.

    Returns ``{"n", "strict", "normalized", "counts"}``: strict = share of 2s, normalized =
    mean(final) / 2, counts = {0: .., 1: .., 2: ..}. With no finals the two accuracies are
    None (not 0: nothing was measured). Raises ValueError on a final outside {0, 1, 2}.
    """
    checked = [_check_score(v, f"final {i}") for i, v in enumerate(finals)]
    counts = {v: checked.count(v) for v in VOTE_VALUES}
    n = len(checked)
    if n == 0:
        return {"n": 0, "strict": None, "normalized": None, "counts": counts}
    return {
        "n": n,
        "strict": counts[2] / n,
        "normalized": sum(checked) / (2 * n),
        "counts": counts,
    }


def _strip_fence(text: str) -> str:
    # a model not held to the schema may still wrap its JSON in a ```json fence
    s = text.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else s[3:]
        if s.rstrip().endswith("```"):
            s = s.rstrip()[:-3]
    return s.strip()


def load_json_object(text: str, what: str) -> dict:
    """``json.loads(text, strict=False)`` that must give an object; ValueError otherwise.

    strict=False because constrained local models write raw newlines inside strings.
    """
    if not isinstance(text, str):
        raise ValueError(f"{what}: expected JSON text, got {type(text).__name__}")
    try:
        data = json.loads(_strip_fence(text), strict=False)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not valid JSON ({exc.msg} at char {exc.pos})") from exc
    except RecursionError:  # thousands deep: invalid output, never a crash
        raise ValueError(f"{what}: JSON nested too deep") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected a JSON object, got {type(data).__name__}")
    return data


def parse_vote_with_reason(text: str) -> tuple[int, str]:
    """One judge's vote and reason from its JSON output; ValueError if malformed."""
    data = load_json_object(text, "judge vote")
    missing = [k for k in PANEL_SCHEMA["required"] if k not in data]
    if missing:
        raise ValueError(f"judge vote: missing field(s) {', '.join(missing)}")
    score = _check_score(data["score"], "judge vote: score")
    if not isinstance(data["reason"], str):
        raise ValueError("judge vote: reason must be a string")
    return score, data["reason"]


def parse_vote(text: str) -> int:
    """One judge's score (0, 1 or 2) from its JSON output; ValueError if malformed."""
    return parse_vote_with_reason(text)[0]
