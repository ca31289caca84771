"""Arena view-model room (UI layer, no Textual import): what the Arena screen shows, computed
from plain data so it can be tested without a terminal — the condition set and its toggles,
blind labels in a seeded order, a pane's clock and status line, evidence and tool-call rows,
the judge/human comparison, and the GC and litellm warm-up tweaks the screen makes while
answers stream. (It lived in the runs core as `runs/arena_core.py`; nothing there used it.)
"""

from __future__ import annotations

import gc
import json
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from fintrade_tui.workspace.evidence import CONDITIONS, LABELS
from fintrade_tui.workspace.run_records import FINISHED
from fintrade_tui.workspace.scores import DIMENSIONS

LEVELS = ("L1", "L2", "L3", "L4", "L5", "L6")
T = TypeVar("T")


def ordered(conditions: list[str]) -> list[str]:
    """Known conditions, once each, in the canonical order (No-RAG first, Oracle last)."""
    return [c for c in CONDITIONS if c in set(conditions)]


def toggle(conditions: list[str], condition: str) -> list[str]:
    """Add `condition` if absent, remove it if present; the result stays in canonical order."""
    have = set(conditions)
    have ^= {condition}
    return ordered(list(have))


def cycle(options: Sequence[T], current: T) -> T:
    """The option after `current` (wrapping); the first one when `current` is unknown."""
    opts = list(options)
    if not opts:
        return current
    return opts[(opts.index(current) + 1) % len(opts)] if current in opts else opts[0]


