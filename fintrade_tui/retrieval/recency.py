"""Recency for filing passages: among near-equal passages, prefer the latest filing by `as_of`.

Two steps, run by `search.retrieve` on the filing track after fusion (or the rerank stage) and
before parent de-duplication; both only reorder or drop candidates the point-in-time prefilter
already admitted, so nothing filed after `as_of` can come back.

1. De-duplication of passages repeated across filings: two candidates of one ticker from
   different filings whose word-trigram sets overlap by `DUP_JACCARD` or more (risk factors
   copied from one 10-K or 10-Q into the next, boilerplate MD&A paragraphs) are one passage.
   The group keeps its newest copy, at the best score any copy had.
2. A prior on filing age: a candidate's ranking score gets a bonus of
   `strength * DECAY ** n * top`, where `n` is the number of the ticker's filings of the same
   form (`BY_FORM`; of any form when False) filed after the candidate's filing and on or
   before `as_of` (0 for the latest eligible 10-K and the latest eligible 10-Q: a 10-K stays
   the annual document of record while 10-Qs follow it) and `top` the largest absolute score
   in the list, so `strength` is a share of the best score whatever the scale (RRF sums,
   cosine similarities, cross-encoder logits).

The adjusted score goes to `scores["recency"]` (a merged group's best score to
`scores["dedup"]`), the original scores stay as they were; `search` ranks by the adjusted one
and its returned items carry only the dense/text/fused/rerank scores, as before. Parameters
(measured with benchmarks/bench_recency.py): `STRENGTH` 0.2 is the weakest by-form strength
with the latest eligible filing in the hybrid top 3 for >= 90 % of the recency labels.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from datetime import date
from typing import Any

STRENGTH = 0.2  # default bonus for the latest eligible filing, as a share of the top score
DECAY = 0.5  # the bonus is multiplied by this for each newer eligible filing of the ticker
BY_FORM = True  # count newer filings of the same form (a 10-K stays current until the next)
DUP_JACCARD = 0.8  # word-trigram overlap at which two passages count as the same passage
_ANCHORS = 4  # smallest trigram hashes a passage is looked up by


def shingles(text: str) -> frozenset[int]:
    """Hashes of the lowercased word trigrams of `text` (of its words under three words);
    only ever compared within one process, so Python's salted `hash` is fine."""
    w = text.lower().split()
    if len(w) < 3:
        return frozenset(map(hash, w))
    return frozenset(map(hash, zip(w, w[1:], w[2:], strict=False)))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    k = len(a & b)
    return k / (len(a) + len(b) - k)


def base_score(r: dict) -> float:
    """The score a row is ranked by before recency: the rerank score, else the fused one."""
    s = r["scores"]
    return s["rerank"] if s.get("rerank") is not None else s["fused"]


def dedup(rows: list[dict], threshold: float = DUP_JACCARD) -> list[dict]:
    """Collapse near-identical passages of one ticker from different filings (rows in rank
    order): each group is kept once, as its newest copy, at the group's best score.

    A row is compared only with the groups sharing one of its `_ANCHORS` smallest trigram
    hashes (a bottom-k sketch: two passages with Jaccard >= 0.8 nearly always share one), so
    the cost grows with the rows, not their pairs."""
    groups: list[tuple[frozenset, list[dict]]] = []
    by_anchor: dict[tuple[str, int], list[int]] = {}
    for r in rows:
        sh = shingles(r["text"])
        anchors = [(r["ticker"], h) for h in heapq.nsmallest(_ANCHORS, sh)]
        near = sorted({g for a in anchors for g in by_anchor.get(a, [])})
        home = next((g for g in near if jaccard(groups[g][0], sh) >= threshold), None)
        if home is None:
            home = len(groups)
            groups.append((sh, []))
            for a in anchors:
                by_anchor.setdefault(a, []).append(home)
        groups[home][1].append(r)
    out = []
    for _, members in groups:
        if len({r["accession"] for r in members}) == 1:  # repeats inside one filing stay
            out.extend(members)
            continue
        newest = max(members, key=lambda r: (r["filed"], base_score(r)))
        newest["scores"]["dedup"] = max(base_score(r) for r in members)
        out.append(newest)
    return out


def newer_filings(filed: list[date], day: date, as_of: date) -> int:
    """How many of the ticker's filing dates (`filed`, sorted) fall after `day`, up to as_of."""
    return max(0, bisect_right(filed, as_of) - bisect_right(filed, day))


def apply(
    rows: list[dict],
    filed: dict[Any, list[date]],
    as_of: date,
    strength: float = STRENGTH,
    dedup_threshold: float | None = DUP_JACCARD,
) -> list[dict]:
    """Rows (one track's ranked filing candidates) reordered by the recency-adjusted score.

    `filed` maps a ticker, and a (ticker, form), to the sorted filing dates of its indexed
    filings (one entry per filing); `strength` 0 and `dedup_threshold` None leave the order
    as it was."""
    if not rows:
        return rows
    if dedup_threshold is not None:
        rows = dedup(rows, dedup_threshold)
    scores = [r["scores"].get("dedup", base_score(r)) for r in rows]
    top = max(abs(s) for s in scores) or 1.0
    for r, s in zip(rows, scores, strict=True):
        key = (r["ticker"], r.get("form")) if BY_FORM else r["ticker"]
        n = newer_filings(filed.get(key, []), r["filed"], as_of)
        r["scores"]["recency"] = s + strength * DECAY**n * top
    return sorted(rows, key=lambda r: -r["scores"]["recency"])
