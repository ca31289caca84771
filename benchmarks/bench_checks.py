"""The answer checks (scoring/answer_checks.py: the line under each Arena pane and what
`judge --rescore` stores) measured against verdicts, in this order:

1. **People outside this project** — the yardstick: FinanceBench's authors' verdicts on 1,200
   published model answers (the bundle's `financebench-labelled/`, benchmarks/people_verdicts.py),
   per kind of reference (figure, yes/no, list, prose) and per question type. Goals (issue 54):
   figure precision ≥ 0.97 and recall ≥ 0.90; yes/no precision ≥ 0.95 and recall ≥ 0.75; prose:
   at most 5 % of people-correct answers called incorrect; κ ≥ 0.75 over the answers the checks
   decide; no refusal called correct. Every disagreement goes to one Markdown file (--out,
   gitignored under data/bench/: it quotes the bundle's answers).
2. **A regression set of verdicts this project wrote** — 780 published answers from five public
   sources labelled by the project's own readers while the rules were written (see
   benchmarks/verdicts/README.md); it guards against regressions, it is not people's yardstick.
   Its disagreements go to benchmarks/verdicts/disagreements.md (--regression-out).
3. The figures reader against 100 hand-labelled answers.

For each: precision of "correct" (of the answers the checks call correct, the share the verdicts
call correct), recall (of the answers the verdicts call correct, the share the checks confirm),
Cohen's κ (sklearn) on the answers the checks decided, refusals called correct, the share
deferred (left to the judge or a person), and time per answer.

`--llm N` also measures, on N FinanceBench answers people called correct or incorrect
(benchmarks/checks_models.py): the rules alone, the offline verdict (rules, then the local
model's extraction where they defer) and the LLM judge; the judge's figures are kept in the
workspace as `fintrade-tui calibrate-judge` keeps them.

    .venv/bin/python -m benchmarks.bench_checks [--bundle DIR] [--out PATH] [--mode
        tolerance|benchmark] [--llm N [--model NAME] [--config PATH]]
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from benchmarks import harness
from benchmarks import people_verdicts as pv

HERE = harness.ROOT / "benchmarks" / "verdicts"
HELD_OUT = "financereasoning"  # kept out of all tuning of the checks
GOALS = {"precision": 0.97, "recall": 0.75, "kappa": 0.7}
BENCHMARK_OF = {"pot-tatqa": "tatqa", "cot-fin-bench": "finqa", "convfinqa-sonnet": "convfinqa"}


def load(folder: Path = HERE) -> list[dict[str, Any]]:
    """The labelled items: items.jsonl joined with every labels-<source>.jsonl by id."""
    items = {}
    for line in (folder / "items.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            items[item["id"]] = item
    out = []
    for path in sorted(folder.glob("labels-*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            label = json.loads(line)
            if label["id"] not in items:
                raise SystemExit(f"{path.name}:{n}: id {label['id']} is not in items.jsonl")
            out.append(items[label["id"]] | {"person": label["verdict"], "note": label["note"]})
    return out


def question(item: dict[str, Any]) -> Any:
    """The item as the checks see a question: its benchmark, text, reference and units."""
    extra = {k: item[k] for k in ("units", "answer_type") if item.get(k)}
    if item.get("units"):
        extra["scale"] = item["units"]  # TAT-QA's scale word ("million")
    return SimpleNamespace(
        id=item["id"],
        source=BENCHMARK_OF.get(item["source"], item["source"]),
        text=item["question"].split("\n\n")[0],  # the question; its table and text apart
        reference_answer=str(item["reference"]),
        extra=extra,
    )


def checks_label(verdict: str) -> str | None:
    from fintrade_tui.judging.rescore import label_of

    return label_of(verdict)


def run(items: list[dict[str, Any]], mode: str | None) -> tuple[list[dict[str, Any]], float]:
    """Each item with the checks' verdict, label and reason; the seconds per answer."""
    from fintrade_tui.scoring.answer_checks import check_match

    start = time.perf_counter()
    rows = []
    for item in items:
        q = question(item)
        m = check_match(q, item["answer"], None, None if mode == "benchmark" else mode)
        rows.append(item | {"verdict": m.verdict, "checks": checks_label(m.verdict),
                            "reason": m.reason})  # fmt: skip
    return rows, (time.perf_counter() - start) / max(1, len(items))


def disagreements(rows: list[dict[str, Any]], path: Path) -> int:
    """Write every answer where the checks and the person differ; how many."""
    differ = [r for r in rows if r["checks"] is not None and r["checks"] != r["person"]]
    differ = [r for r in differ if not (r["checks"] == "incorrect" and r["person"] == "refusal")]
    undecided = [r for r in rows if r["checks"] is None and r["person"] == "correct"]
    lines = ["# Answer checks vs the regression set (verdicts this project wrote): the "
             "disagreements", "",
             "Written by `python -m benchmarks.bench_checks`; one entry per answer: what the "
             "checks said and why, what the project's reader said and why. A refusal the checks "
             "call incorrect is not counted as a disagreement.", ""]  # fmt: skip
    for title, group in (("Decided differently", differ), ("Left undecided, reader: correct",
                                                           undecided)):  # fmt: skip
        lines += [f"## {title} ({len(group)})", ""]
        for r in sorted(group, key=lambda r: r["id"]):
            held = " (held out)" if r["source"] == HELD_OUT else ""
            lines.append(f"- **{r['id']}**{held} — checks: {r['checks'] or r['verdict']}, "
                         f"reader: {r['person']}")  # fmt: skip
            lines.append(f"  - reference: `{_one(str(r['reference']), 80)}`; answer ends: "
                         f"`{_one(r['answer'][-160:], 160)}`")  # fmt: skip
            lines.append(f"  - checks: {_one(r['reason'], 240)}")
            lines.append(f"  - reader: {_one(r['note'], 160)}")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return len(differ)


