"""The yardstick of the answer checks: verdicts people outside this project wrote.

FinanceBench's authors read and labelled their published model answers (correct / incorrect /
refusal); the bundle's `financebench-labelled/runs.jsonl` holds 1,200 of them (its README),
in the generic run JSONL that `runs import` reads. This module reads that file as the checks
see it — each answer's question, reference and people's label — sorts every answer by the kind
of reference it faces (read from the reference as published, never from question ids), and
scores a set of verdicts against people's: per kind, per question type, and over all.

Kinds of reference, as a reader sorts them:
- `figure`: the reference is a figure and nothing else ("$1577.00", "4.2%", "0.83");
- `yes/no`: it opens with yes or no ("Yes, there is decline of ~42%...");
- `list`: a short list of figures (answer_kinds.LIST);
- `prose`: anything else — a sentence with a figure in it, a name, an analysis.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

FILE = Path("financebench-labelled") / "runs.jsonl"  # inside the data bundle
KINDS = ("figure", "yes/no", "list", "prose")
_BARE_FIGURE = re.compile(r"^\s*[-+]?\$?\s*-?[\d,]*\.?\d+\s*%?\s*$")


def path_in(bundle: Path) -> Path:
    """The labelled answers' file in `bundle`; a missing file stops with the fix."""
    path = bundle / FILE
    if not path.is_file():
        raise SystemExit(f"{path}: no labelled answers (fix: --bundle names the data bundle)")
    return path


def load(path: Path) -> list[dict[str, Any]]:
    """One row per answer: id, question, reference, answer, people's label, question type,
    model, condition and the kind of reference."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        r = json.loads(line)
        out.append(
            {
                "id": f"{r['question_id']}#{n}",
                "question_id": r["question_id"],
                "question": r["question"],
                "reference": r["reference_answer"],
                "answer": r["answer"] or "",
                "person": r["label"],
                "type": r.get("category") or "",
                "model": r.get("model", ""),
                "condition": r.get("condition", ""),
                "kind": kind_of(r["reference_answer"], r["question"]),
            }
        )
    return out


def kind_of(reference: str, question: str = "") -> str:
    """figure | yes/no | list | prose, as the module docstring sorts references."""
    from fintrade_tui.scoring.answer_kinds import LIST, YES_NO, asks_year, reference_kind

    if _BARE_FIGURE.match(reference or ""):
        return "figure"
    kind = reference_kind(reference, asks_year(question))
    return {YES_NO: "yes/no", LIST: "list"}.get(kind, "prose")


def question(row: dict[str, Any]) -> Any:
    """The row as the checks see a question (FinanceBench's own rule: none, read as a person)."""
    return SimpleNamespace(
        id=row["question_id"],
        source="financebench",
        text=row["question"],
        reference_answer=row["reference"],
        extra={},
    )


def run_checks(rows: list[dict[str, Any]], mode: str) -> tuple[list[dict[str, Any]], float]:
    """Each answer with the checks' verdict, label and reason; the seconds per answer."""
    from fintrade_tui.judging.rescore import label_of
    from fintrade_tui.scoring.answer_checks import check_match

    start = time.perf_counter()
    out = []
    for r in rows:
        m = check_match(question(r), r["answer"], None, None if mode == "benchmark" else mode)
        out.append(r | {"verdict": m.verdict, "checks": label_of(m.verdict), "reason": m.reason})
    return out, (time.perf_counter() - start) / max(1, len(rows))


def scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Against people's labels, for rows carrying `checks` (correct / incorrect / refusal /
    None for deferred): precision and recall of "correct", Cohen's κ (sklearn) on the answers
    the checks decide (correct vs not), people-correct answers called incorrect, refusals
    called correct, the share deferred."""
    from sklearn.metrics import cohen_kappa_score

    said = [r for r in rows if r["checks"] == "correct"]
    right = [r for r in rows if r["person"] == "correct"]
    decided = [r for r in rows if r["checks"] is not None]
    both = sum(r["person"] == "correct" for r in said)
    truth = [r["person"] == "correct" for r in decided]
    guess = [r["checks"] == "correct" for r in decided]
    kappa = cohen_kappa_score(truth, guess) if len(set(truth) | set(guess)) > 1 else float("nan")
    wrongly = sum(r["checks"] == "incorrect" for r in right)
    return {
        "n": len(rows),
        "people correct": len(right),
        "checks correct": len(said),
        "precision": both / len(said) if said else float("nan"),
        "recall": both / len(right) if right else float("nan"),
        "kappa": kappa,
        "correct called incorrect": wrongly,
        "correct called incorrect share": wrongly / len(right) if right else float("nan"),
        "refusals called correct": sum(r["person"] == "refusal" for r in said),
        "deferred": 1 - len(decided) / len(rows) if rows else float("nan"),
    }


def grouped(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[r[key]].append(r)
    return by


COLUMNS = ["answers", "people: correct", "checks: correct", "precision", "recall", "κ",
           "correct → incorrect", "refusals → correct", "deferred"]  # fmt: skip


def table_row(name: str, s: dict[str, Any]) -> list[object]:
    """One row of the tables the bench prints (COLUMNS after the name)."""
    called = f"{s['correct called incorrect']} ({s['correct called incorrect share']:.1%})"
    return [name, s["n"], s["people correct"], s["checks correct"], f"{s['precision']:.3f}",
            f"{s['recall']:.3f}", f"{s['kappa']:.3f}", called, s["refusals called correct"],
            f"{s['deferred']:.1%}"]  # fmt: skip


def tables(rows: list[dict[str, Any]]) -> list[list[object]]:
    """Rows per kind of reference, per question type, then all."""
    by_kind = grouped(rows, "kind")
    out = [table_row(f"reference: {k}", scores(by_kind[k])) for k in KINDS if by_kind.get(k)]
    for t, group in sorted(grouped(rows, "type").items()):
        out.append(table_row(f"type: {t}", scores(group)))
    out.append(table_row("all", scores(rows)))
    return out


def disagreements(rows: list[dict[str, Any]], path: Path) -> int:
    """Every answer where the checks and people differ, grouped by kind, in one Markdown file
    (gitignored: it quotes the bundle's answers); how many. A refusal the checks call
    incorrect is no disagreement."""
    differ = [r for r in rows if r["checks"] is not None and r["checks"] != r["person"]]
    differ = [r for r in differ if not (r["checks"] == "incorrect" and r["person"] == "refusal")]
    lines = ["# Answer checks vs FinanceBench's people: the disagreements", "",
             "Written by `make bench-checks`; one entry per answer the checks decided otherwise "
             "than FinanceBench's authors: the checks' reason, the reference and the answer's "
             "end. Deferred answers are not listed.", ""]  # fmt: skip
    for kind in KINDS:
        group = [r for r in differ if r["kind"] == kind]
        lines += [f"## reference: {kind} ({len(group)})", ""]
        for r in sorted(group, key=lambda r: r["id"]):
            lines.append(f"- **{r['id']}** ({r['model']}, {r['condition']}) — checks: "
                         f"{r['checks']}, people: {r['person']}")  # fmt: skip
            lines.append(f"  - question: {_one(r['question'], 160)}")
            lines.append(f"  - reference: `{_one(r['reference'], 160)}`")
            lines.append(f"  - answer ends: `{_one(r['answer'][-240:], 240)}`")
            lines.append(f"  - checks: {_one(r['reason'], 280)}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return len(differ)


def _one(text: str, width: int) -> str:
    text = " ".join(str(text).split()).replace("`", "'")
    return text if len(text) <= width else text[: width - 3] + "..."
