"""Gather a labelled-evaluation candidate set of published financial-QA model answers.

This script reads model outputs that were *published* in public GitHub repositories
(paper repositories and evaluation-result dumps) and writes ``items.jsonl``: one JSON
object per line with a question, the benchmark's gold reference, and one real model's
answer, ready to be labelled correct / incorrect / refusal by reading.

Nothing here calls a model; every answer is copied from the published files.

Sources (each one a git snapshot of a public repository; see SOURCES.md):

* ``pot-tatqa``          wenhuchen/Program-of-Thoughts   TAT-QA dev, CoT and direct prompting
* ``financemath``        yale-nlp/FinanceMath            validation set, CoT outputs of 51 LLMs
* ``financereasoning``   BUPT-Reasoning-Lab/FinanceReasoning  hard subset, CoT outputs of 13 LLMs
* ``cot-fin-bench``      infamousgxy/CoT-Financial-Benchmark  FinQA / ConvFinQA samples, Qwen3-30B
* ``convfinqa-sonnet``   zarifaziz/convfinqa             ConvFinQA dev run, claude-sonnet-4-6

Each path argument may be a bare git directory (as produced by a mirror / ``git clone
--mirror``) or a normal checkout; files are read with ``git show <rev>:<path>`` so the
origin recorded for every item names the exact commit. Sampling is deterministic
(``random.Random(0)`` per source), so re-running on the same commits reproduces the
same file byte for byte.

Example::

    python benchmarks/verdicts/gather.py \\
        --pot-tatqa /work/.mirror/wenhuchen+Program-of-Thoughts/repo \\
        --financemath /work/.mirror/yale-nlp+FinanceMath/repo \\
        --financereasoning /work/.mirror/BUPT-Reasoning-Lab+FinanceReasoning/repo \\
        --cot-fin-bench /work/.mirror/infamousgxy+CoT-Financial-Benchmark/repo \\
        --convfinqa-sonnet /work/.mirror/zarifaziz+convfinqa/repo \\
        --out benchmarks/verdicts/items.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ANSWER_MAX_CHARS = 4000
QUESTION_MAX_CHARS = 3000

Item = dict[str, Any]


@dataclass(frozen=True)
class Repo:
    """A git snapshot of one public repository, read through ``git show``."""

    slug: str  # owner/name on GitHub
    git_dir: Path
    rev: str

    @classmethod
    def open(cls, slug: str, path: str, rev: str) -> Repo:
        p = Path(path)
        git_dir = p / ".git" if (p / ".git").exists() else p
        commit = _git(git_dir, "rev-parse", f"{rev}^{{commit}}").strip()
        return cls(slug=slug, git_dir=git_dir, rev=commit)

    def read_text(self, path: str) -> str:
        return _git(self.git_dir, "show", f"{self.rev}:{path}")

    def read_json(self, path: str) -> Any:
        return json.loads(self.read_text(path))

    def read_jsonl(self, path: str) -> list[Any]:
        return [json.loads(line) for line in self.read_text(path).splitlines() if line.strip()]

    def list_dir(self, path: str) -> list[str]:
        out = _git(self.git_dir, "ls-tree", "--name-only", f"{self.rev}:{path}")
        return sorted(line for line in out.splitlines() if line)

    def origin(self, path: str, key: str) -> str:
        return f"{self.slug}@{self.rev}:{path}#{key}"


def _git(git_dir: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", f"--git-dir={git_dir}", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {git_dir}: {proc.stderr.strip()}")
    return proc.stdout


# --------------------------------------------------------------------------- helpers


def _is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list):
        return all(_is_empty(v) for v in value)
    return False


def _reference(value: Any) -> Any:
    """Gold answer as published: numbers stay numbers, a list of spans becomes text."""
    if isinstance(value, list):
        parts = [str(v) for v in value if not _is_empty(v)]
        return parts[0] if len(parts) == 1 else "; ".join(parts)
    return value


def _cut(answer: str) -> tuple[str, bool]:
    if len(answer) > ANSWER_MAX_CHARS:
        return answer[:ANSWER_MAX_CHARS], True
    return answer, False


def _with_context(question: str, context: str) -> str:
    """Question plus its table/passages when short enough, else the question alone."""
    full = f"{question.strip()}\n\n{context.strip()}" if context.strip() else question.strip()
    return full if len(full) <= QUESTION_MAX_CHARS else question.strip()


def _item(
    *,
    source: str,
    licence: str,
    origin: str,
    model: str,
    question: str,
    reference: Any,
    answer: str,
    units: str | None = None,
    answer_type: str | None = None,
) -> Item:
    text, was_cut = _cut(answer)
    item: Item = {
        "id": "",
        "source": source,
        "licence": licence,
        "origin": origin,
        "model": model,
        "question": question,
        "reference": reference,
        "answer": text,
        "answer_cut": was_cut,
    }
    if units:
        item["units"] = units
    if answer_type:
        item["answer_type"] = answer_type
    return item


def _sample_question_model(
    n_questions: int,
    models: list[str],
    want: int,
    make: Callable[[int, str], Item | None],
) -> list[Item]:
    """Visit questions in a seeded random order; give each one a seeded random model.

    ``make`` returns None for a pair that must be skipped (empty answer or reference);
    the next question is then tried, so every question appears at most once.
    """
    rng = random.Random(0)
    order = rng.sample(range(n_questions), n_questions)
    items: list[Item] = []
    for q in order:
        model = rng.choice(models)
        item = make(q, model)
        if item is not None:
            items.append(item)
            if len(items) == want:
                break
    return items


# --------------------------------------------------------------------------- sources

POT_FILES = {
    # file stem in outputs/ -> engine named in the matching run_tatqa_*.py script
    "tatqa_cot_s0_e-1_11_11_21_19": "code-davinci-002",
    "tatqa_cot_gpt3_s0_e-1_11_13_21_05": "text-davinci-002",
    "tatqa_direct_s0_e-1_11_12_11_46": "code-davinci-002",
    "tatqa_direct_gpt3_s0_e-1_11_13_18_15": "text-davinci-002",
}
POT_LICENCE = "MIT (LICENSE, Copyright (c) 2024 wenhu chen)"


def gather_pot(repo: Repo, want: int) -> list[Item]:
    files = {stem: repo.read_jsonl(f"outputs/{stem}.jsonl") for stem in POT_FILES}
    stems = sorted(files)
    base = files[stems[0]]
    for stem in stems[1:]:
        ids = [r["question_id"] for r in files[stem]]
        if ids != [r["question_id"] for r in base]:
            raise SystemExit(f"pot-tatqa: {stem} is not aligned with {stems[0]}")

    def make(q: int, stem: str) -> Item | None:
        row = files[stem][q]
        generated = row.get("generated") or []
        answer = generated[0] if generated else ""
        if _is_empty(answer) or _is_empty(row.get("answer")):
            return None
        context = f"Table:\n{row.get('table', '')}\nText:\n{row.get('text', '')}"
        return _item(
            source="pot-tatqa",
            licence=POT_LICENCE,
            origin=repo.origin(f"outputs/{stem}.jsonl", row["question_id"]),
            model=POT_FILES[stem],
            question=_with_context(row["question"], context),
            reference=_reference(row["answer"]),
            answer=answer,
            units=row.get("scale") or None,
            answer_type=row.get("answer_type") or None,
        )

    return _sample_question_model(len(base), stems, want, make)


FINANCEMATH_DIR = "outputs/validation/raw_cot_outputs"
FINANCEMATH_LICENCE = (
    "no licence stated in the GitHub repository (the Hugging Face dataset card "
    "yale-nlp/FinanceMath says MIT)"
)


def gather_financemath(repo: Repo, want: int) -> list[Item]:
    files = [f for f in repo.list_dir(FINANCEMATH_DIR) if f.endswith(".json")]
    data = {f: repo.read_json(f"{FINANCEMATH_DIR}/{f}") for f in files}
    by_id = {f: {row["question_id"]: row for row in rows} for f, rows in data.items()}
    qids = sorted(by_id[files[0]], key=lambda s: int(s.rsplit("-", 1)[1]))

    def make(q: int, f: str) -> Item | None:
        row = by_id[f].get(qids[q])
        if row is None:
            return None
        outputs = row.get("output") or []
        answer = outputs[0] if outputs else ""
        if _is_empty(answer) or _is_empty(row.get("ground_truth")):
            return None
        tables = "\n\n".join(row.get("tables") or [])
        return _item(
            source="financemath",
            licence=FINANCEMATH_LICENCE,
            origin=repo.origin(f"{FINANCEMATH_DIR}/{f}", row["question_id"]),
            model=f.removesuffix(".json"),
            question=_with_context(row["question"], tables),
            reference=row["ground_truth"],
            answer=answer,
        )

    return _sample_question_model(len(qids), files, want, make)


FINANCEREASONING_DIR = "results/FinanceReasoning/hard/cot"
FINANCEREASONING_LICENCE = (
    "no licence stated in the GitHub repository (the Hugging Face dataset card "
    "BUPT-Reasoning-Lab/FinanceReasoning says CC-BY-4.0)"
)


def _from_financemath(row: dict[str, Any]) -> bool:
    return str(row.get("source", "")).startswith("FinanceMath")


def gather_financereasoning(repo: Repo, want: int) -> list[Item]:
    models = repo.list_dir(FINANCEREASONING_DIR)
    paths = {m: f"{FINANCEREASONING_DIR}/{m}/inference.json" for m in models}
    by_id = {m: {row["question_id"]: row for row in repo.read_json(p)} for m, p in paths.items()}
    # The hard subset re-uses 62 FinanceMath validation questions; those are left out so
    # that this source and ``financemath`` share no question.
    qids = sorted(
        (qid for qid, row in by_id[models[0]].items() if not _from_financemath(row)),
        key=lambda s: int(s.rsplit("-", 1)[1]),
    )

    def make(q: int, m: str) -> Item | None:
        row = by_id[m].get(qids[q])
        if row is None:
            return None
        answer = row.get("output") or ""
        if _is_empty(answer) or _is_empty(row.get("ground_truth")):
            return None
        return _item(
            source="financereasoning",
            licence=FINANCEREASONING_LICENCE,
            origin=repo.origin(paths[m], row["question_id"]),
            model=m,
            question=_with_context(row["question"], row.get("context") or ""),
            reference=row["ground_truth"],
            answer=answer,
        )

    return _sample_question_model(len(qids), models, want, make)


COTFIN_FILES = ["h2_samples/finqa_samples_v6.json", "h2_samples/convfinqa_samples_v6.json"]
COTFIN_FIELDS = {
    # output field -> model, as named in the repository's README / scripts
    "thinking_output": "Qwen3-30B-A3B-Thinking-2507",
    "instruct_v5_output": "Qwen3-30B-A3B-Instruct-2507 (instruct_v5, direct prompt)",
    "instruct_v6_output": "Qwen3-30B-A3B-Instruct-2507 (instruct_v6, CoT prompt)",
}
COTFIN_LICENCE = "MIT (LICENSE, Copyright (c) 2025 XinYi Guo)"
_PROMPT_PARTS = re.compile(
    r"Context:\s*(?P<context>.*?)\n(?:Conversations:\s*\n(?P<conv>.*?)\n)?"
    r"Question:\s*(?P<question>.*?)\nAnswer:",
    re.S,
)


def _cotfin_question(prompt: str) -> str:
    m = _PROMPT_PARTS.search(prompt)
    if m is None:
        raise SystemExit("cot-fin-bench: prompt without Context/Question section")
    question = m.group("question").strip()
    if m.group("conv"):
        question = f"Earlier turns:\n{m.group('conv').strip()}\nQuestion: {question}"
    return _with_context(question, f"Context: {m.group('context')}")


def gather_cotfin(repo: Repo, want: int) -> list[Item]:
    pairs: list[tuple[str, int, dict[str, Any], str]] = []
    for path in COTFIN_FILES:
        samples = repo.read_json(path)["samples"]
        for i, sample in enumerate(samples):
            for field in COTFIN_FIELDS:
                pairs.append((path, i, sample, field))
    rng = random.Random(0)
    items: list[Item] = []
    for path, i, sample, field in rng.sample(pairs, len(pairs)):
        answer = sample.get(field) or ""
        if _is_empty(answer) or _is_empty(sample.get("gold_answer")):
            continue
        key = f"samples[{i}].sample_id={sample['sample_id']}.{field}"
        items.append(
            _item(
                source="cot-fin-bench",
                licence=COTFIN_LICENCE,
                origin=repo.origin(path, key),
                model=COTFIN_FIELDS[field],
                question=_cotfin_question(sample["prompt"]),
                reference=sample["gold_answer"],
                answer=answer,
                answer_type=sample.get("task"),
            )
        )
        if len(items) == want:
            break
    return items


CONVFINQA_RUN = "runs/2026-05-04T06-35-00Z/predictions.jsonl"
CONVFINQA_MODEL = "claude-sonnet-4-6"  # named in REPORT.md for the dev-split run
CONVFINQA_LICENCE = "MIT (LICENSE, Copyright (c) 2026 Zarif Aziz)"


def _convfinqa_answer(row: dict[str, Any]) -> str:
    """Render the model's structured tool call (submit_answer) as text, fields verbatim."""
    lines = [str(row.get("predicted_reasoning") or "").strip(), ""]
    if row.get("predicted_calculation"):
        lines.append(f"Calculation: {row['predicted_calculation']}")
    unit = row.get("predicted_unit")
    suffix = f" (unit: {unit})" if unit and unit != "none" else ""
    lines.append(f"Answer: {row['predicted_answer']}{suffix}")
    return "\n".join(lines).strip()