def letter(i: int) -> str:
    """Blind label of the i-th pane: A, B, ..., Z, then A2, B2..."""
    return chr(ord("A") + i % 26) + (str(i // 26 + 1) if i >= 26 else "")


def blind_order(keys: list[str], seed: str) -> list[str]:
    """`keys` shuffled by a seeded generator: the same question and seed give the same order on
    every machine (string seeds are hashed with SHA-512, not Python's salted hash)."""
    out = list(keys)
    random.Random(f"{seed}|{','.join(sorted(keys))}").shuffle(out)
    return out


def pane_label(condition: str, blind: bool, revealed: bool, position: int, model: str = "") -> str:
    """What a pane's title says: the condition, or its letter while blind (both once revealed)."""
    name = LABELS.get(condition, condition) + (f" · {model}" if model else "")
    if not blind:
        return name
    return f"{letter(position)} = {name}" if revealed else letter(position)


def look_ahead_note(
    as_of: Any, models: Mapping[str, Any], model: str, model_string: str | None = None
) -> str:
    """A pane title's mark when the model's knowledge cutoff is after the question's as-of
    (models/cutoffs.py): " · may know (cutoff D)", else nothing."""
    from fintrade_tui.models.cutoffs import MAY_KNOW, look_ahead, model_cutoff

    cutoff = model_cutoff(models, model, model_string)
    return f" · may know (cutoff {cutoff.day})" if look_ahead(as_of, cutoff) == MAY_KNOW else ""


@dataclass
class Clock:
    """A pane's timings: start, first token, chunks so far, end (monotonic seconds)."""

    started: float = field(default_factory=time.monotonic)
    first: float | None = None
    chunks: int = 0
    ended: float | None = None

    def token(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if self.first is None:
            self.first = now
        self.chunks += 1

    def stop(self, now: float | None = None) -> None:
        self.ended = time.monotonic() if now is None else now

    def ttft(self) -> float | None:
        return None if self.first is None else self.first - self.started

    def elapsed(self, now: float | None = None) -> float:
        end = self.ended if self.ended is not None else (now or time.monotonic())
        return end - self.started

    def rate(self, now: float | None = None) -> float | None:
        """Chunks per second since the first one."""
        if self.first is None or self.chunks < 2:
            return None
        end = self.ended if self.ended is not None else (now or time.monotonic())
        span = end - self.first
        return (self.chunks - 1) / span if span > 0 else None


def status_line(
    status: str,
    ttft: float | None = None,
    rate: float | None = None,
    elapsed: float | None = None,
    error: str | None = None,
    hide_timings: bool = False,
) -> str:
    """`completed · ttft 0.41 s · 38.2 tok/s · 3.1 s` (timings left out when hidden)."""
    parts = [status]
    if not hide_timings:
        if ttft is not None:
            parts.append(f"ttft {ttft:.2f} s")
        if rate is not None:
            parts.append(f"{rate:.1f} tok/s")
        if elapsed is not None:
            parts.append(f"{elapsed:.1f} s")
    line = " · ".join(parts)
    return f"{line} — {error}" if error and error != status else line


def progress_line(panes: list[tuple[str, str, bool]]) -> str:
    """The Arena's status line, from its panes' (label, status, judged): `running: 1 of 3
    done · RAG, Oracle answering`, then `done: 3 of 3 completed · j judges` (failures and
    cancels counted, `R retries`), then `judged: 3 of 3 answers scored`. "" while no pane has
    started (the line keeps what it said: the question, getting ready)."""
    total = len(panes)
    active = [label for label, status, _ in panes if status not in (*FINISHED, "idle")]
    done = [status for _, status, _ in panes if status in FINISHED]
    if active:
        return f"running: {len(done)} of {total} done · {', '.join(active)} answering"
    if not done:
        return ""
    completed = done.count("completed")
    judged = sum(1 for _, status, j in panes if j and status == "completed")
    failed = sum(s in ("error", "timeout", "interrupted") for s in done)
    cancelled = done.count("cancelled")
    if completed and judged == completed and not failed:
        return f"judged: {judged} of {total} answers scored"
    line = f"done: {completed} of {total} completed"
    line += f", {failed} failed (R retries)" if failed else ""
    line += f", {cancelled} cancelled" if cancelled else ""
    return line + (" · j judges" if completed and not judged else "")


def record_status(run: dict[str, Any], hide_timings: bool = False) -> str:
    """The status line of a stored run (replay): its timings as recorded."""
    ttft, dur, out = run.get("ttft"), run.get("duration"), run.get("tokens_out")
    rate = None
    if out and dur and ttft is not None and dur > ttft:
        rate = out / (dur - ttft)
    return status_line(run.get("status") or "?", ttft, rate, dur, run.get("error"), hide_timings)


class QuietGC:
    """No full garbage collections while answers stream: they walk every live object and stop
    the screen for 40-100 ms each (Textual keeps many small cached objects). Young objects are
    still collected; the full collection is deferred until the last stream ends. Reentrant:
    one `enter` per stream, one `leave` when it ends."""

    def __init__(self) -> None:
        self.active = 0
        self.saved: tuple[int, int, int] | None = None

    def enter(self) -> None:
        if self.active == 0:
            self.saved = gc.get_threshold()
            gc.set_threshold(self.saved[0], self.saved[1], 1_000_000)
        self.active += 1

    def leave(self) -> None:
        self.active = max(0, self.active - 1)
        if self.active == 0 and self.saved is not None:
            gc.set_threshold(*self.saved)
            self.saved = None


QUIET_GC = QuietGC()
_FROZEN = [False]


def freeze_heap() -> None:
    """Once per process, after the heavy imports: move every object alive now (modules,
    litellm's tables, about 500k) out of the collector's full passes, which otherwise walk them
    all and stop the screen for 150-400 ms each."""
    if not _FROZEN[0]:
        _FROZEN[0] = True
        gc.freeze()


def warm_litellm() -> None:
    """Import litellm and take one mocked streamed call through it, in a private event loop
    (call it from a worker thread): the first real call would otherwise import a few dozen
    modules lazily on the UI's event loop and stall it for ~250 ms."""
    import asyncio

    from fintrade_tui.models import llm

    lm = llm.litellm()

    async def once() -> None:
        resp = await lm.acompletion(
            model="openai/warm-up",
            messages=[{"role": "user", "content": "hi"}],
            mock_response="ok",
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in resp:
            pass

    asyncio.run(once())


# -- evidence --------------------------------------------------------------------------------
@dataclass
class Row:
    """One line of the evidence panel and what Enter shows for it."""

    kind: str  # item | tool | note | prompt | trace
    line: str
    title: str = ""
    body: str = ""
    table: list[list[str]] | None = None  # a supplied table: Enter draws its cells


def _fmt_scores(scores: Any) -> str:
    if not isinstance(scores, dict):
        return ""
    parts = []
    for k, v in scores.items():
        if isinstance(v, int | float) and not isinstance(v, bool):
            parts.append(f"{k} {v:.3f}")
    return " ".join(parts)


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _as_dict(item: Any) -> dict[str, Any]:
    return item if isinstance(item, dict) else item.to_dict()


def record_rows(record: dict[str, Any] | None) -> list[Row]:
    """A stored run's own rows: where an imported run came from, and its prompt (Enter)."""
    if not record:
        return []
    rows = []
    if record.get("origin") == "external":
        name = Path(record.get("source_file") or "?").name
        where = f"{name} {record.get('source_locator') or ''}"
        label = record.get("condition_label")
        said = f" · condition {label!r}" if label and label != record.get("condition") else ""
        rows.append(Row("note", f"imported ({record.get('source_format')}): {where}{said}"))
    if record.get("prompt"):
        prompt = record["prompt"]
        rows.append(Row("prompt", f"[prompt] {len(prompt):,} chars", "Prompt as sent", prompt))
    return rows


def evidence_rows(
    evidence: Any,
    tool_calls: list[dict[str, Any]] | None = None,
    record: dict[str, Any] | None = None,
) -> list[Row]:
    """Rows for an Evidence object or a stored run's evidence dict: a stored `record`'s origin
    and prompt, then items (track, title, date, scores; Enter shows the parent passage), then
    every tool call with its arguments and result, then the notes."""
    own = record_rows(record)
    if evidence is None:
        return own
    if isinstance(evidence, dict):
        items = [_as_dict(i) for i in evidence.get("items") or []]
        notes = list(evidence.get("notes") or [])
        calls = list(tool_calls or [])
    else:
        items = [_as_dict(i) for i in evidence.items]
        notes = list(evidence.notes)
        calls = list(tool_calls if tool_calls is not None else evidence.tool_calls)
    rows: list[Row] = []
    for it in items:
        if it.get("track") == "tool" and calls:
            continue  # listed with the calls below
        meta = it.get("meta") or {}
        when = it.get("available_from")
        table = meta.get("rows") if isinstance(meta.get("rows"), list) else None
        track = "table" if table else it.get("track", "?")
        bits = [f"[{track}]", _short(it.get("title") or it.get("id", ""), 80)]
        if meta.get("gold"):
            bits.insert(1, "★ gold")  # the benchmark's own gold fact
        if when:
            bits.append(str(when)[:10])
        if sc := _fmt_scores(meta.get("scores")):
            bits.append(sc)
        parent = meta.get("parent_text") or ""
        body = parent or it.get("text") or ""
        head = it.get("title") or it.get("id", "")
        head += " — parent passage" if parent else ""
        rows.append(Row("item", "  ".join(bits), head, body, table))
    for c in calls:
        args = json.dumps(c.get("arguments") or {}, sort_keys=True, default=str)
        result = c.get("result") or {}
        short = json.dumps(result, sort_keys=True, default=str)
        short = short if len(short) <= 80 else short[:77] + "..."
        line = f"[call {c.get('n', '?')}] {c.get('name')}({args}) -> {short}"
        full = json.dumps(result, indent=2, sort_keys=True, default=str)
        rows.append(Row("tool", line, f"{c.get('name')} {args}", full))
    rows += [Row("note", f"note: {n}") for n in notes]
    return own + rows


# -- judging ---------------------------------------------------------------------------------
def disagreements(
    judge: dict[str, Any] | None, human: dict[str, Any] | None, threshold: int
) -> dict[str, tuple[int, int]]:
    """Dimensions where the judge and the person differ by `threshold` or more: dim -> (j, h)."""
    if not judge or not human:
        return {}
    out = {}
    for d in DIMENSIONS:
        j, h = judge.get(d), human.get(d)
        if j is not None and h is not None and abs(j - h) >= threshold:
            out[d] = (j, h)
    return out


def golden_line(coverage: dict[str, Any] | None, judge: dict[str, Any] | None) -> str | None:
    """`golden coverage 1 of 3 from the text (roe 25.1%); the judge listed: earnings_price, roa,
    roe`: what the answer's text states (the judge's stored reading, else `coverage`, read from
    the answer by audits/golden_coverage.py) first, the judge's own list beside it, never
    instead of it. None when there is neither (a question without golden indicators)."""
    from fintrade_tui.audits.golden_coverage import coverage_text

    ok = judge if judge and judge.get("status") == "ok" else None
    detail = (ok or {}).get("detail") or {}
    cov = detail.get("golden_coverage") or coverage
    prf = detail.get("golden_prf")
    if prf is None and not (cov or {}).get("golden"):  # nothing read, nothing to read for
        return None
    line = coverage_text(cov)
    if prf is not None:
        listed = [*(prf.get("metrics_canonical") or []), *(prf.get("metrics_unmapped") or [])]
        line += "; the judge listed: " + (", ".join(listed) or "none")
    return line


def audit_rows(audit: dict[str, Any] | None) -> list[tuple[str, str]]:
    """(verdict, text) per claim of a numeric audit: the figure, its indicator and the store."""
    if not audit:
        return []
    rows = []
    for c in audit.get("claims") or []:
        if c.get("room") == "text":  # against the supplied evidence or the reference answer
            found = c.get("compared_with") or "not found"
            rows.append((c.get("verdict", "?"), f"{c.get('text')}: {found} — {c.get('why')}"))
            continue
        what = c.get("indicator") or "?"
        store = c.get("store_value")
        store_txt = f"store {store:.4g}" if isinstance(store, int | float) else "no store value"
        src = f" ({c['source']})" if c.get("source") else ""
        val = f"{c.get('value'):g}{c.get('unit') or ''}" if c.get("value") is not None else "?"
        # the reason already names the source; a supported figure needs only the source
        tail = src if c.get("verdict") == "SUPPORTED" or not c.get("why") else f" — {c['why']}"
        rows.append((c.get("verdict", "?"), f"{what} {val}: {store_txt}{tail}"))
    return rows


def scores_text(row: dict[str, Any] | None) -> str:
    """`acc 4 · com 3 · rel 5 · cla 4` for a score row (— where unset)."""
    if not row:
        return "—"
    return " · ".join(
        f"{d[:3]} {row.get(d) if row.get(d) is not None else '—'}" for d in DIMENSIONS
    )
