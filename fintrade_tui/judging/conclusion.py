"""Judging room: a long reference answer cut to its conclusion for a judge with a small context.

The seeds' expert references run to ~1,500 tokens of working (goals, sub-questions, figures)
before their final answer. A local judge on 2 cores reads ~70 tokens/s, so a full reference
costs ~20 s per judgement before any output, and a 1.5B model loses the figures that matter in
it. The conclusion carries the answer and its figures: the last "Final Answer" / "Conclusion"
/ "Synthesize" / "Summary" section when there is one, else the last paragraphs, within the
budget. A note says what was left out, so the judge knows it sees a part.
"""

from __future__ import annotations

import re

from fintrade_tui.workspace.evidence import approx_tokens

# a markdown heading or a bold line that opens the closing section
_CLOSING = re.compile(
    r"^\s*(?:#{1,6}\s*|\*\*)[^\n]{0,40}?\b(final answer|conclusion|synthesi[sz]e|summary|"
    r"bottom line|verdict)\b[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)


def conclusion(text: str, budget_tokens: int | None) -> str:
    """`text` itself when it fits the budget (or there is none), else its conclusion."""
    if budget_tokens is None or approx_tokens(text) <= budget_tokens:
        return text
    starts = [m.start() for m in _CLOSING.finditer(text)]
    part = text[starts[-1] :].strip() if starts else ""
    if not part or approx_tokens(part) > budget_tokens:
        part = _tail(part or text, budget_tokens)
    left = len(text[: len(text) - len(part)].split())
    return f"(the reference's conclusion; {left} earlier words left out)\n{part}"


def _tail(text: str, budget_tokens: int) -> str:
    """The last whole paragraphs within the budget (at least the last one, cut to size)."""
    paras = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    kept: list[str] = []
    for p in reversed(paras):
        if kept and approx_tokens("\n\n".join([p, *kept])) > budget_tokens:
            break
        kept.insert(0, p)
    out = "\n\n".join(kept)
    if approx_tokens(out) > budget_tokens:  # one long paragraph: keep its end
        words = out.split()
        while words and approx_tokens(" ".join(words)) > budget_tokens:
            words = words[len(words) // 10 or 1 :]
        out = " ".join(words)
    return out
