"""Results screen's top room, on the UI thread: the score-kind bar, the accuracy matrix's title,
the matrix and the note under it (Δ vs No-RAG with significance marks, who judged, the disputed
references), the lane tables that `l` swaps in, and the agreement tables beside it (human–judge,
or inter-annotator with `a`). Plain functions over the state and the screen's widgets."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.screen import Screen
from textual.widgets import DataTable, Static

from fintrade_tui.safe_text import plain
from fintrade_tui.ui.lanes_view import LanesPane
from fintrade_tui.ui.results_text import (
    AGREEMENT_COLUMNS,
    AGREEMENT_HEADERS,
    ANNOTATOR_HEADERS,
    KIND_NAMES,
    SCORE_KINDS,
    accuracy_note,
    annotator_cells,
    fmt_number,
    matrix_headers,
)
from fintrade_tui.ui.tables import set_columns

from .cost import cost_title
from .state import AccuracyRead, AgreementRead, ResultsState

DEFAULT_COLUMNS = ["F", "T", "FT", "overall"]  # the matrix's columns before a table is read
AGREEMENT_TITLES = ("Human–judge agreement (a)", "Inter-annotator agreement (a)")


def title(state: ResultsState) -> str:
    """The title over the matrix (or the lanes, or the cost table in its place)."""
    which = f"{state.source} questions" if state.source else "all questions"
    if state.show_cost:
        return cost_title(which)
    if state.show_lanes:
        return f"Lanes ({KIND_NAMES[state.kind]} scores): Δ vs No-RAG · {which} (g, l)"
    return (
        f"Accuracy % ({KIND_NAMES[state.kind]} scores) by model × condition × category"
        f" · {which} (g)"
    )


def kinds_text(state: ResultsState) -> Text:
    """The bar of score kinds, the one shown in reverse."""
    text = Text("Scores: ")
    for k in SCORE_KINDS:
        text.append(f" {KIND_NAMES[k]} ", style="reverse bold" if k == state.kind else "dim")
    return text.append("  (s)", style="dim")


def show_title(screen: Screen[Any], state: ResultsState) -> None:
    screen.query_one("#accuracy-title", Static).update(title(state))


def show_kinds(screen: Screen[Any], state: ResultsState) -> None:
    """The score-kind bar and the title after the kind changed."""
    screen.query_one("#scores-kind", Static).update(kinds_text(state))
    show_title(screen, state)


def next_kind(state: ResultsState) -> None:
    state.kind = SCORE_KINDS[(SCORE_KINDS.index(state.kind) + 1) % len(SCORE_KINDS)]


def next_source(state: ResultsState) -> None:
    """All question sets, then each set with scores of this kind, one at a time."""
    options: list[str | None] = [None, *state.sources]
    at = options.index(state.source) if state.source in options else 0
    state.source = options[(at + 1) % len(options)]


def show_accuracy(screen: Screen[Any], state: ResultsState, read: AccuracyRead) -> None:
    """The matrix, the lanes and the note as read, unless the view moved on meanwhile."""
    from fintrade_tui.stats.tables import fmt_cell, shown_conditions
    from fintrade_tui.workspace.evidence import LABELS

    if (read.kind, read.source, read.leave) != (state.kind, state.source, state.without_disputed):
        return
    table, source = read.table, read.source
    state.table, state.sources = table, read.sources
    screen.query_one(LanesPane).set_tables(read.lanes, KIND_NAMES[read.kind])
    grid = screen.query_one("#accuracy", DataTable)
    note = screen.query_one("#accuracy-note", Static)
    who = KIND_NAMES[read.kind]
    columns = table["categories"] if table else DEFAULT_COLUMNS
    rows: dict[str, tuple[Any, ...]] = {}
    if table is not None:
        for model in table["models"]:
            for cond in shown_conditions(table, model):
                cells = table["cells"][model][cond]
                rows[f"{model}:{cond}"] = (  # names come from files: Text, never markup
                    plain(model),
                    plain(LABELS.get(cond, cond)),
                    *[fmt_cell(cells[c]) for c in columns],
                    str(cells["overall"]["n"]),
                )
    set_columns(grid, matrix_headers(columns), rows.values())
    if table is None:
        note.update(f"No {who} scores" + (f" on {source} questions." if source else " yet."))
        return
    for key, row in rows.items():
        grid.add_row(*row, key=key)
    text = accuracy_note(table, read.kind, read.judges)
    if disputed := read.disputed:
        how = "left out (z)" if read.leave else "in the matrix (z leaves them out)"
        text += f"\n{disputed} question{'s' * (disputed != 1)} with a disputed reference: {how}"
    note.update(text)


def show_agreement(screen: Screen[Any], read: AgreementRead) -> None:
    grid = screen.query_one("#agreement", DataTable)
    cells = [(r["dimension"], *[fmt_number(r[k]) for k in AGREEMENT_COLUMNS]) for r in read.pairs]
    set_columns(grid, AGREEMENT_HEADERS, cells)
    for row in cells:
        grid.add_row(*row)
    ann = screen.query_one("#annotators", DataTable)
    # annotator names come from files: Text, never markup
    named = [tuple(plain(c) for c in annotator_cells(r)) for r in read.inter]
    set_columns(ann, ANNOTATOR_HEADERS, named)
    for line in named:
        ann.add_row(*line)


def toggle_lanes(screen: Screen[Any], state: ResultsState) -> None:
    state.show_lanes = not state.show_lanes
    screen.query_one("#acc-pane").set_class(state.show_lanes, "lanes")
    show_title(screen, state)


def toggle_annotators(screen: Screen[Any], state: ResultsState) -> None:
    state.show_inter = not state.show_inter
    screen.query_one("#agr-pane").set_class(state.show_inter, "inter")
    screen.query_one("#agreement-title", Static).update(AGREEMENT_TITLES[state.show_inter])
