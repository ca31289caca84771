"""Batch room: a batch's plan before it runs (`run --plan`; the figures `--max-cost` holds the
batch to) — the runs left after the resume skip, their prompt tokens counted from the prompts as
they would be built (evidence included), their output tokens, cost and time. Nothing is sent
and no run is recorded.

- Prompt tokens: each run's messages as `Runner.prepare` builds them, counted by litellm with
  the model's tokenizer where it has one (models/pricing.py), else an estimate it names.
- Output tokens: the mean of the answers this workspace holds for the model (under the same
  condition once there are `MIN_SAMPLE` of them), never above its `max_tokens`; without any,
  `max_tokens` itself (so the figure is a ceiling). The ceiling is shown beside it.
- Cost: litellm's price map, or the entry's own `input_cost_per_token` /
  `output_cost_per_token`; none for a local model or one without a price.
- Time: the mean duration of the model's measured runs, `runs.per_model` at once, and no less
  than its deployments' rpm / tpm allow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fintrade_tui.models.pricing import Price, count_prompt, tokenizer, unit_price
from fintrade_tui.runs.batch import plan_keyed
from fintrade_tui.runs.runner import Runner, RunSpec

MIN_SAMPLE = 3  # measured answers of a model under a condition before that mean is used
TOOL_ROUND_OUT = 100  # tokens of a native tool round's reply (its tool calls), an estimate
SELECTION_OUT = 16  # the best-of choice is asked for in at most this many tokens


@dataclass
class RunEstimate:
    """One run's estimate: its calls, prompt tokens, expected and largest output tokens and
    cost (None without a price)."""

    calls: int
    tokens_in: int
    tokens_out: float
    tokens_out_max: int
    cost: float | None
    cost_max: float | None


@dataclass
class ModelPlan:
    """One model's part of the plan, and what each of its figures rests on."""

    model: str
    model_string: str
    runs: int = 0
    calls: int = 0
    tokens_in: int = 0
    tokens_out: float = 0.0
    tokens_out_max: int = 0
    cost: float | None = None
    cost_max: float | None = None
    seconds: float | None = None
    price: Price | None = None
    tokenizer: str = ""
    own_tokenizer: bool = False
    out_basis: str = ""
    time_basis: str = ""
    run_seconds: float = 0.0  # measured duration x runs, for the batch's total
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "model_string": self.model_string,
            "runs": self.runs,
            "calls": self.calls,
            "tokens_in": self.tokens_in,
            "tokens_out": round(self.tokens_out),
            "tokens_out_max": self.tokens_out_max,
            "cost": _usd(self.cost),
            "cost_max": _usd(self.cost_max),
            "seconds": None if self.seconds is None else round(self.seconds, 1),
            "price_source": self.price.source if self.price else None,
            "input_cost_per_token": self.price.input if self.price else None,
            "output_cost_per_token": self.price.output if self.price else None,
            "tokenizer": self.tokenizer,
            "tokens_in_estimated": not self.own_tokenizer,
            "tokens_out_basis": self.out_basis,
            "time_basis": self.time_basis,
            "notes": self.notes,
        }


@dataclass
class BatchPlan:
    batch: str
    planned: int
    skipped: int
    models: list[ModelPlan]
    estimates: dict[str, RunEstimate]  # by run key
    seconds: float | None

    @property
    def runs(self) -> int:
        return sum(m.runs for m in self.models)

    def total(self, name: str) -> float | None:
        """The sum over models of a cost figure; None when no model has a price."""
        values = [getattr(m, name) for m in self.models if getattr(m, name) is not None]
        return sum(values) if values else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "planned": self.planned,
            "skipped_completed": self.skipped,
            "runs": self.runs,
            "calls": sum(m.calls for m in self.models),
            "tokens_in": sum(m.tokens_in for m in self.models),
            "tokens_out": round(sum(m.tokens_out for m in self.models)),
            "tokens_out_max": sum(m.tokens_out_max for m in self.models),
            "cost": _usd(self.total("cost")),
            "cost_max": _usd(self.total("cost_max")),
            "seconds": None if self.seconds is None else round(self.seconds, 1),
            "models": [m.to_dict() for m in self.models],
        }


