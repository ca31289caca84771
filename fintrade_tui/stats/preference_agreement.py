"""Statistics room: agreement between people's blinded pairwise preferences and the LLM judge's
pairwise verdicts on the same pairs, per comparison (the two runs' conditions, per model).

Everything is normalised to the runs first (a winner is a run id or "tie"), so the side a run
was shown on never matters here. Strict agreement: share of judged pairs whose labels are
identical (ties included). Directional agreement: over the pairs a person decided (not a tie),
share where the judge picks the same winner; a judge tie counts as disagreement. Pure functions.
"""

from __future__ import annotations

from typing import Any

from fintrade_tui.workspace.evidence import CONDITIONS, LABELS

TIE = "tie"


def pair_key(a: str, b: str) -> tuple[str, str]:
    """An unordered pair of run ids as a sorted tuple."""
    return (a, b) if a < b else (b, a)


def agreement(items: list[tuple[str, str]]) -> dict[str, Any]:
    """(human winner, judge winner) per pair -> pairs, decisive, strict, directional (shares
    0-1, None when nothing to divide by)."""
    decisive = [(h, j) for h, j in items if h != TIE]
    same = sum(h == j for h, j in items)
    direction = sum(h == j for h, j in decisive)  # h is a run id here, so a judge tie is wrong
    return {
        "pairs": len(items),
        "decisive": len(decisive),
        "strict": same / len(items) if items else None,
        "directional": direction / len(decisive) if decisive else None,
    }


def _rank(condition: str) -> tuple[int, str]:
    """The stronger evidence condition first (Oracle, Tool-Use, ..., No-RAG), unknown ones last."""
    order = CONDITIONS[::-1]
    return (order.index(condition) if condition in order else len(order), condition)


def comparison(run_a: dict[str, Any], run_b: dict[str, Any]) -> tuple[str, str]:
    """(model, comparison) of two runs: e.g. ("gpt", "Oracle vs Indicator-RAG"); two models
    give "m1 vs m2" in the order of the conditions."""
    x, y = sorted((run_a, run_b), key=lambda r: (_rank(r["condition"]), r["model"]))
    names = [LABELS.get(r["condition"], r["condition"]) for r in (x, y)]
    model = x["model"] if x["model"] == y["model"] else f"{x['model']} vs {y['model']}"
    return model, f"{names[0]} vs {names[1]}"


def agreement_table(
    preferences: list[dict[str, Any]],
    verdicts: dict[tuple[str, str], str],
    runs: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    """Per-comparison agreement, plus an "all" row.

    `preferences`: rows with run_a, run_b, winner (a run id or "tie"), one per (annotator, pair);
    `verdicts`: sorted pair -> the judge's winner; `runs`: run id -> {"condition", "model"}.
    A preference whose pair has no verdict is counted in `unjudged` and left out of the shares.
    """
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    unjudged: dict[tuple[str, str], int] = {}
    for p in preferences:
        key = comparison(runs[p["run_a"]], runs[p["run_b"]])
        verdict = verdicts.get(pair_key(p["run_a"], p["run_b"]))
        if verdict is None:
            unjudged[key] = unjudged.get(key, 0) + 1
            groups.setdefault(key, [])
            continue
        groups.setdefault(key, []).append((p["winner"], verdict))
    rows = [
        {"model": m, "comparison": c, **agreement(items), "unjudged": unjudged.get((m, c), 0)}
        for (m, c), items in sorted(groups.items())
    ]
    everything = [it for items in groups.values() for it in items]
    total = {"model": "all", "comparison": "all", **agreement(everything)}
    total["unjudged"] = sum(unjudged.values())
    return {"rows": rows, "all": total}
