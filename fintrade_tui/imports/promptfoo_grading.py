"""promptfoo grading room: a result's gradingResult as Judgments. The assertions' verdict is
"promptfoo:assert" (kind llm when a model graded it); a rating made in promptfoo's web viewer,
a componentResults entry with assertion.type "human" (pass, score, comment), is
"promptfoo:human", and the assertions' own verdict is then recomputed from the other components
the way the viewer does when a rating is cleared.
"""

from __future__ import annotations

from typing import Any

from fintrade_tui.errors import UserError
from fintrade_tui.imports.common import compact, label_of, text_or_none
from fintrade_tui.imports.record import Judgment

# the fix for any malformed promptfoo file (promptfoo.py raises with it too)
FIX_EXPORT = "write it again with `promptfoo eval -o out.json` or `promptfoo export eval <id>`"
HUMAN = "human"  # promptfoo's assertion type for a manual rating
# assertion types whose grader is a model: their verdict is an LLM's, not a rule's
_MODEL_GRADED = {"llm-rubric", "factuality", "g-eval", "answer-relevance", "select-best"}
_MODEL_GRADED |= {"search-rubric", "pi", "conversation-relevance", "model-graded-closedqa"}
_MODEL_GRADED |= {"model-graded-factuality", "context-faithfulness", "context-recall"}
_MODEL_GRADED |= {"context-relevance"}


def judgments(grading: Any, where: str) -> list[Judgment]:
    """promptfoo:assert from the assertions, promptfoo:human from a web-viewer rating."""
    if grading is None:
        return []
    if not isinstance(grading, dict):
        raise UserError(where, "gradingResult is not an object", FIX_EXPORT)
    parts = grading.get("componentResults") or []
    if not isinstance(parts, list):
        raise UserError(where, "gradingResult.componentResults is not a list", FIX_EXPORT)
    humans = [
        c for c in parts if isinstance(c, dict) and (c.get("assertion") or {}).get("type") == HUMAN
    ]
    rules = [c for c in parts if isinstance(c, dict) and c not in humans]
    out = []
    detail = compact({"componentResults": rules, "namedScores": grading.get("namedScores")})
    if not humans:
        out.append(_verdict("assert", grading, grading.get("reason"), detail, rules))
    elif rules:  # the rating overrides the top level: the rules' own verdict, as the viewer
        scores = [c["score"] for c in rules if isinstance(c.get("score"), int | float)]
        own: dict[str, Any] = {"pass": all(c.get("pass") for c in rules)}
        own["score"] = sum(scores) / len(scores) if scores else None
        failed = [str(c["reason"]) for c in rules if not c.get("pass") and c.get("reason")]
        note = "; ".join(failed) or "All assertions passed"
        detail |= {"overridden_by_human": True, "file_pass": grading.get("pass")}
        detail["file_score"] = grading.get("score")
        out.append(_verdict("assert", own, note, detail, rules))
    for h in humans:
        extra = compact({"reason": h.get("reason")})
        out.append(_verdict(HUMAN, h, text_or_none(h.get("comment")) or h.get("reason"), extra, []))
    if not humans and text_or_none(grading.get("comment")):  # a comment without a rating
        comment = text_or_none(grading.get("comment"))
        out.append(Judgment(f"promptfoo:{HUMAN}", note=comment, detail={"comment_only": True}))
    return out


def _verdict(
    name: str, g: dict[str, Any], note: Any, detail: dict[str, Any], rules: list[dict[str, Any]]
) -> Judgment:
    passed = g.get("pass")
    label = label_of(passed) if isinstance(passed, bool) else None  # a pass of 1 is no verdict
    asserts = [c.get("assertion") for c in [g, *rules]]
    types = {str(a.get("type", "")).removeprefix("not-") for a in asserts if isinstance(a, dict)}
    graded = bool(types & _MODEL_GRADED)
    return Judgment(
        annotator=f"promptfoo:{name}",
        label=label,
        value=g.get("score"),
        note=text_or_none(note),
        kind="llm" if graded else "human",
        detail=detail,
    )