def _usd(v: float | None) -> float | None:
    return None if v is None else round(v, 6)


def make_plan(runner: Runner, specs: list[RunSpec], concurrency: int, per_model: int) -> BatchPlan:
    """The plan of `specs` as `run` would send them now (`batch.plan_keyed`'s resume skip)."""
    todo, done = plan_keyed(runner, specs)
    names = list(dict.fromkeys(s.model for s in specs))
    measured = runner.runs.measured(names)
    models = {n: _model_plan(runner, n) for n in names}
    prompts: dict[tuple, list[dict[str, Any]]] = {}
    counted: dict[tuple, int] = {}
    estimates: dict[str, RunEstimate] = {}
    for key, spec in todo:
        m = runner.model(spec.model)
        mp = models[spec.model]
        native = spec.condition == "tool_use" and m.tools
        # the evidence and prompt depend on the model only through its evidence budget
        pkey = (spec.question.id, spec.condition, spec.level, m.evidence_tokens, native)
        if pkey not in prompts:
            prompts[pkey] = _messages(runner, spec, mp)
        ckey = (pkey, mp.tokenizer, m.string if mp.own_tokenizer else "")
        if ckey not in counted:
            counted[ckey] = _count(m.string, prompts[pkey], native)
        out = _out(mp, measured, spec, m.spec.max_tokens)
        est = _estimate(spec, counted[ckey], out, m.spec.max_tokens, native)
        est = _priced(est, mp.price)
        estimates[key] = est
        _add(mp, est)
    for mp in models.values():
        _timing(mp, runner, measured, min(per_model, concurrency))
    seconds = _batch_seconds(list(models.values()), concurrency)
    return BatchPlan(
        specs[0].batch or "" if specs else "",
        len(specs),
        done,
        list(models.values()),
        estimates,
        seconds,
    )


def _model_plan(runner: Runner, name: str) -> ModelPlan:
    m = runner.model(name)
    enc, own = tokenizer(m.string)
    mp = ModelPlan(name, m.string, price=unit_price(m.spec, m.local), tokenizer=enc)
    mp.own_tokenizer = own
    if mp.price is None:
        mp.notes.append(
            "no price: a local model"
            if m.local
            else "no price: litellm's price map lacks it (set input_cost_per_token and"
            " output_cost_per_token in its entry)"
        )
    return mp


def _messages(runner: Runner, spec: RunSpec, mp: ModelPlan) -> list[dict[str, Any]]:
    """The run's messages as `run` would send them; a prompt that cannot be built (the run
    would end in that error) counts no tokens, and the plan says so."""
    try:
        return runner.prepare(spec).messages
    except Exception as exc:  # one run's evidence failing never stops the plan
        first = (str(exc).strip().splitlines() or [""])[0][:160]
        if sum("could not be built" in n for n in mp.notes) < 3:  # the first few say why
            mp.notes.append(
                f"{spec.question.id} {spec.condition}: its prompt could not be built"
                f" ({type(exc).__name__}: {first}); counted as 0 tokens in"
            )
        return []


def _count(model: str, messages: list[dict[str, Any]], native: bool) -> int:
    if not messages:
        return 0
    tools = None
    if native:
        from fintrade_tui.runs.tools import TOOL_SPECS

        tools = TOOL_SPECS
    return count_prompt(model, messages, tools)


def _out(mp: ModelPlan, measured: dict, spec: RunSpec, max_tokens: int) -> float:
    """Expected output tokens of one answer (never above `max_tokens`), and what that rests
    on in `mp.out_basis`."""
    found = measured.get((spec.model, spec.condition)) or {}
    if (found.get("runs") or 0) < MIN_SAMPLE:
        found = measured.get((spec.model, None)) or {}
    if found.get("runs"):
        n = found["runs"]
        mp.out_basis = mp.out_basis or f"the mean of the {n} answers this workspace holds for it"
        return min(float(found["tokens_out"]), max_tokens)
    mp.out_basis = "its max_tokens (no answer of it measured yet: a ceiling)"
    return float(max_tokens)


