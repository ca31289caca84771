"""Statistics room: FinTradeBench's final lane tables — every condition against a baseline
condition, per model, in lanes (All and each category the question set carries).

A row is one comparison (model, condition vs baseline) in one lane: N paired questions, Δ = the
mean paired difference on the 1–5 scale, its paired bootstrap interval, the win / tie / loss
shares and a Wilcoxon signed-rank p Holm-corrected over the tests of the table. Scores under
different judging protocols ("per_condition", "common") are never mixed: one table per protocol.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from fintrade_tui.stats.paired import bootstrap_ci, finite_or_none, holm, paired_tests, stars
from fintrade_tui.stats.tables import CATEGORIES, category_columns, ordered_conditions
from fintrade_tui.workspace.evidence import LABELS

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

ALL = "All"
DEFAULT_PROTOCOL = "per_condition"  # scores from before protocols existed were judged so
LANE_COLUMNS = [
    "kind",
    "protocol",
    "model",
    "condition",
    "baseline",
    "lane",
    "n_paired",
    "delta",
    "ci_low",
    "ci_high",
    "win_pct",
    "tie_pct",
    "loss_pct",
    "wilcoxon_p",
    "wilcoxon_p_holm",
    "stars",
    "reason",
]


def protocol_of(score: dict[str, Any]) -> str:
    """The judging protocol a score was given under (human scores and old rows: per_condition)."""
    return score.get("protocol") or (score.get("detail") or {}).get("protocol") or DEFAULT_PROTOCOL


def run_scores(
    ws: Connection, kind: str = "llm", source: str | None = None
) -> list[dict[str, Any]]:
    """One row per scored run and protocol: ``run_id``, ``model``, ``condition``,
    ``category``, ``source``, ``question_id``, ``protocol`` and ``score`` = the mean over the
    four rubric dimensions of each dimension's value that counts (of the latest ok scores, by
    the rule of workspace/score_reader.py: an adjudicated dimension its settled score, any
    other the mean over annotators)."""
    from fintrade_tui.stats.breakdown import run_fields
    from fintrade_tui.workspace.questions import load_questions
    from fintrade_tui.workspace.run_records import COMPLETED, RunStore
    from fintrade_tui.workspace.score_reader import counted_scores
    from fintrade_tui.workspace.scores import ScoreStore

    latest = ScoreStore(ws).latest(kind=kind, protocol=None)  # every protocol, kept apart
    if not latest:
        return []
    counted = counted_scores(s | {"protocol": protocol_of(s)} for s in latest)
    by_run = {key: float(np.mean(list(dims.values()))) for key, dims in counted.items() if dims}
    runs = {r["id"]: r for r in RunStore(ws).list(status=COMPLETED, limit=1_000_000)}
    qs = {q.id: q for q in load_questions(ws)}
    out = []
    for (rid, protocol), score in sorted(by_run.items()):
        if (row := run_fields(rid, runs, qs, source)) is not None:
            out.append(row | {"protocol": protocol, "score": score})
    return out


def _lanes(categories: Iterable[str]) -> list[str]:
    """All, then the categories present, in the accuracy table's order."""
    present = set(categories)
    return [ALL, *(c for c in category_columns(present)[:-1] if c in present)]


def _per_question(
    rows: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[Any, str], list[str], list[str]]:
    """mean score[model][condition][question], category per question, models, conditions."""
    acc: dict[str, dict[str, dict[Any, list[float]]]] = {}
    category: dict[Any, str] = {}
    models: list[str] = []
    conditions: list[str] = []
    for r in rows:
        s = finite_or_none(r.get("score"))
        if s is None:
            continue
        model, cond, qid = str(r["model"]), str(r["condition"]), r["question_id"]
        if model not in acc:
            acc[model] = {}
            models.append(model)
        if cond not in conditions:
            conditions.append(cond)
        cat = str(r.get("category") or "").strip()
        category.setdefault(qid, cat.upper() if cat.upper() in CATEGORIES else cat)
        acc[model].setdefault(cond, {}).setdefault(qid, []).append(s)
    means = {
        m: {c: {q: float(np.mean(v)) for q, v in qs.items()} for c, qs in conds.items()}
        for m, conds in acc.items()
    }
    return means, category, models, conditions


