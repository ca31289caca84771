"""Score reader room: which stored score counts for a run — the one rule every table reads
scores by: `report`'s accuracy matrix and lane tables, the Results screen, the HTML view report
(`export html --view`), human–judge agreement, the failure filters and the runs export.

The rule (`counted_scores`), per run, per judging protocol, per rubric dimension, over the
latest version of each annotator's score (`ScoreStore.latest`):

- an **adjudication** — a human score carrying ``detail.adjudication`` (`adjudicate`, see
  stats/annotators.py) — that gives a value on a dimension **settles** it: that value is the
  run's score on the dimension and the annotators' scores on it no longer count (of two
  adjudications of one dimension, under two adjudicator names, the newest settles);
- every other dimension is the **mean over the annotators** (or judges) who scored it; a
  dimension the adjudication left out keeps the annotators' mean.

A run two annotators scored 5 and 1 on accuracy and an adjudicator settled at 4 has accuracy
4, not 3 and not (5 + 1 + 4) / 3. Labels (correct / partial / ...) are not rubric scores: an
adjudication gives none, and the label accuracy reads the annotators' labels as they are.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fintrade_tui.workspace.scores import DIMENSIONS


def is_adjudication(score: dict[str, Any]) -> bool:
    """A settled score (`adjudicate`), not an annotator's own."""
    return bool((score.get("detail") or {}).get("adjudication"))


def counted_scores(
    rows: Iterable[dict[str, Any]],
) -> dict[tuple[str, str | None], dict[str, float]]:
    """(run id, protocol) -> dimension -> the value that counts, by the module's rule: a
    dimension an adjudication settles is the (newest) adjudication's value; any other is the
    mean over the annotators who scored it. `rows`: latest score versions (any kinds; the
    protocol is the row's own, None for human scores). Dimensions nobody scored are absent,
    and so is a run with none; runs keep the order they first appear in."""
    means: dict[tuple[str, str | None], dict[str, list[float]]] = {}
    settled: dict[tuple[str, str | None], dict[str, tuple[Any, float]]] = {}
    for s in rows:
        key = (s["run_id"], s.get("protocol"))
        adjudicated = is_adjudication(s)
        for d in DIMENSIONS:
            v = s.get(d)
            if v is None:
                continue
            means.setdefault(key, {}).setdefault(d, [])  # the run's place in the order
            if adjudicated:
                when = s.get("created_at")
                before = settled.setdefault(key, {}).get(d)
                if before is None or when is None or before[0] is None or when >= before[0]:
                    settled[key][d] = (when, float(v))
            else:
                means[key][d].append(float(v))
    out: dict[tuple[str, str | None], dict[str, float]] = {}
    for key, dims in means.items():
        mine = settled.get(key, {})
        out[key] = {}
        for d in DIMENSIONS:
            if d in mine:
                out[key][d] = mine[d][1]
            elif dims.get(d):
                out[key][d] = sum(dims[d]) / len(dims[d])
    return out


def mean_by_run(
    rows: list[dict[str, Any]], protocol: str | None = None
) -> dict[str, dict[str, float]]:
    """run id -> dimension -> the value that counts (`counted_scores`: an adjudicated dimension
    its settled score, any other the mean over annotators), rows: latest versions. `protocol`
    keeps the judge rows of that protocol (and every human row); judge rows of two protocols are
    never averaged together (ValueError)."""
    if protocol is not None:
        rows = [s for s in rows if s.get("protocol") in (None, protocol)]
    mixed = {s.get("protocol") for s in rows} - {None}
    if len(mixed) > 1:
        raise ValueError(f"scores of protocols {sorted(map(str, mixed))} mixed: pass protocol=")
    # one protocol at most: the run is the key (human and judge rows, if both are given, count
    # together, as one run's scores)
    counted = counted_scores({**s, "protocol": None} for s in rows)
    return {rid: dims for (rid, _), dims in counted.items()}
