"""Do the default local model's answers read like answers? Seed questions (the first N of each
FinTradeBench category) answered under No-RAG, RAG and Oracle; for each condition the share of
non-answers and the share the fatal-flaw screen flags `wrong_period`, and the run's time.

    .venv/bin/python -m benchmarks.bench_answers_read [--per-category 10] [--model local]
        [--max-tokens 160] [--store data/fintrade.duckdb] [--bundle ../shared/data] [--keep WS]
    .venv/bin/python -m benchmarks.bench_answers_read --count WS

A non-answer says nothing or echoes the prompt: under 25 words, or a sentence of the prompt's
own instructions (six words or more; the question and the evidence left out) repeated in it.
`--max-tokens` caps each answer (the registry entry is copied with it): both measures are
decided in an answer's first sentences, and 512 tokens a run would take hours on 2 cores.
A run that ended in error (an Oracle prompt over the model's context) counts in neither share:
its count is printed. Workspace in a temp folder; models, index and exports are the project's.
`--count WS` counts a workspace `--keep` kept again, with the screen as it reads now, and runs
no model.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import duckdb
import yaml

from benchmarks import harness

CONDITIONS = ["no_rag", "rag", "oracle"]
MIN_WORDS = 25
ECHO_WORDS = 6  # a repeated prompt sentence this long is an echo, not a shared phrase
_EVIDENCE = re.compile(r"<evidence>.*?</evidence>", re.S)
_SENTENCE = re.compile(r"(?<=[.!?:])\s+|\n+")


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w%.\- ]+", " ", text.lower()).split())


def instruction_sentences(prompt: str, question: str) -> list[str]:
    """The prompt's own sentences of ECHO_WORDS words or more, normalised: neither the
    question (an answer may restate it) nor the evidence (an answer should quote it)."""
    text = _EVIDENCE.sub(" ", prompt).replace(question, " ")
    out = []
    for piece in _SENTENCE.split(text):
        s = _norm(piece).rstrip(".")
        if len(s.split()) >= ECHO_WORDS:
            out.append(s)
    return out


def non_answer(answer: str, prompt: str, question: str) -> str:
    """Why `answer` is a non-answer ("short", "echo"), or "" for an answer."""
    if len(answer.split()) < MIN_WORDS:
        return "short"
    said = _norm(answer)
    return "echo" if any(s in said for s in instruction_sentences(prompt, question)) else ""


def _model_entry(model: str, max_tokens: int) -> str:
    """The registry entry `model` of the checkout's config.yaml as `bench`, capped."""
    entry = dict(yaml.safe_load(Path("config.yaml").read_text())["models"][model])
    entry["max_tokens"] = max_tokens
    return yaml.safe_dump({"models": {"bench": entry}}, sort_keys=False)


def main() -> None:
    ap = harness.parser(__doc__)
    harness.add_store(ap)
    ap.add_argument("--per-category", type=int, default=10, help="seed questions per category")
    ap.add_argument("--model", default="local", help="a registry name of config.yaml")
    ap.add_argument("--max-tokens", type=int, default=160, help="cap on each answer")
    ap.add_argument("--keep", type=Path, help="copy the run's workspace here (to read answers)")
    ap.add_argument("--count", type=Path, help="count a kept workspace again; run nothing")
    args = ap.parse_args()
    start = harness.load()
    if args.count:
        runs, questions = _read(args.count)
        head = f"{len({r['question_id'] for r in runs})} seeds counted again from {args.count}"
    else:
        seeds = [f"{c}{i}" for c in ("F", "T", "FT") for i in range(1, args.per_category + 1)]
        took, runs, questions = _run(args, seeds)
        head = f"{len(seeds)} seeds x {len(CONDITIONS)} conditions, model {args.model}"
        head += f" (max_tokens {args.max_tokens}); run {took:.0f} s"
    _print(runs, questions, [head, harness.machine(start)])


def _run(args: Any, seeds: list[str]) -> tuple[float, list[dict], dict[str, Any]]:
    """`fintrade-tui run` over the seeds in a temp workspace; its runs and questions."""
    store = harness.need_store(args.store)
    with tempfile.TemporaryDirectory(prefix="bench-answers-") as td:
        data = Path("data").resolve()
        shared = f"model_dir: {data / 'models'}\n"
        shared += f"retrieval:\n  index: {data / 'lancedb'}\n  exports: {data / 'embedders'}\n"
        shared += _model_entry(args.model, args.max_tokens)
        config = harness.write_config(Path(td), args.bundle, store, extra=shared)
        took, _ = harness.cli(
            config,
            "run",
            "--questions",
            ",".join(seeds),
            "--models",
            "bench",
            "--conditions",
            ",".join(CONDITIONS),
            "--batch",
            "read",
            "--json",
            ok=(0, 3),
        )  # fmt: skip (exit 3: some runs ended in error, counted apart)
        runs, questions = _read(Path(td) / "ws.duckdb")
        if args.keep:  # the database and any log not yet checkpointed into it
            for src in Path(td).glob("ws.duckdb*"):
                if not src.name.endswith(".lock"):
                    shutil.copyfile(src, f"{args.keep}{src.name.removeprefix('ws.duckdb')}")
    return took, runs, questions


def _read(workspace: Path) -> tuple[list[dict], dict[str, Any]]:
    """The batch's runs as the run store reads them, and their questions."""
    from fintrade_tui.workspace.questions import get_question
    from fintrade_tui.workspace.run_records import RunStore

    con = duckdb.connect(str(workspace), read_only=True)
    try:
        runs = RunStore(con, read_only=True).list(batch="read", limit=100_000)
        questions = {r["question_id"]: get_question(con, r["question_id"]) for r in runs}
    finally:
        con.close()
    return runs, questions


def _print(runs: list[dict], questions: dict[str, Any], head: list[str]) -> None:
    from fintrade_tui.judging.flaws import wrong_period

    counts: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, list[str]] = defaultdict(list)
    for r in runs:
        c, q = counts[r["condition"]], questions[r["question_id"]]
        if r["status"] != "completed":
            c["error"] += 1
            continue
        c["answers"] += 1
        why = non_answer(r["answer"] or "", r["prompt"] or "", q.text)
        c[why or "read"] += 1
        if why and len(examples[r["condition"]]) < 3:
            examples[r["condition"]].append(f"{q.id} ({why}): {(r['answer'] or '')[:120]!r}")
        c["wrong_period"] += bool(wrong_period(r, q))
    rows = []
    for cond in CONDITIONS:
        c = counts[cond]
        n = c["answers"] or 1
        rows.append(
            [
                cond,
                c["answers"],
                c["error"],
                f"{100 * (c['short'] + c['echo']) / n:.0f}% ({c['short']} short, {c['echo']} echo)",
                f"{100 * c['wrong_period'] / n:.0f}% ({c['wrong_period']})",
            ]
        )
    total = sum(counts[c]["answers"] for c in CONDITIONS) or 1
    non = sum(counts[c]["short"] + counts[c]["echo"] for c in CONDITIONS)
    flagged = sum(counts[c]["wrong_period"] for c in CONDITIONS)
    harness.report(
        head,
        ["condition", "answers", "errors", "non-answers", "wrong_period"],
        rows,
        [
            f"all: non-answers {100 * non / total:.0f}%, wrong_period {100 * flagged / total:.0f}%",
            *(f"{cond}: {e}" for cond in CONDITIONS for e in examples[cond]),
            json.dumps({c: dict(counts[c]) for c in CONDITIONS}),
        ],
    )


if __name__ == "__main__":
    main()
