"""Common-evidence room: the canonical evidence of one question, which the `common` judging
protocol shows the judge for every condition's answer, so that a RAG answer is not rewarded
just for quoting its own retrieval.

The canonical evidence is the Oracle condition's evidence (the golden indicators' values and
anything supplied with the question) followed by what a FIXED retrieval returns: hybrid mode,
`COMMON_K` passages, `COMMON_TOKENS` tokens, the default recency prior, the question's text,
tickers, as_of and window (the RAG condition's builder run with these settings, whatever the
configuration says). It depends on the question, the store and the index only: never on the
run, its condition or its model. Build it once per question per judging session
(`CommonEvidenceCache`).
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from typing import Any

from fintrade_tui.audits.manipulation import neutralize
from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.runs.prompts import defang
from fintrade_tui.workspace.evidence import EvidenceItem
from fintrade_tui.workspace.questions import Question

COMMON_K = 8  # retrieved passages (filing and market) in the canonical evidence
COMMON_TOKENS = 3000  # their token budget
TAG = "evidence"  # the judge prompt's delimiter of this block
ORACLE_ONLY = "the canonical evidence is the Oracle part alone"


@dataclass
class CommonEvidence:
    """The canonical evidence of one question: items in order, and notes on what is missing."""

    question_id: str
    items: list[EvidenceItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The block the judge reads, each item numbered and dated (data, never instructions)."""
        if not self.items:
            return "(no canonical evidence for this question)"
        blocks = []
        for n, item in enumerate(self.items, 1):
            when = f" (available from {item.available_from})" if item.available_from else ""
            title = item.title or item.id
            text = neutralize(item.text.strip())  # a passage may address the grader too
            blocks.append(defang(f"[C{n}] {title}{when}\n{text}", TAG))
        return "\n\n".join(blocks)

    def record(self) -> dict[str, Any]:
        """What a score stores about the evidence it was judged against."""
        digest = hashlib.sha256(self.text().encode("utf-8")).hexdigest()[:12]
        return {"ids": [i.id for i in self.items], "notes": list(self.notes), "hash": digest}


def _fixed(cfg: Config) -> Config:
    """`cfg` with the retrieval settings the canonical evidence fixes."""
    retrieval = cfg.retrieval.model_copy(update={"k": COMMON_K, "recency": True})
    runs = cfg.runs.model_copy(update={"context_tokens": COMMON_TOKENS})
    return cfg.model_copy(update={"retrieval": retrieval, "runs": runs})


def build_common(cfg: Config, q: Question, con: Any) -> CommonEvidence:
    """The canonical evidence of `q` (`con`: the store, read-only). Blocking (retrieval)."""
    from fintrade_tui.runs.conditions import ConditionContext, build_evidence

    oracle = build_evidence("oracle", q, ConditionContext(cfg, con))
    out = CommonEvidence(q.id, list(oracle.items), list(oracle.notes))
    try:
        # the RAG builder keeps point-in-time and drops tickers the index lacks, with a note
        rag = build_evidence("rag", q, ConditionContext(_fixed(cfg), con))
    except UserError as e:  # retrieval cannot run here: the Oracle part stands alone
        out.notes.append(f"{ORACLE_ONLY}: retrieval failed ({e.where}: {e.problem})")
        return out
    out.notes += rag.notes
    seen = {i.id for i in out.items}
    out.items += [i for i in rag.items if i.id not in seen]
    if not rag.items:
        out.notes.append(f"{ORACLE_ONLY}: no filing or market passage retrieved")
    return out


class CommonEvidenceCache:
    """One judging session's canonical evidence, built once per question even when several
    runs of that question are judged at once."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self._tasks: dict[str, asyncio.Future[CommonEvidence]] = {}

    async def get(self, q: Question) -> CommonEvidence:
        if q.id not in self._tasks:
            self._tasks[q.id] = asyncio.ensure_future(asyncio.to_thread(self._build, q))
        return await self._tasks[q.id]

    def _build(self, q: Question) -> CommonEvidence:
        from fintrade_tui.store.db import connect

        if not self.cfg.store.exists():
            out = CommonEvidence(q.id)
            out.notes.append(f"no store at {self.cfg.store}: no canonical evidence")
            return out
        with connect(self.cfg.store, read_only=True) as con:
            return build_common(self.cfg, q, con)