def _one(text: str, width: int) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= width else text[: width - 3] + "..."


def figure_scores(folder: Path = HERE) -> list[list[object]]:
    """The figures reader against the hand labels of figure_labels.jsonl: per source, figures
    found, labelled, matched (their spans overlap, one to one), precision, recall, and the
    matched figures whose value differs from the label's."""
    from fintrade_tui.scoring.figures import figures

    by: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for line in (folder / "figure_labels.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        text = item["text"]
        found = [f for f in figures(text, ranges=False) if not f.is_year]
        labels = [(g["start"], g["start"] + len(g["text"]), g["value"]) for g in item["figures"]]
        used: set[int] = set()
        matched = wrong = 0
        for f in found:
            for k, (a, b, value) in enumerate(labels):
                if k not in used and f.span[0] < b and a < f.span[1]:
                    used.add(k)
                    matched += 1
                    wrong += abs(f.value - value) > 1e-6 * max(1.0, abs(value))
                    break
        for key in (item["source"], "all"):
            counts = by[key]
            counts[0] += len(found)
            counts[1] += len(labels)
            counts[2] += matched
            counts[3] += wrong
    rows = []
    for src in sorted(by, key=lambda s: (s == "all", s)):
        found_n, labelled, matched, wrong = by[src]
        rows.append([src, found_n, labelled, matched, f"{matched / max(1, found_n):.3f}",
                     f"{matched / max(1, labelled):.3f}", wrong])  # fmt: skip
    return rows


def _row(name: str, s: dict[str, Any]) -> list[object]:
    return [name, s["n"], s["people correct"], s["checks correct"], f"{s['precision']:.3f}",
            f"{s['recall']:.3f}", f"{s['kappa']:.3f}", s["refusals called correct"],
            f"{s['deferred']:.1%}"]  # fmt: skip


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--bundle", type=Path, default=Path("../shared/data"))
    ap.add_argument("--out", type=Path, default=harness.ROOT / "data" / "bench" /
                    "financebench-disagreements.md")  # fmt: skip
    ap.add_argument("--regression-out", type=Path, default=HERE / "disagreements.md")
    ap.add_argument("--mode", default="tolerance", help="tolerance (default) or benchmark")
    ap.add_argument("--llm", type=int, default=0, help="FinanceBench answers for the model paths")
    ap.add_argument("--model", help="registry name for --llm (default: the configured judge)")
    ap.add_argument("--config", help="config.yaml for --llm (default: the project's)")
    args = ap.parse_args()
    people = pv.load(pv.path_in(args.bundle))
    harness.log(f"{len(people)} answers with FinanceBench's people's verdicts")
    rows, per = pv.run_checks(people, args.mode)
    n = pv.disagreements(rows, args.out)
    harness.report(f"Answer checks vs FinanceBench's people (mode {args.mode})",
                   ["answers by", *pv.COLUMNS], pv.tables(rows))  # fmt: skip
    print(f"\n{per * 1000:.2f} ms per answer; {n} disagreements written to {_shown(args.out)}\n")
    items = load()
    harness.log(f"{len(items)} answers with verdicts this project wrote (the regression set)")
    rows, per = run(items, args.mode)
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[r["source"]].append(r)
    table = [_row(src, pv.scores(rs)) for src, rs in sorted(by.items()) if src != HELD_OUT]
    tuned = [r for r in rows if r["source"] != HELD_OUT]
    table.append(_row("all tuned sources", pv.scores(tuned)))
    table.append(_row(f"held out: {HELD_OUT}", pv.scores(by[HELD_OUT])))
    table.append(_row("all", pv.scores(rows)))
    n = disagreements(rows, args.regression_out)
    cols = ["source", "answers", "project: correct", "checks: correct", "precision", "recall",
            "κ", "refusals called correct", "undecided"]  # fmt: skip
    harness.report(f"Regression set: verdicts this project wrote (mode {args.mode})", cols, table)
    print(f"\n{per * 1000:.2f} ms per answer; {n} disagreements written to "
          f"{_shown(args.regression_out)}\n")  # fmt: skip
    cols = ["source", "figures found", "labelled", "matched", "precision", "recall",
            "value differs"]  # fmt: skip
    harness.report("The figures reader vs 100 hand-labelled answers", cols, figure_scores())
    if args.llm:
        from benchmarks.checks_models import model_paths

        print()
        model_paths(args.bundle, args.llm, args.model, args.config)


def _shown(path: Path) -> Path:
    path = path.resolve()
    return path.relative_to(harness.ROOT) if path.is_relative_to(harness.ROOT) else path


if __name__ == "__main__":
    main()
