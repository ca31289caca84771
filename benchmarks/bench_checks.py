"""Answer checks against people's verdicts: the deterministic matcher (scoring/answer_checks.py,
the line under each Arena pane and what `judge --rescore` stores) on the labelled set of
benchmarks/verdicts/ — 780 published model answers from five public sources, each labelled
correct / incorrect / refusal by reading it (see benchmarks/verdicts/README.md).

Per source, and for the held-out source apart (never used to tune the checks):
- precision of "correct": of the answers the checks call correct, the share people called correct;
- recall: of the answers people called correct, the share the checks confirm;
- Cohen's κ (sklearn) on the answers the checks decided (correct vs not correct);
- refusals called correct (goal 0), and the share the checks left undecided (open / deferred);
- time per answer.
Goals (issue 40): precision ≥ 0.97, recall ≥ 0.75, κ ≥ 0.7, no refusal called correct.

Every disagreement is written with the checks' reason and the person's note to one Markdown
file a reader can skim (--out, default benchmarks/verdicts/disagreements.md).

`--llm N` also measures, on N answers of each source (every k-th), side by side with the rules
alone on the same answers: the extraction path (judging/extraction.py: the model copies the
answer's conclusion as constrained JSON, the rules decide) and the LLM judge (its accuracy score
4 or 5 read as correct), with agreement and seconds per answer. `--model` names the registry
entry (default: the configured judge, the offline local model).

    .venv/bin/python -m benchmarks.bench_checks [--out PATH] [--mode tolerance|benchmark]
        [--llm N [--model NAME] [--config PATH]]
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from benchmarks import harness

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


def scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """precision, recall, κ, refusals called correct, undecided share for `rows`."""
    from sklearn.metrics import cohen_kappa_score

    said = [r for r in rows if r["checks"] == "correct"]
    right = [r for r in rows if r["person"] == "correct"]
    decided = [r for r in rows if r["checks"] is not None]
    both = sum(r["person"] == "correct" for r in said)
    truth = [r["person"] == "correct" for r in decided]
    guess = [r["checks"] == "correct" for r in decided]
    kappa = cohen_kappa_score(truth, guess) if len(set(truth) | set(guess)) > 1 else float("nan")
    return {
        "n": len(rows),
        "people correct": len(right),
        "checks correct": len(said),
        "precision": both / len(said) if said else float("nan"),
        "recall": both / len(right) if right else float("nan"),
        "kappa": kappa,
        "refusals called correct": sum(r["person"] == "refusal" for r in said),
        "undecided": 1 - len(decided) / len(rows) if rows else float("nan"),
    }


def disagreements(rows: list[dict[str, Any]], path: Path) -> int:
    """Write every answer where the checks and the person differ; how many."""
    differ = [r for r in rows if r["checks"] is not None and r["checks"] != r["person"]]
    differ = [r for r in differ if not (r["checks"] == "incorrect" and r["person"] == "refusal")]
    undecided = [r for r in rows if r["checks"] is None and r["person"] == "correct"]
    lines = ["# Answer checks vs people: the disagreements", "",
             "Written by `python -m benchmarks.bench_checks`; one entry per answer: what the "
             "checks said and why, what the person said and why. A refusal the checks call "
             "incorrect is not counted as a disagreement.", ""]  # fmt: skip
    for title, group in (("Decided differently", differ), ("Left undecided, people: correct",
                                                           undecided)):  # fmt: skip
        lines += [f"## {title} ({len(group)})", ""]
        for r in sorted(group, key=lambda r: r["id"]):
            held = " (held out)" if r["source"] == HELD_OUT else ""
            lines.append(f"- **{r['id']}**{held} — checks: {r['checks'] or r['verdict']}, "
                         f"person: {r['person']}")  # fmt: skip
            lines.append(f"  - reference: `{_one(str(r['reference']), 80)}`; answer ends: "
                         f"`{_one(r['answer'][-160:], 160)}`")  # fmt: skip
            lines.append(f"  - checks: {_one(r['reason'], 240)}")
            lines.append(f"  - person: {_one(r['note'], 160)}")
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


def sample(items: list[dict[str, Any]], per_source: int) -> list[dict[str, Any]]:
    """`per_source` items of each source, spread over it (every k-th)."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        by[item["source"]].append(item)
    out = []
    for src in sorted(by):
        rows = by[src]
        step = max(1, len(rows) // per_source)
        out += rows[::step][:per_source]
    return out


def llm_paths(items: list[dict[str, Any]], model_name: str | None, config: str | None) -> list:
    """Rows of the side-by-side table: rules alone, extraction + rules, the LLM judge."""
    import asyncio

    from fintrade_tui.config import load_config
    from fintrade_tui.judging.extraction import extract, extracted_match
    from fintrade_tui.judging.judge import JudgeInput, judge_run
    from fintrade_tui.models.resolve import resolve
    from fintrade_tui.workspace.questions import Question

    cfg = load_config(config)
    model = resolve(cfg, model_name or cfg.judging.model)
    rules, _ = run(items, "tolerance")
    extracted, judged = [], []
    took = {"extraction": 0.0, "judge": 0.0}
    for n, item in enumerate(items, 1):
        q = question(item)
        got = asyncio.run(extract(cfg, model, q.text, item["answer"]))
        took["extraction"] += got.seconds
        m = extracted_match(q, got, None, item["answer"])
        extracted.append(item | {"checks": checks_label(m.verdict), "reason": m.reason})
        full = Question(item["id"], q.source, "", q.text, q.reference_answer)
        start = time.perf_counter()
        score = asyncio.run(judge_run(cfg, JudgeInput({"id": item["id"], "answer": item["answer"]},
                                                      full), model))  # fmt: skip
        took["judge"] += time.perf_counter() - start
        label = (
            None if score.accuracy is None else "correct" if score.accuracy >= 4 else "incorrect"
        )
        judged.append(item | {"checks": label, "reason": f"judge accuracy {score.accuracy}"})
        harness.log(f"{n}/{len(items)} {item['id']}: extracted {got.kind} '{got.final_answer}' "
                    f"({got.seconds:.1f} s), judge {score.accuracy}")  # fmt: skip
    n = max(1, len(items))
    out = []
    for name, rows, secs in (
        ("rules alone", rules, None),
        (f"extraction ({model.name}) + rules", extracted, took["extraction"]),
        (f"LLM judge ({model.name}), accuracy ≥ 4", judged, took["judge"]),
    ):
        s = scores(rows)
        agree = sum((r["checks"] == "correct") == (r["person"] == "correct") for r in rows) / n
        out.append([name, s["n"], f"{agree:.3f}", f"{s['precision']:.3f}", f"{s['recall']:.3f}",
                    f"{s['kappa']:.3f}", "—" if secs is None else f"{secs / n:.1f}"])  # fmt: skip
    return out


def _row(name: str, s: dict[str, Any]) -> list[object]:
    return [name, s["n"], s["people correct"], s["checks correct"], f"{s['precision']:.3f}",
            f"{s['recall']:.3f}", f"{s['kappa']:.3f}", s["refusals called correct"],
            f"{s['undecided']:.1%}"]  # fmt: skip


def main() -> None:
    ap = harness.parser(__doc__)
    ap.add_argument("--out", type=Path, default=HERE / "disagreements.md")
    ap.add_argument("--mode", default="tolerance", help="tolerance (default) or benchmark")
    ap.add_argument("--llm", type=int, default=0, help="answers per source for the model paths")
    ap.add_argument("--model", help="registry name for --llm (default: the configured judge)")
    ap.add_argument("--config", help="config.yaml for --llm (default: the project's)")
    args = ap.parse_args()
    items = load()
    harness.log(f"{len(items)} labelled answers")
    rows, per = run(items, args.mode)
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[r["source"]].append(r)
    table = [_row(src, scores(rs)) for src, rs in sorted(by.items()) if src != HELD_OUT]
    tuned = [r for r in rows if r["source"] != HELD_OUT]
    table.append(_row("all tuned sources", scores(tuned)))
    table.append(_row(f"held out: {HELD_OUT}", scores(by[HELD_OUT])))
    table.append(_row("all", scores(rows)))
    n = disagreements(rows, args.out)
    cols = ["source", "answers", "people: correct", "checks: correct", "precision", "recall",
            "κ", "refusals called correct", "undecided"]  # fmt: skip
    harness.report(f"Answer checks vs people (mode {args.mode})", cols, table)
    shown = args.out.resolve().relative_to(harness.ROOT) if args.out.resolve().is_relative_to(
        harness.ROOT) else args.out  # fmt: skip
    print(f"\n{per * 1000:.2f} ms per answer; {n} disagreements written to {shown}\n")
    cols = ["source", "figures found", "labelled", "matched", "precision", "recall",
            "value differs"]  # fmt: skip
    harness.report("The figures reader vs 100 hand-labelled answers", cols, figure_scores())
    if args.llm:
        picked = sample(items, args.llm)
        rows = llm_paths(picked, args.model, args.config)
        cols = ["path", "answers", "agreement", "precision", "recall", "κ", "s / answer"]
        print()
        harness.report(f"Model paths vs rules on {len(picked)} answers ({args.llm} per source)",
                       cols, rows)  # fmt: skip


if __name__ == "__main__":
    main()
