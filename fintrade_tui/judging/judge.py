"""LLM judge room: one configured model scores a stored run — four rubric dimensions with
justifications, the metrics the answer uses (mapped to canonical names; golden-indicator
precision/recall/F1 computed here, not by the model, beside the golden coverage the rules read
from the answer's text: audits/golden_coverage.py), integration and depth scores — after a
deterministic numeric audit whose summary it sees. Output is constrained by a JSON schema where
the provider allows, validated always, retried when invalid, then recorded as a failure.
Also the SECQUE panel votes and the pairwise verdicts of the tournament.

Two protocols: `per_condition` (judge.yaml: the answer, the reference and the audit) and
`common` (judge_common.yaml: the same plus the question's canonical evidence, identical for
every condition's answer; see common_evidence.py). A question without a reference but with
Oracle values is judged per condition on the reference-free rubric (judge_reference_free.yaml:
the values at as-of in place of the reference), named in the score's `detail.rubric`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from fintrade_tui.config import Config
from fintrade_tui.judging.asking import ask_until_valid, chat_messages, judge_model, load_json
from fintrade_tui.judging.common_evidence import CommonEvidence
from fintrade_tui.judging.panel import REASON
from fintrade_tui.models.resolve import Model
from fintrade_tui.questions.indicators import canonical
from fintrade_tui.runs.prompts import defang
from fintrade_tui.workspace.questions import Question
from fintrade_tui.workspace.scores import DIMENSIONS, Score

TEMPLATES = Path(__file__).with_name("templates") / "judge.yaml"
COMMON_TEMPLATES = TEMPLATES.with_name("judge_common.yaml")
# a question without a reference: the rubric grounded in its Oracle evidence (rubric below)
FREE_TEMPLATES = TEMPLATES.with_name("judge_reference_free.yaml")
_Five = Annotated[int, Field(ge=1, le=5, strict=True)]


class _Dim(BaseModel):
    model_config = ConfigDict(extra="ignore")
    score: _Five
    justification: str = Field(min_length=1)


class Judgement(BaseModel):
    """What the judge must return; anything else is invalid output."""

    model_config = ConfigDict(extra="ignore")
    accuracy: _Dim
    completeness: _Dim
    relevance: _Dim
    clarity: _Dim
    metrics_used: list[str]
    fundamental_integration: _Five
    trading_signal_integration: _Five
    reasoning_depth: _Five


def _schema() -> dict[str, Any]:
    """The JSON schema sent as response_format; scores as enums (llama.cpp's grammar honours
    `enum` but not minimum/maximum)."""
    five = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
    dim = {
        "type": "object",
        # the reason first: a small model that writes it before the score scores by it
        "properties": {"justification": REASON, "score": five},
        "required": ["justification", "score"],
    }
    props: dict[str, Any] = {d: dim for d in DIMENSIONS}
    metric = {"type": "string", "minLength": 1, "maxLength": 40}
    props["metrics_used"] = {"type": "array", "items": metric, "maxItems": 8}
    for k in ("fundamental_integration", "trading_signal_integration", "reasoning_depth"):
        props[k] = five
    return {"type": "object", "properties": props, "required": list(props)}


JUDGE_SCHEMA = _schema()


def templates() -> dict[str, str]:
    return yaml.safe_load(TEMPLATES.read_text(encoding="utf-8"))


def prompt_hash(protocol: str = "per_condition", rubric: str = "reference") -> str:
    blob = TEMPLATES.read_bytes()
    if protocol == "common":
        blob += COMMON_TEMPLATES.read_bytes()
    elif rubric == "reference_free":
        blob += FREE_TEMPLATES.read_bytes()
    return hashlib.sha256(blob).hexdigest()[:12]


def golden_prf(used: list[str], golden: list[str]) -> dict[str, Any]:
    """Precision = |M_gen ∩ M_ref| / |M_gen|, recall = |∩| / |M_ref|, on canonical names."""
    mapped = {canonical(m) for m in used} - {None}
    unmapped = sorted({m for m in used if canonical(m) is None})
    ref = set(golden)
    hit = mapped & ref
    p = len(hit) / len(mapped) if mapped else None
    r = len(hit) / len(ref) if ref else None
    f1 = 2 * p * r / (p + r) if p and r else (0.0 if p is not None and r is not None else None)
    return {
        "metrics_canonical": sorted(mapped),
        "metrics_unmapped": unmapped,
        "golden": sorted(ref),
        "precision": p,
        "recall": r,
        "f1": f1,
    }


@dataclass
class JudgeInput:
    run: dict[str, Any]  # a stored run (records.RunStore row)
    question: Question
    audit: dict[str, Any] | None = None  # judging.audit result
    common: CommonEvidence | None = None  # set: judged under the `common` protocol

    @property
    def protocol(self) -> str:
        return "common" if self.common is not None else "per_condition"

    @property
    def rubric(self) -> str:
        """`reference_free` for a question without a reference judged on its own evidence
        (judge_reference_free.yaml: its Oracle values at as-of ground it), else `reference`."""
        q = self.question
        grounded = any(k != "supplied" and v for k, v in (q.oracle or {}).items())
        free = self.common is None and not q.reference_answer and grounded
        return "reference_free" if free else "reference"


def _reference_budget(cfg: Config, judge: Model) -> int | None:
    """A local judge sees a long reference's conclusion only (`judging.local_reference_tokens`)."""
    return cfg.judging.local_reference_tokens if judge.local else None