def compare(
    base: list[float], mine: list[float], confidence: float, n_resamples: int, seed: int
) -> dict[str, Any]:
    """One paired comparison (same questions, same order): N, Δ, CI, W/T/L %, Wilcoxon p."""
    tests = paired_tests(base, mine)
    ci = bootstrap_ci(base, mine, confidence=confidence, n_resamples=n_resamples, seed=seed)
    d = np.asarray(mine, dtype=float) - np.asarray(base, dtype=float)
    n = int(d.size)

    def pct(mask: Any) -> float | None:
        return float(mask.mean() * 100.0) if n else None

    return {
        "n_paired": n,
        "delta": tests["mean_diff"],
        "ci_low": ci[0] if ci else None,
        "ci_high": ci[1] if ci else None,
        "win_pct": pct(d > 0),
        "tie_pct": pct(d == 0),
        "loss_pct": pct(d < 0),
        "wilcoxon_p": tests["wilcoxon_p"],
        "reason": tests["wilcoxon_reason"],
    }


def lane_table(
    rows: list[dict[str, Any]],
    baseline: str = "no_rag",
    *,
    kind: str = "llm",
    protocol: str = DEFAULT_PROTOCOL,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    seed: int = 0,
) -> dict[str, Any]:
    """The lane table of one protocol's rows (``model``, ``condition``, ``category``,
    ``question_id``, ``score``): every non-baseline condition of every model against
    ``baseline``, in lanes All + each category. Repeats of a question are averaged first.

    Returns ``{"kind", "protocol", "baseline", "lanes", "comparisons" ([model, condition]),
    "confidence", "holm": {"m", "n_comparisons", "n_lanes", "family"}, "rows"}``; each row has
    the keys of LANE_COLUMNS. The Holm family is every row of this table with a Wilcoxon p."""
    means, category, models, seen = _per_question(rows)
    lanes = _lanes(category.values())
    conditions = ordered_conditions(seen, baseline)
    out_rows: list[dict[str, Any]] = []
    comparisons: list[list[str]] = []
    for model in models:
        base = means[model].get(baseline, {})
        for cond in conditions[1:]:
            mine = means[model].get(cond)
            if not mine:
                continue
            comparisons.append([model, cond])
            for lane in lanes:
                # sorted so the bootstrap's resamples are reproducible
                common = sorted(
                    (q for q in set(base) & set(mine) if lane == ALL or category[q] == lane),
                    key=str,
                )
                row = {
                    "kind": kind,
                    "protocol": protocol,
                    "model": model,
                    "condition": cond,
                    "baseline": baseline,
                    "lane": lane,
                    **compare(
                        [base[q] for q in common],
                        [mine[q] for q in common],
                        confidence,
                        n_resamples,
                        seed,
                    ),
                    "wilcoxon_p_holm": None,
                    "stars": "",
                }
                if not base:
                    row["reason"] = f"no {baseline} scores for this model"
                out_rows.append(row)
    tested = [r for r in out_rows if r["wilcoxon_p"] is not None]
    for r, p in zip(tested, holm([r["wilcoxon_p"] for r in tested]), strict=True):
        r["wilcoxon_p_holm"], r["stars"] = p, stars(p)
    return {
        "kind": kind,
        "protocol": protocol,
        "baseline": baseline,
        "lanes": lanes,
        "comparisons": comparisons,
        "confidence": confidence,
        "holm": _family(len(tested), len(comparisons), len(lanes), len(out_rows)),
        "rows": out_rows,
    }


def workspace_lanes(
    ws: Connection,
    kind: str = "llm",
    source: str | None = None,
    baseline: str = "no_rag",
    **kw: Any,
) -> list[dict[str, Any]]:
    """The lane tables of one score kind over the workspace (one per protocol present)."""
    return lane_tables(run_scores(ws, kind, source), baseline, kind=kind, **kw)


def _family(m: int, n_comparisons: int, n_lanes: int, n_rows: int) -> dict[str, Any]:
    """The Holm family in words, exactly as the report prints it."""
    text = (
        f"Holm over the {m} test{'s' if m != 1 else ''} of this table: "
        f"{n_comparisons} comparison{'s' if n_comparisons != 1 else ''} × "
        f"{n_lanes} lane{'s' if n_lanes != 1 else ''}"
    )
    if m != n_rows:
        text += f", less {n_rows - m} with no test (fewer than 2 pairs)"
    return {"m": m, "n_comparisons": n_comparisons, "n_lanes": n_lanes, "family": text}


