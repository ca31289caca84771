"""Statistics room: agreement between named human annotators scoring the same runs, and the
disagreements worth adjudicating.

Per rubric dimension: quadratic-weighted Cohen's κ for every annotator pair (scikit-learn, via
stats.agreement), Krippendorff's α (ordinal) over all annotators (the `krippendorff` package,
imported lazily), exact and ±1 agreement, N items. An adjudication is one more human score
(append-only, through ScoreStore) carrying ``detail.adjudication``; it never counts as an
annotator here. Which score then counts for a run (the settled one, on the dimensions it
settles) is workspace/score_reader.py's rule, the one every table reads by.
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np

from fintrade_tui.stats.agreement import DIMENSIONS, agreement
from fintrade_tui.stats.paired import finite_or_none
from fintrade_tui.workspace.score_reader import counted_scores, is_adjudication

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

ADJUDICATOR = "adjudicated"  # the annotator name an adjudication is saved under by default
GAP = 2  # a disagreement: two annotators 2+ points apart on a dimension


def human_scores(ws: Connection) -> list[dict[str, Any]]:
    """The latest ok human score of every (run, annotator), adjudications left out."""
    from fintrade_tui.workspace.scores import ScoreStore

    return [s for s in ScoreStore(ws).latest(kind="human") if not is_adjudication(s)]


def ratings(rows: list[dict[str, Any]], dimension: str) -> dict[str, dict[str, int]]:
    """run id -> annotator -> score on one dimension (runs nobody scored on it are absent)."""
    out: dict[str, dict[str, int]] = {}
    for s in rows:
        if s.get(dimension) is not None and not is_adjudication(s):
            out.setdefault(s["run_id"], {})[s["annotator"]] = int(s[dimension])
    return out


def krippendorff_alpha(data: Any) -> float | None:
    """Ordinal Krippendorff's α of an annotators × items matrix (np.nan = not scored); None
    when undefined (no item scored twice, or a single value used throughout)."""
    import krippendorff  # lazy: only the agreement report needs it

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a 0/0 comes back as NaN, turned into None below
        try:
            a = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
        except (ValueError, ZeroDivisionError):
            return None
    return finite_or_none(a)


def dimension_agreement(by_run: dict[str, dict[str, int]], annotators: list[str]) -> dict[str, Any]:
    """Agreement on one dimension: ``n_items`` (runs scored by 2+ annotators), ``alpha``,
    ``exact`` / ``within_1`` (shares over every annotator pair on every such item) and
    ``pairs`` (per pair: ``a``, ``b``, ``n``, ``kappa``, ``exact``, ``within_1``)."""
    shared = sorted(r for r, by in by_run.items() if len(by) >= 2)
    pairs = []
    for a, b in combinations(annotators, 2):
        both = [r for r in shared if a in by_run[r] and b in by_run[r]]
        res = agreement([by_run[r][a] for r in both], [by_run[r][b] for r in both])
        pairs.append(
            {"a": a, "b": b, "n": res["n"], "kappa": res["qwk"]}
            | {k: res[k] for k in ("exact", "within_1")}
        )
    gaps = [abs(by_run[r][x] - by_run[r][y]) for r in shared for x, y in combinations(by_run[r], 2)]
    data = [[by_run[r].get(a, math.nan) for r in shared] for a in annotators]
    return {
        "n_items": len(shared),
        "alpha": krippendorff_alpha(np.array(data, dtype=float)) if shared else None,
        "exact": float(np.mean([g == 0 for g in gaps])) if gaps else None,
        "within_1": float(np.mean([g <= 1 for g in gaps])) if gaps else None,
        "pairs": pairs,
    }


def annotator_agreement(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Inter-annotator agreement of human score rows (ScoreStore.latest shape).

    Returns ``{"annotators": [...], "dimensions": [{"dimension", "n_annotators", **
    dimension_agreement}]}``, one entry per rubric dimension, in rubric order."""
    dims, annotators = [], set()
    for d in DIMENSIONS:
        by_run = ratings(rows, d)
        who = sorted({a for by in by_run.values() for a in by})
        annotators |= set(who)  # people who gave rubric scores (a label-only import is not one)
        dims.append({"dimension": d, "n_annotators": len(who), **dimension_agreement(by_run, who)})
    return {"annotators": sorted(annotators), "dimensions": dims}


