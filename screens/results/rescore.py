"""Results screen's re-scoring room (`m`): the answer matcher and the numeric audit applied again
to the completed runs of the question set in view (all sets, or the one `g` picked), in a worker
thread with a progress bar, without calling any model (judging/rescore.py); the new `match`
scores append, and the screen then shows the matcher's matrix and reloads its tables. Plain
functions over the state and the screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.screen import Screen
from textual.widgets import ProgressBar

from .state import RescoreRead, ResultsState

if TYPE_CHECKING:
    from fintrade_tui.ui.app import FinTradeApp

RESCORE_CSS = """
ResultsScreen #rescore-progress { display: none; width: 44; height: 1; margin-left: 2; }
ResultsScreen .rescoring #rescore-progress { display: block; }
"""


def rescore_summary_line(summary: dict[str, Any], source: str | None) -> str:
    """The toast after a re-scoring: how many runs, the share correct, the audit's finding."""
    which = f"{source} runs" if source else "runs"
    acc = "—" if summary["accuracy"] is None else f"{100 * summary['accuracy']:.1f}%"
    unscored = summary["no_reference"]
    left = summary["runs"] - summary["scored"] - unscored  # deferred: no label from the rules
    return (
        f"{summary['runs']} {which} re-scored in {summary['seconds']:.1f} s: {acc} correct by"
        f" the answer matcher ({summary['scored']} with a verdict"
        + (f", {unscored} without a reference" if unscored else "")
        + (f", {left} left to the judge or a person" if left else "")
        + f"); audit: {summary['contradicted']} with a contradicted figure"
    )


def start(screen: Screen[Any]) -> bool:
    """Show the progress bar; False (with a warning) while a re-scoring is under way."""
    if screen.query_one("#r-bar").has_class("rescoring"):
        screen.notify("Re-scoring is under way", severity="warning")
        return False
    bar = screen.query_one("#rescore-progress", ProgressBar)
    bar.update(total=None, progress=0)
    screen.query_one("#r-bar").add_class("rescoring")
    return True


def rescore_runs(
    state: ResultsState, app: FinTradeApp, bar: ProgressBar, source: str | None
) -> RescoreRead:
    """In a worker thread: re-score the runs of `source`, advancing `bar` from the UI thread."""
    from fintrade_tui.judging.rescore import rescore, select_runs

    with state.db:
        cur = app.workspace()
        store = app.store() if app.cfg.store.exists() else None
        try:
            sel = select_runs(cur, source=source)
            app.call_from_thread(bar.update, total=len(sel.runs))
            out = rescore(
                app.cfg,
                cur,
                sel,
                store_con=store,
                on_progress=lambda n: app.call_from_thread(bar.advance, n),
            )
        finally:
            cur.close()
            if store is not None:
                store.close()
    return RescoreRead(out.summary(), source)


def rescored(screen: Screen[Any], state: ResultsState, read: RescoreRead) -> None:
    """The toast, and the matcher's scores to show next (the screen then reloads)."""
    ended(screen)
    screen.notify(rescore_summary_line(read.summary, read.source), title="Re-scored", timeout=10)
    state.kind = "match"  # show what was just computed


def ended(screen: Screen[Any]) -> None:
    screen.query_one("#r-bar").remove_class("rescoring")
