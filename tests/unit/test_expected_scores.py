"""Expected scores: each rubric score weighted by the judge's probabilities of 1-5 where it
wrote it, checked against hand-computed values."""

from __future__ import annotations

import math

from fintrade_tui.judging.expected import expected_scores


def _tok(text: str, alts: dict[str, float] | None = None) -> dict:
    alts = alts or {text: 1.0}
    return {
        "token": text,
        "logprob": math.log(alts.get(text, 1.0)),
        "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in alts.items()],
    }


def _reply(scores: list[tuple[str, dict]]) -> tuple[str, list[dict]]:
    """A judge reply as tokens: two dimensions, each score digit its own token."""
    toks = [_tok("{")]
    for k, (digit, alts) in enumerate(scores):
        name = ("accuracy", "completeness")[k]
        toks += [_tok(f'"{name}": {{"justification": "x \\"score\\": 1", "score":'), _tok(" ")]
        toks += [_tok(digit, alts), _tok("}" + (", " if k == 0 else ""))]
    toks.append(_tok("}"))
    return "".join(t["token"] for t in toks), toks


def test_scores_are_weighted_by_the_digit_probabilities() -> None:
    raw, toks = _reply([("5", {"5": 0.6, "4": 0.3, '"': 0.1}), ("3", {"3": 0.5, " 2": 0.5})])
    got = expected_scores(toks, {"accuracy": 5, "completeness": 3})
    # (5·0.6 + 4·0.3) / 0.9, the non-digit rival dropped; " 2" is the digit 2 with its space
    assert math.isclose(got["accuracy"], 4.2 / 0.9)
    assert math.isclose(got["completeness"], 2.5)


def test_no_expected_score_when_a_score_is_not_found_among_the_tokens() -> None:
    raw, toks = _reply([("5", {"5": 0.9, "4": 0.1}), ("4", {"4": 1.0})])
    written = {"accuracy": 5, "completeness": 4}
    assert expected_scores(toks, written)["accuracy"] == 4.9
    assert expected_scores(toks, {"accuracy": 4, "completeness": 4}) is None  # not as parsed
    glued = toks[:2] + [_tok(" 5")] + toks[4:]  # the digit shares its token with the space
    assert expected_scores(glued, written)["accuracy"] == 5.0
    fused = toks[:2] + [_tok(" 5}")] + toks[5:]  # the digit inside a longer token
    assert expected_scores(fused, written) is None
    assert expected_scores([], written) is None


def test_a_character_split_over_two_tokens_does_not_hide_the_scores() -> None:
    raw, toks = _reply([("5", {"5": 0.5, "4": 0.5}), ("4", {"4": 1.0})])
    split = [toks[0], _tok("\ufffd"), _tok("\ufffd"), *toks[1:]]  # "—" decoded per token
    assert expected_scores(split, {"accuracy": 5, "completeness": 4})["accuracy"] == 4.5