def disagreements(rows: list[dict[str, Any]], gap: int = GAP) -> list[dict[str, Any]]:
    """Every (run, dimension) where two annotators are ``gap``+ points apart, widest first:
    ``run_id``, ``dimension``, ``scores`` (annotator -> score), ``spread``, ``adjudicated``
    (the adjudicated score on that dimension, if any)."""
    # the settled value the tables count (workspace/score_reader.py: the newest adjudication)
    counted = counted_scores(s for s in rows if is_adjudication(s))
    settled = {(rid, d): int(v) for (rid, _), dims in counted.items() for d, v in dims.items()}
    out: list[dict[str, Any]] = []
    for d in DIMENSIONS:
        for rid, by in ratings(rows, d).items():
            spread = max(by.values()) - min(by.values())
            if spread >= gap:
                out.append(
                    {
                        "run_id": rid,
                        "dimension": d,
                        "scores": dict(sorted(by.items())),
                        "spread": spread,
                        "adjudicated": settled.get((rid, d)),
                    }
                )
    out.sort(key=lambda x: (-x["spread"], x["run_id"], DIMENSIONS.index(x["dimension"])))
    return out


def disagreement_view(ws: Connection, gap: int = GAP) -> list[dict[str, Any]]:
    """`disagreements` over the workspace's human scores, with each run's question, model,
    condition and answer (what the adjudicator reads)."""
    from fintrade_tui.workspace.run_records import RunStore
    from fintrade_tui.workspace.scores import ScoreStore

    rows = ScoreStore(ws).latest(kind="human")
    runs = {r["id"]: r for r in RunStore(ws).list(limit=1_000_000)}
    out = []
    for item in disagreements(rows, gap):
        r = runs.get(item["run_id"], {})
        out.append(item | {k: r.get(k) for k in ("question_id", "model", "condition", "answer")})
    return out


def adjudicate(
    ws: Connection,
    run_id: str,
    values: dict[str, int],
    reason: str,
    adjudicator: str = ADJUDICATOR,
) -> dict[str, Any]:
    """Save the settled scores of one run as a new human score version (one transaction):
    annotator ``adjudicator``, the reason in its note, the annotators' scores in
    ``detail.adjudication``. Returns the stored row."""
    from fintrade_tui.errors import UserError
    from fintrade_tui.workspace.scores import Score, ScoreStore

    if not reason or not reason.strip():
        raise UserError("adjudication", "gives no reason", "say why, e.g. --reason '...'")
    unknown = sorted(set(values) - set(DIMENSIONS))
    if unknown or not values:
        raise UserError(
            f"adjudication {', '.join(unknown) or '(empty)'}",
            "is not a rubric dimension",
            f"use {', '.join(DIMENSIONS)}",
        )
    store = ScoreStore(ws)
    mine = [s for s in store.latest(kind="human", run_ids=[run_id]) if not is_adjudication(s)]
    if any(s["annotator"] == adjudicator for s in mine):
        # a new version under their own name would replace their original score
        raise UserError(
            f"adjudicator {adjudicator!r}",
            f"already scored run {run_id}",
            f"adjudicate under another name (default {ADJUDICATOR!r})",
        )
    before = {d: {s["annotator"]: s[d] for s in mine if s[d] is not None} for d in values}
    return store.save(
        Score(
            run_id,
            "human",
            adjudicator,
            accuracy=values.get("accuracy"),
            completeness=values.get("completeness"),
            relevance=values.get("relevance"),
            clarity=values.get("clarity"),
            note=reason.strip(),
            detail={"adjudication": {"reason": reason.strip(), "scores": before}},
        )
    )


def annotator_rows(inter: dict[str, Any]) -> list[dict[str, Any]]:
    """The agreement as table rows: per dimension one "all annotators" row (α), then one row
    per annotator pair (κ); exact and ±1 in %, numbers rounded to 3 places."""

    def r3(v: float | None) -> float | None:
        return None if v is None else round(v, 3)

    def pct(v: float | None) -> float | None:
        return None if v is None else round(100 * v, 1)

    out = []
    for d in inter["dimensions"]:
        if not d["n_items"]:
            continue
        out.append(
            {
                "dimension": d["dimension"],
                "annotators": f"all {d['n_annotators']}",
                "n": d["n_items"],
                "kappa_quad": None,
                "alpha_ordinal": r3(d["alpha"]),
                "exact_pct": pct(d["exact"]),
                "within_1_pct": pct(d["within_1"]),
            }
        )
        out += [
            {
                "dimension": d["dimension"],
                "annotators": f"{p['a']} – {p['b']}",
                "n": p["n"],
                "kappa_quad": r3(p["kappa"]),
                "alpha_ordinal": None,
                "exact_pct": pct(p["exact"]),
                "within_1_pct": pct(p["within_1"]),
            }
            for p in d["pairs"]
            if p["n"]
        ]
    return out