def _values(j: JudgeInput, reference_tokens: int | None = None) -> dict[str, str]:
    q = j.question
    from fintrade_tui.audits.numeric import summary_line
    from fintrade_tui.judging.conclusion import conclusion

    return {
        "as_of": q.as_of.isoformat() if q.as_of else "unknown",
        "question": q.text,
        "category": q.category,
        "golden": ", ".join(q.golden_raw or q.golden) or "not annotated",
        "reference": defang(
            conclusion(q.reference_answer, reference_tokens)
            if q.reference_answer
            else "(none given)",
            "reference",
        ),
        "answer": defang(guarded(j.run.get("answer") or "(empty answer)"), "answer"),
        "audit": defang(summary_line(j.audit) if j.audit else "(no audit)", "audit"),
        "a": "",
        "b": "",
    }


def guarded(answer: str) -> str:
    """The answer as the judge reads it: text addressed to the grader (audits/manipulation.py)
    replaced by a marker, and a line saying so, so the request itself never reaches the judge."""
    from fintrade_tui.audits.manipulation import find, neutralize

    hits = find(answer)
    if not hits:
        return answer
    return (
        neutralize(answer, hits) + f"\n[fintrade-tui: {len(hits)} passage(s) of this answer "
        "addressed the grader and were removed; they say nothing of its quality]"
    )


def judge_messages(
    cfg: Config, j: JudgeInput, judge: str | Model | None = None
) -> list[dict[str, str]]:
    """The rubric judge's messages for `j`: under `common` a function of the question, its
    canonical evidence and the answer (with its audit) only."""
    v = _values(j, _reference_budget(cfg, judge_model(cfg, judge)))
    if j.common is None and j.rubric == "reference_free":
        from fintrade_tui.questions.scale import reference_facts

        t = yaml.safe_load(FREE_TEMPLATES.read_text(encoding="utf-8"))
        values = {k: x for k, x in j.question.oracle.items() if k != "supplied"}
        v["evidence"] = defang(reference_facts(replace(j.question, oracle=values)), "evidence")
    elif j.common is None:
        t = templates()
    else:
        t = yaml.safe_load(COMMON_TEMPLATES.read_text(encoding="utf-8"))
        v["evidence"] = j.common.text()  # defanged there, item by item
    return chat_messages(t["system"], t["user"], v)