def _estimate(spec: RunSpec, prompt: int, out: float, max_tokens: int, native: bool) -> RunEstimate:
    """A run's calls: a native Tool-Use run one tool round (its prompt sent twice, the tool
    results' tokens not counted) and the answer; best-of-N N answers and the choice."""
    calls, tokens_in, tokens_out, out_max = 1, prompt, out, max_tokens
    if native:
        calls, tokens_in = 2, 2 * prompt
        tokens_out, out_max = out + TOOL_ROUND_OUT, max_tokens * 2
    if spec.best_of > 1:
        from fintrade_tui.runs.prompts import selection_prompt

        n = spec.best_of
        words = ["word " * round(out)] * n  # candidates of the expected length
        choice = count_prompt("", selection_prompt(spec.question, words))
        calls, tokens_in = n + 1, n * prompt + choice
        tokens_out, out_max = n * out + SELECTION_OUT, n * max_tokens + SELECTION_OUT
    return RunEstimate(calls, tokens_in, tokens_out, out_max, None, None)


def _priced(est: RunEstimate, price: Price | None) -> RunEstimate:
    if price is not None:
        est.cost = price.of(est.tokens_in, est.tokens_out)
        est.cost_max = price.of(est.tokens_in, est.tokens_out_max)
    return est


def _add(mp: ModelPlan, est: RunEstimate) -> None:
    mp.runs += 1
    mp.calls += est.calls
    mp.tokens_in += est.tokens_in
    mp.tokens_out += est.tokens_out
    mp.tokens_out_max += est.tokens_out_max
    if est.cost is not None:
        mp.cost = (mp.cost or 0.0) + est.cost
        mp.cost_max = (mp.cost_max or 0.0) + (est.cost_max or 0.0)


def _timing(mp: ModelPlan, runner: Runner, measured: dict, at_once: int) -> None:
    """The model's time: its measured mean duration per run, `at_once` runs at a time, and no
    less than its deployments' rpm / tpm allow (each call as the pool counts it: the prompt
    and max_tokens)."""
    if not mp.runs:
        mp.seconds, mp.time_basis = 0.0, "nothing to run"
        return
    spec = runner.model(mp.model).spec
    found = measured.get((mp.model, None)) or {}
    bound, why = _rate_bound(spec, mp)
    if found.get("duration"):
        mp.run_seconds = mp.runs * float(found["duration"])
        mp.seconds = max(mp.run_seconds / at_once, bound)
        mp.time_basis = (
            f"{float(found['duration']):.1f} s a run (the mean of {found['runs']} measured),"
            f" {at_once} at once"
        )
        if bound and bound >= mp.run_seconds / at_once:
            mp.time_basis += f"; held to {why}"
    elif bound:
        mp.seconds = bound
        mp.time_basis = f"at least: {why} (no run of it measured yet)"
    else:
        mp.seconds = None
        mp.time_basis = "unknown: no run of it measured yet"


def _rate_bound(spec: Any, mp: ModelPlan) -> tuple[float, str]:
    """Seconds the deployments' limits need at the least (0 when any deployment is
    unlimited, or there are none), and which limit that is."""
    deps = spec.deployments
    if not deps:
        return 0.0, ""
    out: list[tuple[float, str]] = [(0.0, "")]
    if all(d.rpm for d in deps):
        rpm = sum(d.rpm for d in deps)
        out.append((60.0 * mp.calls / rpm, f"{rpm} requests a minute"))
    if all(d.tpm for d in deps):
        tpm = sum(d.tpm for d in deps)
        tokens = mp.tokens_in + mp.calls * spec.max_tokens
        out.append((60.0 * tokens / tpm, f"{tpm} tokens a minute"))
    return max(out)


def _batch_seconds(models: list[ModelPlan], concurrency: int) -> float | None:
    """The batch's time: its slowest model, or all their measured run-seconds shared by
    `concurrency` runs at once, whichever is longer; None when a model's time is unknown."""
    if any(m.seconds is None for m in models):
        return None
    slowest = max((m.seconds or 0.0 for m in models), default=0.0)
    return max(slowest, sum(m.run_seconds for m in models) / concurrency)
