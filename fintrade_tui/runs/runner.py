"""Streaming core room: one run = (question, condition, model, TELeR level) taken from evidence
to a recorded answer, as an async generator of events the CLI and the TUI both consume.

    question -> build_evidence(condition) -> build_prompt(level) -> litellm stream -> record

Every run ends in exactly one state: completed, error (with the message, partial answer kept),
timeout, or cancelled (the task was cancelled or the consumer stopped; partial answer kept).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from fintrade_tui.config import Config
from fintrade_tui.models import llm
from fintrade_tui.models.resolve import Model, resolve
from fintrade_tui.questions.kind import question_kind
from fintrade_tui.store.db import Anchor, connect
from fintrade_tui.workspace.evidence import CONDITIONS, Evidence
from fintrade_tui.workspace.questions import Question
from fintrade_tui.workspace.run_records import CANCELLED, COMPLETED, ERROR, TIMEOUT, RunStore

MAX_TOOL_ROUNDS = 4


@dataclass(frozen=True)
class RunSpec:
    question: Question
    condition: str
    model: str  # a registry name
    level: str = "L5"
    best_of: int = 1
    batch: str | None = None  # a batch label: re-running it skips completed runs

    def key(self, params: dict[str, Any]) -> str:
        """Identity of a batch run: same question, condition, model settings and level."""
        raw = json.dumps(
            [self.question.id, self.condition, self.model, params, self.level, self.best_of],
            sort_keys=True,
        )
        return hashlib.sha256(raw.encode()).hexdigest()[:16]


@dataclass
class RunEvent:
    """`started` (evidence, prompt), `tool` (one call), `token` (text), `retry`, `ended`."""

    kind: str
    run_id: str
    spec: RunSpec
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Prepared:
    evidence: Evidence
    messages: list[dict[str, Any]]
    prompt_text: str
    prompt_hash: str
    evidence_ids: list[str]
    native_tools: bool = False


class Runner:
    """Runs specs against one config; the store is opened read-only per preparing thread, each
    connection joining the one the runner holds open (`Anchor`)."""

    def __init__(
        self,
        cfg: Config,
        runs: RunStore,
        staged_index: bool = False,
        build_index: bool = True,
        models: dict[str, Model] | None = None,
    ) -> None:
        self.cfg = cfg
        self.runs = runs
        # the models this runner's call site resolved (each resolved once, here if not there)
        self.models: dict[str, Model] = dict(models or {})
        # the Arena: a RAG run indexes first what its question uses, the rest in the background
        self.staged_index = staged_index
        # a Ray worker only reads the index (the driver built it): one writer per index
        self.build_index = build_index
        self._store = Anchor(cfg.store)  # each run's own read-only connection joins it

    def model(self, name: str) -> Model:
        """The resolved model of this name: resolved once for all this runner's runs."""
        if name not in self.models:
            self.models[name] = resolve(self.cfg, name)
        return self.models[name]

    # -- evidence and prompt (blocking: store and retrieval; called on a worker thread) --
    def prepare(self, spec: RunSpec) -> Prepared:
        from fintrade_tui.runs.conditions import ConditionContext, build_evidence
        from fintrade_tui.runs.prompts import build_prompt

        if spec.condition not in CONDITIONS:
            from fintrade_tui.errors import UserError

            raise UserError(
                f"condition {spec.condition!r}", "is unknown", f"use {', '.join(CONDITIONS)}"
            )
        m = self.model(spec.model)
        self._store.hold()
        if spec.condition == "rag" and spec.question.tickers and self.build_index:
            from fintrade_tui.retrieval.indexing import ensure_index

            # a fresh workspace (the TUI's first RAG run): index the question's tickers once
            tickers = list(spec.question.tickers)
            as_of = spec.question.as_of
            ensure_index(self.cfg, tickers, lambda msg: None, None, as_of, self.staged_index)
        with connect(self.cfg.store, read_only=True) as con:
            # the long-context and forecast builders fill the model's own evidence budget
            ctx = ConditionContext(self.cfg, con, m.evidence_tokens)
            evidence = build_evidence(spec.condition, spec.question, ctx)
            native = spec.condition == "tool_use" and m.tools
            if spec.condition == "tool_use" and not native:
                route_tools(con, spec.question, evidence)
        # the Oracle shows every golden value, whatever the budget: trimming it would no longer
        # be the oracle (a model whose context is too small fails with its own error)
        budget = m.evidence_tokens or self.cfg.runs.context_tokens
        budget = 10**9 if spec.condition == "oracle" else budget
        prompt = build_prompt(spec.question, evidence, spec.level, budget)
        return Prepared(
            evidence,
            prompt.messages,
            prompt.text,
            prompt.template_hash,
            prompt.evidence_ids,
            native,
        )

    # -- the run --
    async def stream(self, spec: RunSpec) -> AsyncGenerator[RunEvent, None]:
        m = self.model(spec.model)
        call = m.call()
        params = m.params
        row: dict[str, Any] = {
            "batch": spec.batch,
            "batch_key": spec.key(params) if spec.batch else None,
            "question_id": spec.question.id,
            "condition": spec.condition,
            "model": spec.model,
            "model_string": m.string,
            "params": params,
            "level": spec.level,
            "best_of": spec.best_of,
            "as_of": spec.question.as_of,
            "question_kind": question_kind(spec.question),  # what build_prompt chooses
        }
        # store writes off the event loop: a TUI keeps drawing while three runs start
        run_id = await asyncio.to_thread(self.runs.start, row)
        started = time.monotonic()
        usage = llm.Usage()
        answer: list[str] = []
        state: dict[str, Any] = {"status": ERROR, "error": None}
        tool_calls: list[dict[str, Any]] = []
        candidates: list[str] | None = None
        prep: Prepared | None = None
        try:
            # evidence first (it may build the index for RAG): the model's timeout and its
            # time to first token start when the model is asked
            prep = await asyncio.to_thread(self.prepare, spec)
            tool_calls = prep.evidence.tool_calls
            await asyncio.to_thread(
                self.runs.finish,
                run_id,
                prompt=prep.prompt_text,
                prompt_hash=prep.prompt_hash,
                evidence_ids=prep.evidence_ids,
                evidence=evidence_json(prep.evidence),
            )
            yield RunEvent("started", run_id, spec, data={"evidence": prep.evidence})
            usage = llm.Usage()
            async with asyncio.timeout(m.spec.timeout):
                messages = prep.messages
                if prep.native_tools:
                    messages = await self._tool_rounds(spec, call, messages, prep.evidence, usage)
                    for tool_call in prep.evidence.tool_calls:
                        yield RunEvent("tool", run_id, spec, data=tool_call)
                if spec.best_of > 1:
                    candidates = await self._candidates(spec, call, messages, usage)
                    chosen = await self._select(spec, call, candidates, usage)
                    usage.ttft = usage.ttft or (time.monotonic() - usage.started)
                    answer.append(candidates[chosen])
                    yield RunEvent("token", run_id, spec, text=candidates[chosen])
                else:
                    async for text in llm.stream_chat(
                        call, messages, usage, self.cfg.runs.retries, self.cfg.runs.backoff
                    ):
                        text = _valid_text(text)
                        answer.append(text)
                        yield RunEvent("token", run_id, spec, text=text)
            if "".join(answer).strip():
                state = {"status": COMPLETED, "error": None}
            else:  # nothing, or only whitespace: not an answer to score as one
                said = "nothing" if not answer else "only whitespace"
                state = {"status": ERROR, "error": f"the model replied with {said}"}
        except TimeoutError:
            state = {"status": TIMEOUT, "error": f"no complete answer within {m.spec.timeout:g} s"}
        except (asyncio.CancelledError, GeneratorExit):
            state = {"status": CANCELLED, "error": "cancelled"}
            raise
        except Exception as exc:
            state = {"status": ERROR, "error": llm.error_text(exc, call)}
        finally:
            end = {
                "answer": "".join(answer),
                "duration": time.monotonic() - started,
                "ttft": usage.ttft,
                "tokens_in": usage.tokens_in,
                "tokens_out": usage.tokens_out or (len(answer) if answer else None),
                "cost": usage.cost,
                "retries": usage.retries,
                "tool_calls": tool_calls or None,
                "candidates": candidates,
                "deployment": usage.deployment,
                **state,
            }
            if prep is not None and prep.native_tools:
                end["evidence"] = evidence_json(prep.evidence)  # now with the calls made
            # in a thread, not on the event loop (a transaction stalled the Arena's frames for
            # 10-20 ms per pane); shielded: a second cancel cannot stop the write once started
            await asyncio.shield(asyncio.to_thread(self.runs.finish, run_id, **end))
        yield RunEvent("ended", run_id, spec, data=end)

    async def _tool_rounds(
        self,
        spec: RunSpec,
        call: llm.Call,
        messages: list[dict],
        evidence: Evidence,
        usage: llm.Usage | None = None,
    ) -> list[dict]:
        """Native function calling: let the model call tools for a few rounds, then answer."""
        from fintrade_tui.runs.tools import TOOL_SPECS

        msgs = list(messages)
        store = self.cfg.store
        for _ in range(MAX_TOOL_ROUNDS):
            # tool_choice said out loud: OpenAI assumes "auto" when tools come, but
            # llama-cpp-python's server ignores tools without it
            resp = await llm.complete(
                call,
                msgs,
                self.cfg.runs.retries,
                self.cfg.runs.backoff,
                usage=usage,
                tools=TOOL_SPECS,
                tool_choice="auto",
            )
            msg = resp.choices[0].message
            calls = getattr(msg, "tool_calls", None) or []
            if not calls:
                break
            # content kept ("" beside tool calls, where OpenAI sends null and the dump drops
            # it): llama-cpp-python's chat templates read message.content of every message
            msgs.append({"content": ""} | msg.model_dump(exclude_none=True))
            for c in calls:
                result = await asyncio.to_thread(
                    _call_tool, store, spec.question, c.function.name, c.function.arguments
                )
                _record_call(evidence, c.function.name, c.function.arguments, result)
                msgs.append({"role": "tool", "tool_call_id": c.id, "content": json.dumps(result)})
        return msgs

    async def _candidates(
        self, spec: RunSpec, call: llm.Call, messages: list[dict], usage: llm.Usage
    ) -> list[str]:
        out = []
        for _ in range(spec.best_of):
            parts = [
                t
                async for t in llm.stream_chat(
                    call, messages, usage, self.cfg.runs.retries, self.cfg.runs.backoff
                )
            ]
            out.append(_valid_text("".join(parts)))
        return out

    async def _select(
        self, spec: RunSpec, call: llm.Call, candidates: list[str], usage: llm.Usage | None = None
    ) -> int:
        from fintrade_tui.runs.prompts import parse_selection, selection_prompt

        resp = await llm.complete(
            call.updated(max_tokens=16),
            selection_prompt(spec.question, candidates),
            self.cfg.runs.retries,
            self.cfg.runs.backoff,
            usage,
        )
        return parse_selection(resp.choices[0].message.content or "", len(candidates))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _valid_text(text: str) -> str:
    """A stream's text as valid Unicode: a lone surrogate (bytes that were not UTF-8, decoded
    with surrogateescape somewhere upstream) becomes U+FFFD, which the workspace can store."""
    return _SURROGATE.sub("\ufffd", text) if isinstance(text, str) else str(text)