async def judge_run(cfg: Config, j: JudgeInput, judge: str | Model | None = None) -> Score:
    """Score one run with the LLM judge; always returns a record (ok or failure)."""
    m = judge_model(cfg, judge)
    judge = m.name
    messages = judge_messages(cfg, j, m)
    parsed, raws, error, tokens = await ask_until_valid(
        cfg,
        m,
        messages,
        JUDGE_SCHEMA,
        lambda raw: Judgement.model_validate(load_json(raw)),
        cfg.judging.retries,
        logprobs=True,
    )
    detail: dict[str, Any] = {
        "judge_model": m.string,
        "prompt_hash": prompt_hash(j.protocol, j.rubric),
        "rubric": j.rubric,
        "raw_outputs": raws,
        "attempts": len(raws),
        "audit": j.audit,
    }
    if j.common is not None:
        detail["common_evidence"] = j.common.record()
    from fintrade_tui.audits.manipulation import find

    hits = find(j.run.get("answer"))
    if hits:  # kept beside the scores: what the judge was not shown, and why
        detail["manipulation"] = [h.reason() for h in hits]
    if parsed is None:
        return Score(
            j.run["id"],
            "llm",
            judge,
            status="failure",
            detail=detail | {"error": error},
            protocol=j.protocol,
        )
    from fintrade_tui.audits.golden_coverage import golden_coverage

    detail |= {
        "justifications": {d: getattr(parsed, d).justification for d in DIMENSIONS},
        "metrics_used": parsed.metrics_used,
        "golden_prf": golden_prf(parsed.metrics_used, j.question.golden),
        # what the answer's text states, by rules: shown first, the judge's list beside it
        "golden_coverage": golden_coverage(j.run.get("answer"), j.question.golden),
        "fundamental_integration": parsed.fundamental_integration,
        "trading_signal_integration": parsed.trading_signal_integration,
        "reasoning_depth": parsed.reasoning_depth,
    }
    if tokens:
        from fintrade_tui.judging.expected import expected_scores

        written = {d: getattr(parsed, d).score for d in DIMENSIONS}
        expected = expected_scores(tokens, written)
        if expected:
            detail["expected_scores"] = expected
    if j.question.reference_answer and "|" in j.question.reference_answer:
        from fintrade_tui.scoring.rms import rms_sweep

        detail["rms"] = rms_sweep(
            j.run.get("answer") or "",
            j.question.reference_answer,
            cfg.judging.rms_tau,
            cfg.judging.rms_thetas,
        )
    return Score(
        j.run["id"],
        "llm",
        judge,
        **{d: getattr(parsed, d).score for d in DIMENSIONS},
        detail=detail,
        protocol=j.protocol,
    )


async def panel_run(cfg: Config, j: JudgeInput, judge: str | Model | None = None) -> Score:
    """The SECQUE panel: N independent 0/1/2 votes, thresholded into one final score."""
    import asyncio

    from fintrade_tui.judging.panel import PANEL_SCHEMA, panel_score, parse_vote_with_reason

    m = judge_model(cfg, judge)
    judge = m.name
    t = templates()
    v = _values(j, _reference_budget(cfg, m))
    messages = chat_messages(t["panel_system"], t["panel_user"], v)
    calls = [
        ask_until_valid(cfg, m, messages, PANEL_SCHEMA, parse_vote_with_reason, cfg.judging.retries)
        for _ in range(cfg.judging.panel_size)
    ]
    results = [r[:3] for r in await asyncio.gather(*calls)]
    detail: dict[str, Any] = {
        "judge_model": m.string,
        "prompt_hash": prompt_hash(),
        "raw_outputs": [r for _, raws, _ in results for r in raws],
    }
    if any(parsed is None for parsed, _, _ in results):
        errors = [e for _, _, e in results if e]
        return Score(
            j.run["id"], "panel", judge, status="failure", detail=detail | {"error": errors[0]}
        )
    votes = [parsed[0] for parsed, _, _ in results]
    detail |= panel_score(votes, cfg.judging.panel_full, cfg.judging.panel_partial)
    detail["reasons"] = [parsed[1] for parsed, _, _ in results]
    return Score(j.run["id"], "panel", judge, detail=detail)


def pair_judge(
    cfg: Config, question: Question, answers: dict[str, str], judge: str | Model | None = None
):
    """A `judge_pair(x, y)` for tournament.round_robin over run ids of one question."""
    from fintrade_tui.judging.tournament import PAIR_SCHEMA, parse_pair

    judge = judge_model(cfg, judge)
    t = templates()

    async def judge_pair(x: str, y: str) -> str:
        v = _values(JudgeInput({"id": x, "answer": ""}, question), _reference_budget(cfg, judge))
        v["a"] = defang(guarded(answers[x] or "(empty)"), "answer_a")
        v["b"] = defang(guarded(answers[y] or "(empty)"), "answer_b")
        messages = chat_messages(t["pair_system"], t["pair_user"], v)
        parsed, _, error, _ = await ask_until_valid(
            cfg, judge, messages, PAIR_SCHEMA, parse_pair, cfg.judging.retries
        )
        if parsed is None:
            raise RuntimeError(error or "no valid verdict")
        return parsed

    return judge_pair