def gather_convfinqa(repo: Repo, want: int) -> list[Item]:
    rows = repo.read_jsonl(CONVFINQA_RUN)
    turns: dict[str, dict[int, str]] = {}
    for row in rows:
        turns.setdefault(row["record_id"], {})[row["turn_idx"]] = row["question"]
    rng = random.Random(0)
    items: list[Item] = []
    for idx in rng.sample(range(len(rows)), len(rows)):
        row = rows[idx]
        if _is_empty(row.get("predicted_answer")) or _is_empty(row.get("gold")):
            continue
        earlier = [turns[row["record_id"]][t] for t in range(row["turn_idx"])]
        question = row["question"]
        if earlier:
            history = "\n".join(f"q{t}: {q}" for t, q in enumerate(earlier))
            question = f"Earlier turns:\n{history}\nQuestion: {question}"
        items.append(
            _item(
                source="convfinqa-sonnet",
                licence=CONVFINQA_LICENCE,
                origin=repo.origin(CONVFINQA_RUN, f"{row['record_id']}/turn{row['turn_idx']}"),
                model=CONVFINQA_MODEL,
                question=question,
                reference=row["gold"],
                answer=_convfinqa_answer(row),
            )
        )
        if len(items) == want:
            break
    return items


@dataclass(frozen=True)
class SourceSpec:
    name: str
    slug: str
    pinned: str  # commit the published SOURCES.md describes
    want: int
    gather: Callable[[Repo, int], list[Item]]


