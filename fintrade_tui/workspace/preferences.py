"""Preference records room: blinded pairwise A/B/Tie preferences of people and the LLM judge's
pairwise verdicts, append-only in the workspace (`preferences`, `pair_verdicts`). A preference
keeps the runs as SHOWN (A left, B right), the side the start run was drawn onto (from a
recorded seed), the label in the shown frame and normalised to the runs (`winner`); reports read
the newest row per (annotator, unordered pair). Judging the pairs: judging/preferences.py."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fintrade_tui.errors import UserError
from fintrade_tui.workspace.locked import LockedTable, insert_rows

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

SHOWN = ("A", "B", "tie")
SOURCES = ("arena", "cli")

SCHEMA = """
CREATE TABLE IF NOT EXISTS preferences (
    id VARCHAR PRIMARY KEY, question_id VARCHAR NOT NULL,
    run_a VARCHAR NOT NULL, run_b VARCHAR NOT NULL, first_run VARCHAR NOT NULL,
    first_side VARCHAR NOT NULL, seed VARCHAR, shown VARCHAR NOT NULL, winner VARCHAR NOT NULL,
    blind BOOLEAN NOT NULL, source VARCHAR NOT NULL, annotator VARCHAR NOT NULL, note VARCHAR,
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS pair_verdicts (
    id VARCHAR PRIMARY KEY, question_id VARCHAR NOT NULL,
    run_x VARCHAR NOT NULL, run_y VARCHAR NOT NULL, judge VARCHAR NOT NULL, judge_model VARCHAR,
    prompt_hash VARCHAR, first VARCHAR NOT NULL, second VARCHAR NOT NULL,
    consistent BOOLEAN NOT NULL, winner VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL
);
"""
_PREF = [
    "id",
    "question_id",
    "run_a",
    "run_b",
    "first_run",
    "first_side",
    "seed",
    "shown",
    "winner",
    "blind",
    "source",
    "annotator",
    "note",
    "created_at",
]
_VERDICT = [
    "id",
    "question_id",
    "run_x",
    "run_y",
    "judge",
    "judge_model",
    "prompt_hash",
    "first",
    "second",
    "consistent",
    "winner",
    "created_at",
]


def first_shown_as_b(seed: str) -> bool:
    """The side draw: True puts the first run on the right (B). Seeded, so it is reproducible
    and recorded; a string seed is hashed with SHA-512, not Python's salted hash."""
    return random.Random(f"prefer|{seed}").random() < 0.5


def shown_pair(first: str, second: str, seed: str | None) -> tuple[str, str]:
    """(run shown as A, run shown as B); no seed: the given order."""
    if seed is not None and first_shown_as_b(seed):
        return second, first
    return first, second


@dataclass
class Preference:
    """One A/B/Tie choice between two runs of one question, in the frame it was shown in."""

    first_run: str  # the run the annotator started from (focused pane, CLI RUN_A)
    second_run: str
    shown: str  # A | B | tie, A = the run shown left
    seed: str | None = None  # drew the side; None: shown in the given order (the CLI)
    annotator: str = "analyst"
    note: str | None = None
    blind: bool = True
    source: str = "arena"

    @property
    def run_a(self) -> str:
        return shown_pair(self.first_run, self.second_run, self.seed)[0]

    @property
    def run_b(self) -> str:
        return shown_pair(self.first_run, self.second_run, self.seed)[1]

    @property
    def winner(self) -> str:
        """The preferred run id, or "tie"."""
        return {"A": self.run_a, "B": self.run_b, "tie": "tie"}[self.shown]

    def check(self) -> None:
        if self.shown not in SHOWN:
            raise UserError(f"choice {self.shown!r}", "is unknown", "use A, B or tie")
        if self.first_run == self.second_run:
            raise UserError(f"run {self.first_run!r}", "is compared with itself", "give two runs")
        if self.source not in SOURCES:
            raise UserError(f"source {self.source!r}", "is unknown", "use arena or cli")
        if not self.annotator.strip():
            raise UserError("--annotator", "is empty", "give a name")


def unordered_pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


class PreferenceStore(LockedTable):
    """The `preferences` and `pair_verdicts` tables over one workspace connection."""

    def __init__(self, con: Connection, read_only: bool = False) -> None:
        super().__init__(con)
        if not read_only:
            from fintrade_tui.workspace.run_records import SCHEMA as RUNS

            con.execute(RUNS)  # preferences point at runs
            con.execute(SCHEMA)
        found = con.execute(
            "SELECT count(*) FROM information_schema.tables"
            " WHERE table_name IN ('preferences', 'pair_verdicts')"
        ).fetchone()
        self.ready = bool(found and found[0] == 2)

    def save(self, p: Preference) -> dict[str, Any]:
        """Append one preference in its own transaction; returns the stored row."""
        p.check()
        with self.transaction() as cur:
            found = dict(
                cur.execute(
                    "SELECT id, question_id FROM runs WHERE list_contains(?, id)",
                    [[p.first_run, p.second_run]],
                ).fetchall()
            )
            for rid in (p.first_run, p.second_run):
                if rid not in found:
                    raise UserError(f"run {rid!r}", "not found", "see `fintrade-tui runs list`")
            if found[p.first_run] != found[p.second_run]:
                raise UserError(
                    f"runs {p.first_run} and {p.second_run}",
                    f"answer different questions ({found[p.first_run]}, {found[p.second_run]})",
                    "compare two runs of one question",
                )
            first_side = "B" if p.run_a != p.first_run else "A"
            row = {
                "id": uuid.uuid4().hex[:12],
                "question_id": found[p.first_run],
                "run_a": p.run_a,
                "run_b": p.run_b,
                "first_run": p.first_run,
                "first_side": first_side,
                "seed": p.seed,
                "shown": p.shown,
                "winner": p.winner,
                "blind": p.blind,
                "source": p.source,
                "annotator": p.annotator,
                "note": p.note,
                "created_at": datetime.now(),
            }
            insert_rows(cur, "preferences", _PREF, [[row[c] for c in _PREF]])
        return row

    def latest(self, annotator: str | None = None) -> list[dict[str, Any]]:
        """The newest preference per (annotator, unordered pair of runs)."""
        if not self.ready:
            return []
        rows = self.fetch(
            f"""SELECT {", ".join(_PREF)} FROM preferences WHERE ? IS NULL OR annotator = ?
            QUALIFY row_number() OVER (PARTITION BY annotator, least(run_a, run_b),
                greatest(run_a, run_b) ORDER BY created_at DESC, id DESC) = 1
            ORDER BY question_id, run_a, run_b, annotator""",
            [annotator, annotator],
        )
        return [dict(zip(_PREF, r, strict=True)) for r in rows]

    def history(self) -> list[dict[str, Any]]:
        """Every preference ever saved, oldest first."""
        if not self.ready:
            return []
        rows = self.fetch(f"SELECT {', '.join(_PREF)} FROM preferences ORDER BY created_at", [])
        return [dict(zip(_PREF, r, strict=True)) for r in rows]

    def verdicts(self, judge: str) -> dict[tuple[str, str], dict[str, Any]]:
        """The newest cached verdict of `judge` per pair, keyed by the sorted run ids."""
        if not self.ready:
            return {}
        rows = self.fetch(
            f"""SELECT {", ".join(_VERDICT)} FROM pair_verdicts WHERE judge = ?
            QUALIFY row_number() OVER (PARTITION BY run_x, run_y
                ORDER BY created_at DESC, id DESC) = 1""",
            [judge],
        )
        out = [dict(zip(_VERDICT, r, strict=True)) for r in rows]
        return {(v["run_x"], v["run_y"]): v for v in out}

    def save_verdict(self, row: dict[str, Any]) -> dict[str, Any]:
        """Append one judge verdict (a dict with the `pair_verdicts` fields but id and time)."""
        row = row | {"id": uuid.uuid4().hex[:12], "created_at": datetime.now()}
        with self.transaction() as cur:
            insert_rows(cur, "pair_verdicts", _VERDICT, [[row[c] for c in _VERDICT]])
        return row
