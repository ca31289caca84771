"""What the annotator-agreement tests share (tests/unit/test_annotators.py and the Results
screen's tests/ui/test_results_agreement.py): `second_annotator_scores`, a second annotator
`bo` scoring the runs that `ana` scored in populate() (tests/unit/test_failures_export.py)."""

from __future__ import annotations

import duckdb

from fintrade_tui.workspace.scores import Score, ScoreStore


def second_annotator_scores(ws: duckdb.DuckDBPyConnection) -> None:
    """`bo` scores the runs `ana` scored in populate()."""
    store = ScoreStore(ws)
    for rid, (a, c, r, cl) in {
        "r01": (4, 3, 4, 4),
        "r02": (2, 3, 5, 4),
        "r07": (3, 1, 4, 2),
        "r08": (5, 4, 4, 4),
    }.items():
        store.save(Score(rid, "human", "bo", accuracy=a, completeness=c, relevance=r, clarity=cl))