SOURCES = [
    SourceSpec(
        "pot-tatqa",
        "wenhuchen/Program-of-Thoughts",
        "850399c3eff8c37458a9d642c4a98df287f50f3a",
        180,
        gather_pot,
    ),
    SourceSpec(
        "financemath",
        "yale-nlp/FinanceMath",
        "bdddc58655947475da852e241b96a7dbd1478742",
        160,
        gather_financemath,
    ),
    SourceSpec(
        "financereasoning",
        "BUPT-Reasoning-Lab/FinanceReasoning",
        "b0fe6455396f831955e4eb988472b4a563403bc5",
        160,
        gather_financereasoning,
    ),
    SourceSpec(
        "cot-fin-bench",
        "infamousgxy/CoT-Financial-Benchmark",
        "e275396f9721707f30a538eba689e47865463ee4",
        160,
        gather_cotfin,
    ),
    SourceSpec(
        "convfinqa-sonnet",
        "zarifaziz/convfinqa",
        "1820c0ecc5b3fb4015ea20a0e2d21cac49fe57ea",
        120,
        gather_convfinqa,
    ),
]


def _number(items: Iterable[Item], source: str) -> Iterator[Item]:
    for i, item in enumerate(items):
        item["id"] = f"{source}-{i:04d}"
        yield item


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(
            "Read published financial-QA model outputs from git snapshots of public "
            "repositories and write a deterministic items.jsonl sample. Each source "
            "option takes the path of that repository's git directory (bare mirror) or "
            "checkout; a source whose option is omitted is skipped."
        )
    )
    for spec in SOURCES:
        parser.add_argument(
            f"--{spec.name}",
            dest=spec.name.replace("-", "_"),
            metavar="GIT_DIR",
            help=f"snapshot of {spec.slug} (pinned commit {spec.pinned[:12]}; {spec.want} items)",
        )
    parser.add_argument(
        "--rev",
        default="HEAD",
        help="revision to read in every snapshot (default: HEAD)",
    )
    parser.add_argument(
        "--out",
        default=str(Path(__file__).with_name("items.jsonl")),
        help="output file (default: items.jsonl next to this script)",
    )
    args = parser.parse_args(argv)

    all_items: list[Item] = []
    for spec in SOURCES:
        path = getattr(args, spec.name.replace("-", "_"))
        if not path:
            print(f"skip {spec.name}: no --{spec.name} given", file=sys.stderr)
            continue
        repo = Repo.open(spec.slug, path, args.rev)
        if repo.rev != spec.pinned:
            print(
                f"warning: {spec.name} snapshot is at {repo.rev}, SOURCES.md describes "
                f"{spec.pinned}",
                file=sys.stderr,
            )
        items = list(_number(spec.gather(repo, spec.want), spec.name))
        if len(items) < spec.want:
            print(f"warning: {spec.name} gave {len(items)} of {spec.want} items", file=sys.stderr)
        print(f"{spec.name}: {len(items)} items", file=sys.stderr)
        all_items.extend(items)

    with open(args.out, "w", encoding="utf-8", newline="\n") as fh:
        for item in all_items:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"wrote {len(all_items)} items to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
