"""Asking a judge model room: the judge resolved, the schema-constrained request in the shape
its server reads, the JSON object found in its reply, and the call repeated until a reply
validates. The rubric judge, the panel, the pairwise verdicts, the fatal-flaw screen and the
figure extraction all ask through here."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from fintrade_tui.config import Config
from fintrade_tui.models import llm
from fintrade_tui.models.resolve import Model, resolve
from fintrade_tui.runs.prompts import fill_template


def judge_model(cfg: Config, judge: str | Model | None = None) -> Model:
    """The judge resolved: a `Model` its call site resolved is used as is; a name (or the
    configured judge) is resolved here."""
    return judge if isinstance(judge, Model) else resolve(cfg, judge or cfg.judging.model)


def response_format(m: Model, schema: dict, name: str) -> dict[str, Any]:
    """A schema-constrained reply where the model honours one (judge, extraction), in the
    shape its server reads (the model's `structured` setting)."""
    if m.structured == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": schema},
            }
        }
    if m.structured == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    return {}  # the prompt asks for JSON; validation decides


def load_json(text: str) -> Any:
    """The JSON object in a reply: code fences and text around it tolerated; raw newlines in
    strings allowed (small models write them)."""
    t = text.strip()
    start, end = t.find("{"), t.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    try:
        return json.loads(t[start : end + 1], strict=False)
    except RecursionError:  # a reply nested thousands deep: invalid output, not a crash
        raise ValueError("the reply's JSON is nested too deep") from None


def chat_messages(system: str, user: str, values: dict[str, str]) -> list[dict[str, str]]:
    """A system and a user message from a template pair, the user one filled with `values`."""
    return [
        {"role": "system", "content": system.strip()},
        {"role": "user", "content": fill_template(user, values).strip()},
    ]


async def ask_until_valid(
    cfg: Config,
    judge: Model,
    messages: list[dict],
    schema: dict,
    parse,
    retries: int,
    logprobs: bool = False,
) -> tuple[Any, list[str], str | None, list | None]:
    """Call the judge until `parse` accepts its reply: (parsed or None, raw replies, error,
    the accepted reply's token logprobs when asked for and given)."""
    call = judge.call().updated(**response_format(judge, schema, "judgement"), temperature=0.0)
    if logprobs and judge.logprobs:  # token probabilities: expected scores
        call = call.updated(logprobs=True, top_logprobs=10)
    raws: list[str] = []
    error = None
    for _ in range(retries + 1):
        try:
            resp = await llm.complete(call, messages, cfg.runs.retries, cfg.runs.backoff)
        except Exception as exc:  # the call itself failed: that is the judge's failure too
            error = llm.error_text(exc, call)
            continue
        choice = resp.choices[0]
        raw = choice.message.content or ""
        raws.append(raw)
        try:
            parsed = parse(raw)
        except (ValueError, ValidationError) as exc:
            error = f"invalid judge output: {str(exc).splitlines()[0][:200]}"
            continue
        tokens = getattr(getattr(choice, "logprobs", None), "content", None)
        return parsed, raws, None, tokens
    return None, raws, error, None
