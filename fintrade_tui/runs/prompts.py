"""Runs room: TELeR prompts (levels L1-L6) built from templates/teler.yaml, and the best-of-N
selection prompt.

The templates live in a file, not in code, so a run can record which template text produced
it (`template_hash`). Rendering fills `{name}` placeholders in the template text only, in one
pass: question and evidence text are substituted as values and never parsed, so braces or
prompt-injection text inside them cannot change the prompt's structure.

The question's kind (`questions.kind.question_kind`: fundamentals, trading, hybrid or
document_qa) picks the wording of the parts that name indicators or filing sections: the
template's `kinds.<kind>` parts replace the shared ones. The kind is a function of the question
alone, so `Prompt.kind` together with `template_hash` says which text a run got.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from fintrade_tui.errors import UserError
from fintrade_tui.questions.kind import KINDS, question_kind
from fintrade_tui.workspace.evidence import Evidence, EvidenceItem, approx_tokens
from fintrade_tui.workspace.questions import Question

LEVELS = ("L1", "L2", "L3", "L4", "L5", "L6")
CITED_LEVELS = ("L5", "L6")  # evidence labelled [E1]... with a duty to cite
TEMPLATE_FILE = Path(__file__).parent / "templates" / "teler.yaml"
DATA_TAG = "evidence"
CANDIDATE_TAG = "candidate"


@dataclass
class Prompt:
    """One rendered prompt, as sent to the model and as stored with the run."""

    messages: list[dict[str, str]]  # [{"role": "system", ...}, {"role": "user", ...}]
    text: str  # the whole prompt as stored with the run (roles marked)
    evidence_ids: list[str]  # ids of the items that fit the budget, in prompt order
    level: str
    template_hash: str  # sha256 of the template source used (first 12 hex)
    kind: str = "hybrid"  # the question's kind, which picked the kind-specific wording


# --- templates -------------------------------------------------------------------------------


@cache
def load_templates(path: Path = TEMPLATE_FILE) -> dict[str, Any]:
    """The parsed template file, checked once: every level exists and names known parts, and
    every question kind has its section, which replaces known parts only."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    parts, when = data["parts"], data.get("when", {})
    kinds = data.get("kinds") or {}
    for kind in KINDS:
        if not isinstance(kinds.get(kind), dict):
            raise ValueError(f"{path.name}: kinds.{kind} is missing")
        unknown = sorted(set(kinds[kind]) - set(parts))
        if unknown:
            raise ValueError(f"{path.name}: kinds.{kind} replaces unknown part {unknown[0]!r}")
    for level in LEVELS:
        spec = data["levels"].get(level)
        if spec is None:
            raise ValueError(f"{path.name}: level {level} is missing")
        for name in spec["system"] + spec["user"]:
            alt = when.get(name, {}).get("otherwise")
            if name not in parts or (alt and alt not in parts):
                raise ValueError(f"{path.name}: level {level} uses unknown part {name!r}")
    return data


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise UserError(f"level '{level}'", "is not a TELeR level", "use L1..L6")


def template_source(level: str) -> dict[str, Any]:
    """Everything in the template file that can shape a prompt at `level`: its part lists, the
    conditions, and the text of each part (and alternative) it may use, in the shared and in
    every kind's wording, plus the pieces."""
    _check_level(level)
    t = load_templates()
    spec = t["levels"][level]
    names = spec["system"] + spec["user"]
    when = {n: t["when"][n] for n in names if n in t["when"]}
    used = set(names) | {w["otherwise"] for w in when.values() if w.get("otherwise")}
    return {
        "version": t.get("version"),
        "level": level,
        "system": spec["system"],
        "user": spec["user"],
        "when": when,
        "parts": {n: t["parts"][n] for n in sorted(used)},
        "kinds": {
            k: {n: t["kinds"][k][n] for n in sorted(used) if n in t["kinds"][k]} for k in KINDS
        },
        "pieces": t["pieces"],
    }


