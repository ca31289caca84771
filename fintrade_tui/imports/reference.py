"""Reference-run room: a benchmark's own golden answer stored as a run (model `reference`,
condition `reference`), so every seed has one real, strong answer beside the models' in the
Arena, the judge and the reports. FinTradeBench's seed CSV `response` is expert-reviewed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fintrade_tui.imports.load import FileReport, Planner, write
from fintrade_tui.imports.record import ExternalRun
from fintrade_tui.workspace.questions import Question

if TYPE_CHECKING:
    from fintrade_tui.workspace.connection_api import Connection

REFERENCE = "reference"
WITH_REFERENCE = ("fintradebench",)  # sources whose reference answers are expert answers


def reference_runs(questions: list[Question]) -> list[ExternalRun]:
    return [
        ExternalRun(
            question_id=q.id,
            model=REFERENCE,
            answer=q.reference_answer,
            locator=f"question {q.id}",
            question=q.text,
            condition_label=REFERENCE,
            benchmark=q.source,
            extra={"what": f"the {q.source} reference answer (expert-reviewed)"},
        )
        for q in questions
        if q.source in WITH_REFERENCE and q.reference_answer
    ]


def save_questions_with_references(
    ws: Connection, questions: list[Question], path: Path
) -> FileReport | None:
    """Questions and their reference runs in one transaction (runs already stored are kept)."""
    planner = Planner(ws)
    planner.add_questions(questions)
    runs = reference_runs(questions)
    rep = planner.add_file(path, "fintradebench", iter(runs)) if runs else None
    write(ws, planner.plan)
    return rep
