"""Judging room: the FinAR / DePlot table metric, RMS (relative mapping similarity).

A table is read as a set of points keyed ``"row header | column header"``. Predicted and
reference keys are paired one-to-one (Hungarian assignment on the normalized Levenshtein
distance of the keys); each pair scores ``(1 - key distance) * value similarity`` and the sum
over pairs gives precision (per predicted point), recall (per reference point) and F1.

Cell conventions, applied identically to prediction and reference:

* Surrounding markdown emphasis (``**``, ``__``, backticks) and whitespace are stripped.
* Numbers: a cell that is one figure, whole, as the figures reader (scoring/figures.py) reads
  it: currency signs and codes, thousands separators ("1,234,567"), ``(1,234)`` as -1234, the
  Unicode minus, percents and basis points as fractions ("12.5%" -> 0.125), scale words and
  suffixes ("1.2 billion", "$3M"). Decimal arithmetic keeps "12.5%" and "0.125" the same float.
  A range ("5-7%"), a cell with words beside its figure ("12.5% (est.)") or with more than one
  figure stays a string.
* Anything else is a string, lowercased with whitespace collapsed; empty cells are no point.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist
from scipy.optimize import linear_sum_assignment

from fintrade_tui.scoring.figures import figures

Rows = list[list[str]]
TableInput = str | Sequence[Sequence[str]] | None

DEFAULT_THETAS: tuple[float, ...] = (0.0, 0.01, 0.05, 0.1, 0.2, 0.5, 0.8, 1.0)
_EXACT = 1e-12  # relative errors below this are float noise, i.e. an exact match

# --- parsing -------------------------------------------------------------------------------

_SEP_CELL = re.compile(r"^:?-+:?$")
_PIPE = re.compile(r"(?<!\\)\|")


def _split_row(line: str) -> list[str]:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip().replace("\\|", "|") for c in _PIPE.split(s)]


def _is_separator(line: str) -> bool:
    if "-" not in line:
        return False
    cells = _split_row(line)
    return bool(cells) and all(_SEP_CELL.match(c.replace(" ", "")) for c in cells)


def parse_markdown_table(text: str) -> Rows | None:
    """The first markdown table in ``text`` as rows of stripped cells (header first).

    A table is a line with a pipe followed by a ``|---|---|`` separator row; body rows run
    until the first line without a pipe. Returns None when there is no such table.
    """
    if not isinstance(text, str):
        return None
    lines = text.splitlines()
    for i in range(len(lines) - 1):
        if "|" not in lines[i] or not _is_separator(lines[i + 1]):
            continue
        rows = [_split_row(lines[i])]
        for line in lines[i + 2 :]:
            if "|" not in line or not line.strip():
                break
            if _is_separator(line):  # some models repeat the separator: not data
                continue
            rows.append(_split_row(line))
        return rows
    return None


def _clean(cell: str) -> str:
    return " ".join(str(cell).strip().strip("*_`").split())


def parse_number(cell: str) -> float | None:
    """The number a table cell holds (see the module docstring), or None if it is text."""
    text = _clean(cell)
    found = figures(text)
    if len(found) != 1 or found[0].is_range:
        return None
    fig = found[0]
    if text[: fig.span[0]].strip() or text[fig.span[1] :].strip():
        return None  # words beside the figure: a string
    return float(Decimal(repr(fig.number)) * Decimal(repr(fig.factor)))


def _norm_text(cell: str) -> str:
    return _clean(cell).lower()


def table_points(rows: Sequence[Sequence[str]]) -> dict[str, float | str]:
    """Points of a table: ``"row header | column header"`` -> number or normalized string.

    The first row holds column headers and the first column row headers (the top-left cell is
    a label and no point). Empty cells are skipped. A repeated key gets a ``" #2"``-style
    suffix so no cell is silently dropped.
    """
    if not rows or len(rows) < 2:
        return {}
    header = [_clean(c) for c in rows[0]]
    points: dict[str, float | str] = {}
    for row in rows[1:]:
        if not row:
            continue
        row_head = _clean(row[0])
        for j in range(1, len(header)):
            cell = row[j] if j < len(row) else ""
            if not _clean(cell):
                continue
            key = f"{row_head} | {header[j]}"
            if key in points:
                n = 2
                while f"{key} #{n}" in points:
                    n += 1
                key = f"{key} #{n}"
            number = parse_number(cell)
            points[key] = number if number is not None else _norm_text(cell)
    return points


def _transpose(rows: Sequence[Sequence[str]]) -> Rows:
    width = max((len(r) for r in rows), default=0)
    padded = [list(r) + [""] * (width - len(r)) for r in rows]
    return [list(col) for col in zip(*padded, strict=True)]


def _as_rows(value: TableInput) -> Rows | None:
    if value is None:
        return None
    if isinstance(value, str):
        return parse_markdown_table(value)
    try:
        return [[str(c) for c in row] for row in value]
    except TypeError:
        return None


# --- matching and scoring ------------------------------------------------------------------


def _norm_key(key: str) -> str:
    return " ".join(key.lower().split())


def _assign(pred: list[str], ref: list[str], tau: float) -> list[tuple[int, int, float]]:
    """One-to-one pairs (pred index, ref index, key distance) with distance <= tau."""
    if not pred or not ref:
        return []
    dist = cdist(
        [_norm_key(k) for k in pred],
        [_norm_key(k) for k in ref],
        scorer=Levenshtein.normalized_distance,
        dtype=np.float64,
    )
    # Pairs beyond tau cost more than any set of valid pairs could, so the assignment never
    # gives up a valid match just to shave distance off the others.
    forbidden = float(min(len(pred), len(ref)) + 2)
    cost = np.where(dist <= tau, dist, forbidden)
    rows, cols = linear_sum_assignment(cost)
    pairs = zip(rows.tolist(), cols.tolist(), strict=True)
    return [(i, j, float(dist[i, j])) for i, j in pairs if dist[i, j] <= tau]


def _value_similarity(p: float | str, r: float | str, theta: float) -> float:
    if isinstance(p, str) or isinstance(r, str):
        return 1.0 if p == r else 0.0
    # a zero reference has no scale: only an exact 0 is right
    err = abs(p - r) / abs(r) if r != 0 else (0.0 if p == 0 else 1.0)
    if err <= _EXACT:
        return 1.0
    if theta == 0:  # exact match only
        return 0.0
    return 1.0 - min(1.0, err / theta)


def _empty(
    reason: str, tau: float, theta: float, n_pred: int = 0, n_ref: int = 0
) -> dict[str, Any]:
    return {
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "orientation": None,
        "matched": 0,
        "n_pred": n_pred,
        "n_ref": n_ref,
        "tau": tau,
        "theta": theta,
        "reason": reason,
        "pairs": [],
    }


def _score(
    pred: dict[str, float | str],
    ref: dict[str, float | str],
    pairs: list[tuple[int, int, float]],
    theta: float,
) -> tuple[float, list[dict[str, Any]]]:
    pkeys, rkeys = list(pred), list(ref)
    total, detail = 0.0, []
    for i, j, d in pairs:
        p, r = pred[pkeys[i]], ref[rkeys[j]]
        s = (1.0 - d) * _value_similarity(p, r, theta)
        total += s
        detail.append(
            {
                "pred_key": pkeys[i],
                "ref_key": rkeys[j],
                "key_distance": d,
                "pred": p,
                "ref": r,
                "score": s,
            }
        )
    return total, detail


def _check(tau: float, thetas: Sequence[float]) -> None:
    if not 0 <= tau <= 1:
        raise ValueError(f"tau must be in [0, 1], got {tau}")
    if not thetas or any(t < 0 for t in thetas):
        raise ValueError(f"thetas must be non-empty and >= 0, got {list(thetas)}")


def rms_sweep(
    pred: TableInput,
    ref: TableInput,
    tau: float = 0.5,
    thetas: Sequence[float] = DEFAULT_THETAS,
) -> list[dict[str, Any]]:
    """RMS at each theta (one dict per theta, same keys as :func:`rms`).

    Keys are matched once (the assignment does not depend on theta), then scored per theta.
    For a fixed assignment a point's score only grows with theta, and both orientations have
    the same point counts, so precision, recall and F1 are non-decreasing along the sweep.
    """
    _check(tau, thetas)
    pred_rows, ref_rows = _as_rows(pred), _as_rows(ref)
    if ref_rows is None:
        return [_empty("no table in reference", tau, t) for t in thetas]
    ref_pts = table_points(ref_rows)
    if not ref_pts:
        return [_empty("reference table has no data cells", tau, t) for t in thetas]
    if pred_rows is None:
        return [_empty("no table in prediction", tau, t, n_ref=len(ref_pts)) for t in thetas]
    orientations = {
        "as_given": table_points(pred_rows),
        "transposed": table_points(_transpose(pred_rows)),
    }
    if not orientations["as_given"]:
        msg = "prediction table has no data cells"
        return [_empty(msg, tau, t, n_ref=len(ref_pts)) for t in thetas]
    rkeys = list(ref_pts)
    matched = {name: _assign(list(pts), rkeys, tau) for name, pts in orientations.items()}

    out: list[dict[str, Any]] = []
    for theta in thetas:
        best: dict[str, Any] | None = None
        for name, pts in orientations.items():  # as_given first: it wins ties
            total, detail = _score(pts, ref_pts, matched[name], theta)
            precision, recall = total / len(pts), total / len(ref_pts)
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            if best is None or f1 > best["f1"]:
                best = {
                    "precision": precision,
                    "recall": recall,
                    "f1": f1,
                    "orientation": name,
                    "matched": len(detail),
                    "n_pred": len(pts),
                    "n_ref": len(ref_pts),
                    "tau": tau,
                    "theta": theta,
                    "reason": None,
                    "pairs": detail,
                }
        assert best is not None  # there are two orientations: the first sets it
        out.append(best)
    return out


def rms(
    pred_text_or_rows: TableInput,
    ref_text_or_rows: TableInput,
    tau: float = 0.5,
    theta: float = 0.05,
) -> dict[str, Any]:
    """RMS precision / recall / F1 of a predicted table against a reference table.

    Inputs are markdown text (the first table is used) or rows of cells. Returns a dict with
    ``precision, recall, f1`` (floats in [0, 1]), ``orientation`` ("as_given" / "transposed",
    the better-F1 reading of the prediction; None on failure), ``matched, n_pred, n_ref``
    (counts), ``tau, theta``, ``reason`` (None, or why the score is 0 - never an exception for
    bad input) and ``pairs`` (one dict per matched key: ``pred_key, ref_key, key_distance,
    pred, ref, score``).
    """
    return rms_sweep(pred_text_or_rows, ref_text_or_rows, tau=tau, thetas=(theta,))[0]