def lane_tables(
    rows: list[dict[str, Any]], baseline: str = "no_rag", *, kind: str = "llm", **kw: Any
) -> list[dict[str, Any]]:
    """One lane table per judging protocol present (per_condition first), never mixed."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r.get("protocol") or DEFAULT_PROTOCOL, []).append(r)
    order = sorted(groups, key=lambda p: (p != DEFAULT_PROTOCOL, p))
    return [lane_table(groups[p], baseline, kind=kind, protocol=p, **kw) for p in order]


def fmt_num(v: float | None, fmt: str = "+.2f") -> str:
    return "—" if v is None else format(round(v, 2) + 0.0, fmt)


def fmt_ci(r: dict[str, Any]) -> str:
    return "—" if r["ci_low"] is None else f"[{fmt_num(r['ci_low'])}, {fmt_num(r['ci_high'])}]"


def fmt_wtl(r: dict[str, Any]) -> str:
    if r["win_pct"] is None:
        return "—"
    return "/".join(f"{r[k]:.0f}" for k in ("win_pct", "tie_pct", "loss_pct"))


def fmt_p(p: float | None) -> str:
    return "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")


def forest_bar(r: dict[str, Any], span: float, width: int = 41) -> str:
    """A text forest-plot row: ─ over the CI, ● at Δ, │ at zero, on [-span, +span]."""
    cells = [" "] * width

    def at(v: float) -> int:
        return max(0, min(width - 1, round((v / span + 1) / 2 * (width - 1))))

    if r["ci_low"] is not None:
        for i in range(at(r["ci_low"]), at(r["ci_high"]) + 1):
            cells[i] = "─"
    cells[at(0.0)] = "│"
    if r["delta"] is not None:
        cells[at(r["delta"])] = "●"
    return "".join(cells)


def span_of(rows: list[dict[str, Any]]) -> float:
    """A symmetric axis half-width covering every Δ and CI bound (at least 0.5)."""
    vals = [abs(r[k]) for r in rows for k in ("delta", "ci_low", "ci_high") if r[k] is not None]
    return float(max([0.5, *vals]))


def to_markdown(table: dict[str, Any]) -> str:
    """One protocol's lane table, its Holm family, then the forest plot as a table."""
    base = LABELS.get(table["baseline"], table["baseline"])
    pct = round(table["confidence"] * 100)
    lines = [
        f"### Lanes: {table['kind']} scores, protocol {table['protocol']}, vs {base}",
        "",
        f"| Model | Condition | Lane | N | Δ | {pct}% CI | W/T/L % | p (Holm) |",
        "|:--|:--|:--|--:|--:|:--|:--|--:|",
    ]
    for r in table["rows"]:
        cond = LABELS.get(r["condition"], r["condition"])
        lines.append(
            f"| {r['model']} | {cond} | {r['lane']} | {r['n_paired']} | {fmt_num(r['delta'])} |"
            f" {fmt_ci(r)} | {fmt_wtl(r)} | {fmt_p(r['wilcoxon_p_holm'])}{r['stars']} |"
        )
    span = span_of(table["rows"])
    lines += [
        "",
        f"Δ = mean paired difference (condition − {base}) on the 1–5 scale, per question "
        f"answered under both; {pct}% paired bootstrap CI (BCa); W/T/L = share of paired "
        "questions scored higher / equal / lower than the baseline; p = Wilcoxon signed-rank, "
        f"{table['holm']['family']}.",
        "",
        f"Forest plot of Δ (axis −{span:.2f} … +{span:.2f}, │ = 0):",
        "",
        "| Model · condition · lane | Δ [CI] | |",
        "|:--|:--|:--|",
    ]
    for r in table["rows"]:
        cond = LABELS.get(r["condition"], r["condition"])
        lines.append(
            f"| {r['model']} · {cond} · {r['lane']} | {fmt_num(r['delta'])} {fmt_ci(r)} |"
            f" `{forest_bar(r, span)}` |"
        )
    return "\n".join(lines) + "\n"


def flatten(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row of several lane tables (for CSV), each with its Holm family size."""
    return [r | {"holm_m": t["holm"]["m"]} for t in tables for r in t["rows"]]
