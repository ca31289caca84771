"""Judging room: how far to trust a verdict, measured against people's verdicts on labelled
answers (FinanceBench's, in the bundle's `financebench-labelled/`: answers its authors read and
labelled correct / incorrect / refusal).

Two verdicts are measured on the same sample of answers people called correct or incorrect:
- the LLM judge: its accuracy score, read as correct at 4 or 5 (as Results reads it);
- the offline verdict an analyst sees by default: the answer checks' rules, then, where the rules
  defer, the local model's extraction of the answer's conclusion held against the reference by
  the same rules (judging/extraction.py). An answer still undecided after both counts as a miss.
Agreement is the share where the verdict and people agree on "correct"; Cohen's κ is over the
answers the verdict decided. The judge's figures are kept per judge model in the workspace
(workspace/judge_agreement.py) and shown beside every score it gives.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.workspace.judge_agreement import Agreement

RIGHT_AT = 4  # judge accuracy read as correct, as Results and the failure causes read it
LABELS = ("correct", "incorrect", "refusal")
DEFAULT_SET = Path("financebench-labelled") / "runs.jsonl"


@dataclass(frozen=True)
class Labelled:
    """One answer with people's verdict, as the checks and the judge see it."""

    id: str
    question: str
    reference: str
    answer: str
    person: str  # correct | incorrect | refusal
    category: str = ""


def load(path: Path) -> list[Labelled]:
    """Labelled answers from a run JSONL with a `label` per line (the generic import format);
    a bad line is one error naming the file, line and the fix."""
    if not path.is_file():
        raise UserError(str(path), "is not a file", "give a labelled run JSONL (--labelled)")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            label = str(r["label"]).lower()
            if label not in LABELS:
                raise ValueError(f"label {label!r} is not one of {', '.join(LABELS)}")
            out.append(Labelled(f"{r['question_id']}#{n}", str(r["question"]),
                                str(r.get("reference_answer") or ""), str(r.get("answer") or ""),
                                label, str(r.get("category") or "")))  # fmt: skip
        except (ValueError, KeyError, TypeError) as exc:
            why = f"{type(exc).__name__}: {exc}" if not isinstance(exc, ValueError) else str(exc)
            raise UserError(f"{path}:{n}", why, "each line needs question_id, question, "
                            "reference_answer, answer and label") from None  # fmt: skip
    return out


def sample(rows: list[Labelled], n: int) -> list[Labelled]:
    """`n` of the answers people called correct or incorrect, spread evenly over the file's
    order (every k-th): the same sample on every machine."""
    pool = [r for r in rows if r.person in ("correct", "incorrect")]
    if n >= len(pool):
        return pool
    step = len(pool) / n
    return [pool[int(i * step)] for i in range(n)]


def kappa(truth: list[bool], guess: list[bool]) -> float | None:
    """Cohen's κ of two binary ratings (None when undefined: one class only)."""
    n = len(truth)
    if not n:
        return None
    seen = sum(t == g for t, g in zip(truth, guess, strict=True)) / n
    p_t, p_g = sum(truth) / n, sum(guess) / n
    chance = p_t * p_g + (1 - p_t) * (1 - p_g)
    return None if chance >= 1 else (seen - chance) / (1 - chance)


def agreement(said: list[bool | None], people: list[bool]) -> dict[str, Any]:
    """Agreement (undecided counts as a miss), κ over the decided, the confusion counts."""
    pairs = [(p, s) for p, s in zip(people, said, strict=True) if s is not None]
    k = kappa([p for p, _ in pairs], [s for _, s in pairs])
    return {
        "n": len(people),
        "decided": len(pairs),
        "agreement": sum(p == s for p, s in pairs) / len(people) if people else None,
        "agreement_decided": sum(p == s for p, s in pairs) / len(pairs) if pairs else None,
        "kappa": None if k is None else round(k, 4),
        "both_correct": sum(p and s for p, s in pairs),
        "judge_correct_people_incorrect": sum(s and not p for p, s in pairs),
        "judge_incorrect_people_correct": sum(p and not s for p, s in pairs),
        "both_incorrect": sum(not p and not s for p, s in pairs),
    }


def _question(item: Labelled) -> Any:
    from fintrade_tui.workspace.questions import Question

    return Question(item.id.split("#")[0], "labelled", item.category, item.question,
                    item.reference or None)  # fmt: skip


Progress = Callable[[int, int, str], None]


def measure_judge(cfg: Config, items: list[Labelled], judge: str | None, set_name: str,
                  progress: Progress | None = None) -> Agreement:  # fmt: skip
    """The LLM judge over `items`, one at a time, against people's verdicts."""
    from fintrade_tui.judging.asking import judge_model
    from fintrade_tui.judging.judge import JudgeInput, judge_run

    model = judge_model(cfg, judge)
    said: list[bool | None] = []
    start = time.perf_counter()
    for i, item in enumerate(items, 1):
        run = {"id": item.id, "answer": item.answer}
        score = asyncio.run(judge_run(cfg, JudgeInput(run, _question(item)), model))
        acc = score.accuracy if score.status == "ok" else None
        said.append(None if acc is None else acc >= RIGHT_AT)
        if progress:
            progress(i, len(items), f"{item.id}: people {item.person}, judge accuracy {acc}")
    took = time.perf_counter() - start
    stats = agreement(said, [i.person == "correct" for i in items])
    return Agreement(model.string, model.name, set_name, stats["n"], stats["decided"],
                     stats["agreement"], stats["kappa"], took / max(1, len(items)),
                     {**stats, "right_at": RIGHT_AT, "ids": [i.id for i in items]})  # fmt: skip


def offline_verdicts(
    cfg: Config, items: list[Labelled], model_name: str | None, progress: Progress | None = None
) -> tuple[list[str | None], dict[str, Any]]:
    """The default offline verdict per item (correct / incorrect / refusal / None): the rules,
    then the model's extraction where they defer; and the counts and seconds it took."""
    from fintrade_tui.judging.extraction import extract, extracted_match
    from fintrade_tui.judging.rescore import label_of
    from fintrade_tui.models.resolve import resolve
    from fintrade_tui.scoring.answer_checks import check_match

    model = resolve(cfg, model_name or cfg.judging.model)
    out: list[str | None] = []
    asked, took = 0, 0.0
    for i, item in enumerate(items, 1):
        q = _question(item)
        label = label_of(check_match(q, item.answer, cfg).verdict)
        if label is None:
            got = asyncio.run(extract(cfg, model, q.text, item.answer))
            asked, took = asked + 1, took + got.seconds
            label = label_of(extracted_match(q, got, cfg, item.answer).verdict)
        out.append(label)
        if progress:
            progress(i, len(items), f"{item.id}: people {item.person}, verdict {label}")
    return out, {"extracted": asked, "seconds_per_extraction": took / max(1, asked),
                 "model": model.string}  # fmt: skip
