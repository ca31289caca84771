"""The five published sources ``gather.py`` reads, one reader each: ``gather_pot``
(Program-of-Thoughts on TAT-QA), ``gather_financemath`` (FinanceMath validation outputs),
``gather_financereasoning`` (FinanceReasoning's hard subset, FinanceMath's questions left out),
``gather_cotfin`` (Qwen3-30B on FinQA / ConvFinQA samples) and ``gather_convfinqa`` (a ConvFinQA
dev run). Each takes a ``Repo`` snapshot and how many items it wants, and returns them sampled
deterministically, with the path, licence and model each answer was published under."""

from __future__ import annotations

import random
import re
from typing import Any

from gather_items import (
    Item,
    is_empty,
    make_item,
    reference,
    sample_question_model,
    with_context,
)
from gather_repo import Repo

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
        if is_empty(answer) or is_empty(row.get("answer")):
            return None
        context = f"Table:\n{row.get('table', '')}\nText:\n{row.get('text', '')}"
        return make_item(
            source="pot-tatqa",
            licence=POT_LICENCE,
            origin=repo.origin(f"outputs/{stem}.jsonl", row["question_id"]),
            model=POT_FILES[stem],
            question=with_context(row["question"], context),
            reference=reference(row["answer"]),
            answer=answer,
            units=row.get("scale") or None,
            answer_type=row.get("answer_type") or None,
        )

    return sample_question_model(len(base), stems, want, make)


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
        if is_empty(answer) or is_empty(row.get("ground_truth")):
            return None
        tables = "\n\n".join(row.get("tables") or [])
        return make_item(
            source="financemath",
            licence=FINANCEMATH_LICENCE,
            origin=repo.origin(f"{FINANCEMATH_DIR}/{f}", row["question_id"]),
            model=f.removesuffix(".json"),
            question=with_context(row["question"], tables),
            reference=row["ground_truth"],
            answer=answer,
        )

    return sample_question_model(len(qids), files, want, make)


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
        if is_empty(answer) or is_empty(row.get("ground_truth")):
            return None
        return make_item(
            source="financereasoning",
            licence=FINANCEREASONING_LICENCE,
            origin=repo.origin(paths[m], row["question_id"]),
            model=m,
            question=with_context(row["question"], row.get("context") or ""),
            reference=row["ground_truth"],
            answer=answer,
        )

    return sample_question_model(len(qids), models, want, make)


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
    return with_context(question, f"Context: {m.group('context')}")


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
        if is_empty(answer) or is_empty(sample.get("gold_answer")):
            continue
        key = f"samples[{i}].sample_id={sample['sample_id']}.{field}"
        items.append(
            make_item(
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
        if is_empty(row.get("predicted_answer")) or is_empty(row.get("gold")):
            continue
        earlier = [turns[row["record_id"]][t] for t in range(row["turn_idx"])]
        question = row["question"]
        if earlier:
            history = "\n".join(f"q{t}: {q}" for t, q in enumerate(earlier))
            question = f"Earlier turns:\n{history}\nQuestion: {question}"
        items.append(
            make_item(
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
