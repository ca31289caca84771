"""Results screen text (no widgets): the score kinds the matrix cycles through, the agreement
table's columns, a number as the tables show it, a failure case's figures on a few lines, the
accuracy matrix's headers for a question set's categories, and the lane table's and the
inter-annotator table's rows as text."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from fintrade_tui.safe_text import plain, printable

SCORE_KINDS = ("llm", "human", "labels", "match")
KIND_NAMES = {"llm": "LLM-judge", "human": "human", "labels": "label", "match": "matcher"}
AGREEMENT_COLUMNS = ("n", "mae", "bias", "spearman_rho", "exact", "within_1", "qwk")
AGREEMENT_HEADERS = ("Dimension", "n", "MAE", "Bias", "ρ", "Exact", "±1", "κ (quad)")


def fmt_number(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, int):
        return str(v)
    return f"{v:.2f}"


def case_numbers(numbers: dict[str, Any]) -> str:
    """A case's figures on a few short lines."""
    parts = []
    for k, v in numbers.items():
        if isinstance(v, dict):
            v = ", ".join(
                f"{a} {fmt_number(b) if not isinstance(b, str) else b}" for a, b in v.items()
            )
        elif isinstance(v, list):
            v = "; ".join(
                " ".join(fmt_number(x) if isinstance(x, float) else str(x) for x in c.values() if x)
                if isinstance(c, dict)
                else str(c)
                for c in v
            )
        elif isinstance(v, float):
            v = fmt_number(v)
        parts.append(f"{k}: {v}")
    return "\n".join(parts)


def matrix_headers(columns: list[str]) -> list[str]:
    """The accuracy matrix's headers for the table's category columns."""
    return ["Model", "Condition", *("Overall" if c == "overall" else c for c in columns), "n"]


LANE_HEADERS = ("Model", "Condition", "Lane", "N", "Δ", "95% CI", "W/T/L %", "p (Holm)")
ANNOTATOR_HEADERS = ("Dimension", "Annotators", "n", "κ (quad)", "α (ord)", "Exact %", "±1 %")
# a look-ahead mark (models/cutoffs.py) as shown: only "may know" asks for attention
LOOK_AHEAD_STYLE = {"may know": "bold yellow", "after cutoff": "dim", "unknown": "dim"}


def lane_cells(r: dict[str, Any]) -> list[str]:
    """One lane-table row as the Results screen shows it."""
    from fintrade_tui.stats.lanes import fmt_ci, fmt_num, fmt_p, fmt_wtl
    from fintrade_tui.workspace.evidence import LABELS

    return [
        r["model"],
        LABELS.get(r["condition"], r["condition"]),
        r["lane"],
        str(r["n_paired"]),
        fmt_num(r["delta"]),
        fmt_ci(r),
        fmt_wtl(r),
        fmt_p(r["wilcoxon_p_holm"]) + r["stars"],
    ]


def lane_label(r: dict[str, Any], width: int = 22) -> str:
    """A forest-plot row's y label: model · condition · lane, shortened to fit."""
    from fintrade_tui.workspace.evidence import LABELS

    text = f"{r['model']} · {LABELS.get(r['condition'], r['condition'])} · {r['lane']}"
    return text if len(text) <= width else text[: width - 1] + "…"


def lanes_note(table: dict[str, Any], others: list[str]) -> str:
    """The line under the lane table: what Δ is, the Holm family, the other protocols."""
    more = f" Other protocols: {', '.join(others)} (p)." if others else ""
    return (
        f"Δ = mean paired difference vs {table['baseline']} (1–5), 95% bootstrap CI, "
        f"W/T/L = higher/equal/lower. {table['holm']['family']}.{more}"
    )


def annotator_cells(row: dict[str, Any]) -> list[str]:
    keys = ("n", "kappa_quad", "alpha_ordinal", "exact_pct", "within_1_pct")
    return [row["dimension"], row["annotators"], *(fmt_number(row[k]) for k in keys)]


def accuracy_note(table: dict[str, Any], kind: str, judges: list[dict[str, Any]]) -> str:
    """The line under the accuracy matrix: what % is, Δ, the marks, who judged."""
    from fintrade_tui.workspace.evidence import LABELS

    base = LABELS.get(table["baseline"], table["baseline"])
    what = {
        "labels": "% = share labelled correct (partial ½)",
        "match": "% = share the answer matcher calls correct (judge --rescore, m)",
    }.get(kind, f"% = mean {KIND_NAMES[kind]} accuracy score / 5 × 100")
    by = "".join(  # a local judge's scores are labelled as such
        f" Judge {j['judge']} = {j['model']}"
        + (" (local model)" if j["local"] else "")
        + f": {j['agreement_line']}."
        for j in judges
    )
    return (
        f"{what}. Δ vs {base}. * p<.05 ** p<.01 "
        f"*** p<.001 (paired Wilcoxon, Holm over {table['n_lanes']} lanes). n = questions." + by
    )


def case_text(case: dict[str, Any]) -> Text:
    """A failure case's detail pane: the question, the runs, why it is listed, its figures."""
    from fintrade_tui.models.cutoffs import describe
    from fintrade_tui.reports.failures import FILTER_LABELS

    text = Text()
    text.append(f"{case['question_id']} ", style="bold")
    text.append(f"({case['category']}, as of {case['as_of'] or '—'})\n", style="dim")
    text.append(printable(" ".join(case["question"].split())) + "\n\n")
    text.append(f"{case['model']} · {case['condition']} · runs {', '.join(case['run_ids'])}\n")
    text.append(f"{FILTER_LABELS[case['filter']]}: ", style="bold")
    text.append(printable(case["reason"]) + "\n")
    text.append(case_numbers(case["numbers"]) + "\n", style="dim")
    if case.get("cause"):
        from fintrade_tui.reports.causes import CAUSE_LABELS

        text.append(f"Cause: {CAUSE_LABELS[case['cause']]}: ", style="bold")
        text.append(printable(case["cause_rule"] or "") + "\n")
    if mark := case.get("look_ahead"):
        text.append(
            describe(mark, case["model"]) + "\n", style=LOOK_AHEAD_STYLE[mark["look_ahead"]]
        )
    text.append(
        "\nEnter: replay in the Arena (read-only) · x: export the case study", style="italic"
    )
    return text


FAILURE_HEADERS = ("Filter", "Question", "Cat", "Model", "Condition", "Runs", "Cause", "Why")


def failure_cells(case: dict[str, Any]) -> tuple[Any, ...]:
    """A failure case's row: ids, names and reasons come from files: Text, never markup."""
    from fintrade_tui.reports.causes import CAUSE_LABELS
    from fintrade_tui.reports.failures import FILTER_LABELS

    why = case["reason"] if len(case["reason"]) <= 28 else case["reason"][:27] + "…"
    return (
        FILTER_LABELS[case["filter"]],
        *(plain(v) for v in (case["question_id"], case["category"], case["model"])),
        plain(case["condition"]),
        ", ".join(case["run_ids"]),
        CAUSE_LABELS.get(case.get("cause") or "", "—"),
        plain(why),
    )
