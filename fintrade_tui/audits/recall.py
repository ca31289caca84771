"""Evidence-recall room: of the figures a question needs — its golden indicators' values at the
as-of (the Oracle's evidence, `Question.oracle`) — how many a run's evidence states. A pure
function, no store, no model: each needed figure is written as the Oracle writes it and looked
for in the evidence texts by the evidence audit's own reader (audits/evidence.py: the same
readings, scales and tolerance), so "160.6%" in a passage states an ROE of 1.606.

Recall is what tells a retrieval miss (the figures never reached the model) from a misreading
(they did, and the answer contradicts them): reports/causes.py reads it.
"""

from __future__ import annotations

from typing import Any

from fintrade_tui.audits.evidence import audit_text
from fintrade_tui.audits.verdicts import SUPPORTED

SUPPLIED = "supplied"  # Question.oracle's key for a benchmark's own context: not a figure


def needed(q: Any) -> list[tuple[str, float, str | None]]:
    """(label "TICKER indicator", value, kind) of every golden indicator the Oracle has a value
    for, in the question's order."""
    out = []
    oracle = getattr(q, "oracle", None) or {}
    for ticker in getattr(q, "tickers", None) or []:
        for name in getattr(q, "golden", None) or []:
            o = (oracle.get(ticker) or {}).get(name)
            if isinstance(o, dict) and isinstance(o.get("value"), int | float):
                out.append((f"{ticker} {name}", float(o["value"]), o.get("kind")))
    return out


def _written(value: float, kind: str | None) -> str:
    """The figure as a sentence the evidence reader reads (6 significant digits, as the
    Oracle's evidence writes it; a percent kind as a percentage)."""
    if kind == "percent":
        return f"{value * 100:.6g}%"
    return f"{value:,.0f}" if abs(value) >= 1e6 else f"{value:.6g}"


def evidence_recall(q: Any, texts: list[str], tolerance: float = 0.02) -> dict[str, Any]:
    """{"needed": n, "found": k, "recall": k/n (None when nothing is needed), "missing":
    [labels], "stated": [labels]} for these evidence texts."""
    want = needed(q)
    docs = [t for t in texts if isinstance(t, str) and t.strip()]
    stated: list[str] = []
    missing: list[str] = []
    for label, value, kind in want:
        hit = False
        if docs:
            report = audit_text(f"{label}: {_written(value, kind)}", docs, None, tolerance)
            hit = any(c["verdict"] == SUPPORTED for c in report["claims"])
        (stated if hit else missing).append(label)
    n = len(want)
    return {
        "needed": n,
        "found": len(stated),
        "recall": len(stated) / n if n else None,
        "missing": missing,
        "stated": stated,
    }


def run_texts(run: dict[str, Any]) -> list[str]:
    """The evidence texts a run's prompt showed (its recorded evidence items, tool results)."""
    ev = run.get("evidence") or {}
    texts = [i.get("text") or "" for i in ev.get("items") or [] if isinstance(i, dict)]
    for call in run.get("tool_calls") or ev.get("tool_calls") or []:
        if isinstance(call, dict) and call.get("result") is not None:
            texts.append(str(call["result"]))
    return [t for t in texts if t.strip()]
