"""Results screen's state: the one object the screen creates (in `ResultsScreen.__init__`) and
hands to its parts: what the matrix shows (score kind, question set, disputed references in or
out), the tables last read, the failure cases and those the filters leave in view, which panes
are swapped in, and the lock that lets one workspace query run at a time. Also the shapes the
worker threads hand back to the UI thread. No widgets here."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple

Case = dict[str, Any]  # a failure case as reports/failures.py builds it (and causes annotate)
Row = dict[str, Any]  # a table row from the library (agreement, lanes, cost)


@dataclass
class ResultsState:
    """Everything the Results screen's parts share; the UI thread alone writes it."""

    kind: str = "llm"  # the score kind the matrix shows (s cycles; ui/results_text SCORE_KINDS)
    source: str | None = None  # one question set, or all of them (g cycles)
    sources: list[str] = field(default_factory=list)  # the sets with scores of this kind
    without_disputed: bool = False  # the matrix leaves disputed references out (z)
    table: dict[str, Any] | None = None  # the accuracy table last shown (report_table's)
    cases: list[Case] = field(default_factory=list)  # every failure case read
    shown: list[Case] = field(default_factory=list)  # those the filters and the cause leave
    cause: str | None = None  # show only the cases of this cause (y cycles)
    show_lanes: bool = False  # the lane tables in place of the matrix (l)
    show_inter: bool = False  # inter-annotator agreement in place of human–judge (a)
    show_cost: bool = False  # the cost table in place of the matrix ($)
    then_reload_rest: bool = False  # a workspace change: agreement and cases after the matrix
    stale: bool = False  # changed again while the matrix was being read
    # one query at a time: stores may create tables on first use
    db: threading.Lock = field(default_factory=threading.Lock)


class AccuracyRead(NamedTuple):
    """What the matrix's worker read, with the view it was read for."""

    kind: str
    source: str | None
    table: dict[str, Any] | None
    sources: list[str]  # the question sets with scores of this kind
    judges: list[Row]  # the LLM judges behind the scores (llm kind only)
    lanes: list[Row]  # the lane tables (rubric kinds only)
    leave: bool  # disputed references left out
    disputed: int  # how many questions have a disputed reference


class AgreementRead(NamedTuple):
    """The human–judge agreement rows and the inter-annotator rows."""

    pairs: list[Row]
    inter: list[Row]


class RescoreRead(NamedTuple):
    """A re-scoring's summary and the question set it covered."""

    summary: dict[str, Any]
    source: str | None
