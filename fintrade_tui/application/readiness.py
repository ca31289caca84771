"""Readiness room: what a run needs before it can start on a fresh clone — the store, the
question bank and, for RAG, the retrieval index of the question's tickers — built on demand
from the configured bundle, offline, with progress."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fintrade_tui.config import Config
from fintrade_tui.retrieval.indexing import ensure_index
from fintrade_tui.store.db import connect, current

if TYPE_CHECKING:
    from fintrade_tui.models.resolve import Model

SEEDS = "fintradebench/questions/FinTradeBench_Golden_Seed_150.csv"
Say = Callable[[str], None]
Reporter = Any  # the progress callback type the ingest and index builders take


def ensure_store(cfg: Config, say: Say, progress: Reporter = None) -> None:
    """Build the store when there is none, or it has another version's format."""
    if current(cfg.store):
        return
    from fintrade_tui.ingest.pipeline import run_ingest

    why = "an older format" if cfg.store.exists() else "no store"
    say(f"{why} at {cfg.store}: building it from {cfg.bundle} (about 1.5 min, once)")
    run_ingest(cfg, progress)


def ensure_questions(cfg: Config, ws: Any, say: Say) -> None:
    """Import the bundle's seed questions when the workspace holds none of them yet (runs
    imported first may have created placeholders of their ids: the seeds replace them)."""
    (n,) = ws.execute("SELECT count(*) FROM questions WHERE source = 'fintradebench'").fetchone()
    seeds = cfg.bundle / SEEDS
    if n or not seeds.is_file():
        return
    from fintrade_tui.imports.reference import save_questions_with_references
    from fintrade_tui.questions.importers import read_questions
    from fintrade_tui.questions.resolve import Resolver

    say(f"importing the {seeds.name} seed questions (and their reference answers)")
    with connect(cfg.store) as con:
        r = Resolver(con, cfg.questions.reference_date, cfg.fundamentals.estimated_lag_days)
        resolved = [r.evidence(r.resolve(q)) for q in read_questions(seeds, None)]
    save_questions_with_references(ws, resolved, seeds)


def prepare(
    cfg: Config,
    q: Any,
    models: list[Model],
    level: str,
    rag: bool,
    say: Say,
    progress: Reporter = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> list[str]:
    """What the Arena does while the analyst reads question `q`, so `r` starts warm: begin
    loading each local model, index what a RAG pane would use first (only when one is open),
    then have each local model read the opening every pane's prompt shares. Every step is
    work the runs would do anyway, done earlier; background indexing waits meanwhile.
    Returns the models that read the opening."""
    from fintrade_tui.retrieval.indexing import busy
    from fintrade_tui.runs.prompts import shared_prefix

    local = [m for m in models if m.local]
    with busy():
        for m in local:
            m.warm()
        if rag and q.as_of and q.tickers and not cancelled():
            ensure_index(cfg, list(q.tickers), say, progress, q.as_of, staged=True)
        opening = shared_prefix(q, level)
        done = []
        for m in local:
            if cancelled():
                break
            m.prefill(opening)
            done.append(m.name)
    return done