def template_hash(level: str) -> str:
    """sha256 (first 12 hex) of the level's template source, canonically serialised."""
    blob = json.dumps(template_source(level), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _fill(template: str, values: dict[str, str]) -> str:
    """Fill `{name}` in template text in one pass. Values are inserted verbatim (never
    re-scanned), unlike str.format, which would choke on braces in question or evidence text."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in values:
            raise KeyError(f"template placeholder {{{name}}} has no value")
        return values[name]

    return _PLACEHOLDER.sub(sub, template)


def _defang(text: str, tag: str) -> str:
    """Stop data from opening or closing its own delimiters: `</evidence>` inside a filing
    becomes `&lt;/evidence>`, so the block always ends where the template ends it."""
    return re.sub(rf"<(?=\s*/?\s*{tag}\b)", "&lt;", text, flags=re.IGNORECASE)


def _as_of(q: Question) -> str:
    if q.as_of is None:
        # point-in-time wording is required at every level: no date, no prompt
        raise UserError(f"question {q.id}", "has no as_of date", "resolve it first")
    return q.as_of.isoformat()


# --- evidence --------------------------------------------------------------------------------


def _item_block(item: EvidenceItem, label: str | None, pieces: dict[str, str]) -> str:
    title = item.title or " ".join(x for x in (item.ticker, item.track) if x) or item.id
    day = item.available_from.isoformat() if item.available_from else ""
    # what the item already says is not said again (a small model read a figure stated twice,
    # "available from D" beside "period ended P", as two periods): a date the title or text
    # names, a title whose every word the text holds (the Oracle's "AAPL ROE = 0.2588")
    named = day and (day in title or day in item.text)
    available = _fill(pieces["available"], {"date": day}) if day and not named else ""
    said = set(re.findall(r"[\w.%()/-]+", item.text))
    if set(re.findall(r"[\w.%()/-]+", title)) <= said:
        title = ""
    values = {
        "title": _defang(title, DATA_TAG),
        "available": available,
        "text": _defang(item.text.strip(), DATA_TAG),
        "label": label or "",
    }
    piece = ("item_cited" if label else "item_plain") + ("" if title else "_untitled")
    return _fill(pieces[piece], values)


def _fit_items(
    items: list[EvidenceItem], cited: bool, budget_tokens: int, pieces: dict[str, str]
) -> tuple[list[EvidenceItem], list[str]]:
    """Items in order until the next would exceed the budget; the first always goes in, so a
    condition that found something never shows the model nothing."""
    kept: list[EvidenceItem] = []
    blocks: list[str] = []
    used = 0
    for item in items:
        block = _item_block(item, f"E{len(kept) + 1}" if cited else None, pieces)
        cost = approx_tokens(block)
        if kept and used + cost > budget_tokens:
            break
        kept.append(item)
        blocks.append(block)
        used += cost
    return kept, blocks


# --- prompts ---------------------------------------------------------------------------------


def _question_values(q: Question, pieces: dict[str, str]) -> dict[str, str]:
    details = ""
    if q.tickers:
        details += _fill(pieces["companies"], {"tickers": ", ".join(q.tickers)})
    # a one-day window equal to as_of adds nothing the point-in-time sentence does not say
    if q.window_start and q.window_end and q.window_start != q.window_end:
        details += _fill(
            pieces["period"],
            {"start": q.window_start.isoformat(), "end": q.window_end.isoformat()},
        )
    return {"question": q.text.strip(), "details": details}


def _stored_text(messages: list[dict[str, str]]) -> str:
    return "\n\n".join(f"### {m['role']}\n{m['content']}" for m in messages)


def build_prompt(
    q: Question, evidence: Evidence, level: str = "L5", budget_tokens: int = 3000
) -> Prompt:
    """The TELeR prompt for `q` at `level` under `evidence`'s condition, in the wording of the
    question's kind.

    Evidence items go in, in order, until the next would exceed `budget_tokens` (approx.
    tokens of the rendered item); the rest are left out and a line says how many.
    """
    _check_level(level)
    t = load_templates()
    kind = question_kind(q)
    spec, pieces, when = t["levels"][level], t["pieces"], t["when"]
    parts = t["parts"] | t["kinds"][kind]
    cited = level in CITED_LEVELS

    kept, blocks = _fit_items(evidence.items, cited, budget_tokens, pieces)
    n_out = len(evidence.items) - len(kept)
    left_out = (
        _fill(
            pieces["left_out"], {"n": str(n_out), "items_word": "item" if n_out == 1 else "items"}
        )
        if n_out
        else ""
    )
    values = {
        "as_of": _as_of(q),
        "items": "\n\n".join(blocks),
        "left_out": left_out,
        **_question_values(q, pieces),
    }
    met = {"evidence": bool(kept), "tool_use": evidence.condition == "tool_use"}

    def render(names: list[str]) -> str:
        out = []
        for name in names:
            cond = when.get(name)
            if cond and not met[cond["needs"]]:
                name = cond.get("otherwise")
                if not name:
                    continue
            out.append(_fill(parts[name], values).strip())
        return "\n\n".join(out)

    messages = [
        {"role": "system", "content": render(spec["system"])},
        {"role": "user", "content": render(spec["user"])},
    ]
    return Prompt(
        messages=messages,
        text=_stored_text(messages),
        evidence_ids=[i.id for i in kept],
        level=level,
        template_hash=template_hash(level),
        kind=kind,
    )


def shared_prefix(q: Question, level: str = "L5") -> list[dict[str, str]]:
    """The opening every evidence condition's prompt for `q` starts with (all but Tool-Use,
    whose system message names its tools): the system message and the user parts before the
    first one that depends on the evidence. A local model can read it before any evidence
    exists and reuse it for every pane (the engine keeps the longest shared token prefix)."""
    _check_level(level)
    t = load_templates()
    spec, when = t["levels"][level], t["when"]
    parts = t["parts"] | t["kinds"][question_kind(q)]
    values = {"as_of": _as_of(q), **_question_values(q, t["pieces"])}

    def render(names: list[str]) -> str:
        return "\n\n".join(_fill(parts[n], values).strip() for n in names)

    opening = []
    for name in spec["user"]:
        if name in when:
            break
        opening.append(name)
    system = [n for n in spec["system"] if n not in when]  # `tools` is Tool-Use's alone
    return [
        {"role": "system", "content": render(system)},
        {"role": "user", "content": render(opening)},
    ]


# --- best-of-N -------------------------------------------------------------------------------


def selection_prompt(q: Question, candidates: list[str]) -> list[dict[str, str]]:
    """Messages asking the model which of `candidates` answers `q` best, by number only."""
    if not candidates:
        raise UserError(f"best-of-N for question {q.id}", "has no candidates to choose from")
    sel = load_templates()["selection"]
    blocks = [
        _fill(sel["candidate"], {"n": str(i), "text": _defang(c.strip(), CANDIDATE_TAG)})
        for i, c in enumerate(candidates, 1)
    ]
    values = {
        "as_of": _as_of(q),
        "question": q.text.strip(),
        "candidates": "\n\n".join(blocks),
        "n": str(len(candidates)),
    }
    return [
        {"role": "system", "content": _fill(sel["system"], values).strip()},
        {"role": "user", "content": _fill(sel["user"], values).strip()},
    ]


_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5,
    "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}  # fmt: skip
_CARDINALS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
_WORDS = _ORDINALS | _CARDINALS
_ANY = r"(\d+|" + "|".join(_WORDS) + r")"
_ORD = r"(" + "|".join(_ORDINALS) + r")"
# most explicit first: "Candidate 2" / "#2", then a reply that starts with its choice, then
# "the second", then any in-range number ("one" alone is too common in prose to count)
_PATTERNS = (
    re.compile(rf"\b(?:candidate|answer|option|choice)\s*(?:no\.?\s*)?#?\s*{_ANY}\b"),
    re.compile(r"#\s*(\d+)\b"),
    re.compile(rf"^[\s*_\"'(\[]*{_ANY}\b"),
    re.compile(rf"\b{_ORD}\b"),
    re.compile(r"\b(\d+)\b"),
)


def parse_selection(text: str, n: int) -> int:
    """The 0-based index of the candidate the model picked; 0 when nothing usable is found.
    Accepts "2", "2.", "**2**", "Candidate 2", "#2", "the second", "candidate two"."""
    low = text.lower()
    for pattern in _PATTERNS:
        for m in pattern.finditer(low):
            tok = m.group(1)
            k = int(tok) if tok.isdigit() else _WORDS[tok]
            if 1 <= k <= n:
                return k - 1
    return 0


# shared with the judge's templates: the same safe filling and delimiter defence
fill_template = _fill
defang = _defang