def _call_tool(store: Any, q: Question, name: str, arguments: Any) -> dict:
    from fintrade_tui.runs.tools import call_tool

    if q.as_of is None:  # as the tool_use evidence notes: nothing to look up point-in-time
        return {"error": f"question {q.id} has no as-of date: tools cannot run point-in-time"}
    with connect(store, read_only=True) as con:
        return call_tool(con, name, arguments, q.as_of)


def _record_call(evidence: Evidence, name: str, arguments: Any, result: dict) -> None:
    from fintrade_tui.runs.tools import tool_item

    try:  # the model's arguments as written: malformed JSON is recorded raw, not a crash
        args = json.loads(arguments) if isinstance(arguments, str) and arguments else arguments
    except (ValueError, RecursionError):
        args = None
    args = args if isinstance(args, dict) else {"raw": arguments}
    n = len(evidence.tool_calls) + 1
    evidence.tool_calls.append({"n": n, "name": name, "arguments": args, "result": result})
    evidence.items.append(tool_item(n, name, args, result))


def route_tools(con: Any, q: Question, evidence: Evidence) -> None:
    """Models without function calling: the deterministic router calls the tools up front."""
    from fintrade_tui.runs.router import route
    from fintrade_tui.runs.tools import call_tool

    as_of = q.as_of
    if as_of is None:  # the tool_use evidence says so: tools cannot run point-in-time
        return
    for name, args in route(q):
        _record_call(evidence, name, args, call_tool(con, name, args, as_of))


def evidence_json(e: Evidence) -> dict[str, Any]:
    """Evidence as a run stores it: its condition, its items as dicts, its notes."""
    return {
        "condition": e.condition,
        "items": [i.to_dict() for i in e.items],
        "notes": e.notes,
    }


async def drain(agen: AsyncIterator[RunEvent], on_event: Callable[[RunEvent], None]) -> dict:
    """Consume one run's events, handing each to `on_event`; returns the end state."""
    end: dict[str, Any] = {}
    async for ev in agen:
        on_event(ev)
        if ev.kind == "ended":
            end = ev.data
    return end
