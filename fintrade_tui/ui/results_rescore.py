"""Results screen's re-scoring (`m`): the answer matcher and the numeric audit applied again to
the completed runs of the question set in view (all sets, or the one `g` picked), in a worker
thread with a progress bar, without calling any model (judging/rescore.py); the new `match`
scores append, and the screen then shows the matcher's matrix and reloads its tables."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.widgets import ProgressBar, Static

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


class RescoreView:
    """The ResultsScreen's `m` key: action, worker and what follows (mixed into the screen,
    which has the widgets, `_kinds()`, `_title()` and `action_reload()`)."""

    kind: str  # the score kind the matrix shows
    source: str | None  # the question set in view (None: all)
    _db: Any  # the screen's one-query-at-a-time lock

    def action_rescore(self) -> None:
        if self.query_one("#r-bar").has_class("rescoring"):
            self.notify("Re-scoring is under way", severity="warning")
            return
        bar = self.query_one("#rescore-progress", ProgressBar)
        bar.update(total=None, progress=0)
        self.query_one("#r-bar").add_class("rescoring")
        self.rescore_view(self.source)

    @work(thread=True, exclusive=True, group="rescore", exit_on_error=False)
    def rescore_view(self, source: str | None) -> tuple[dict[str, Any], str | None]:
        from fintrade_tui.judging.rescore import rescore, select_runs

        app: Any = self.app
        bar = self.query_one("#rescore-progress", ProgressBar)
        with self._db:
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
        return out.summary(), source

    def _rescore_view(self, result: tuple[dict[str, Any], str | None]) -> None:
        summary, source = result
        self.rescore_ended()
        line = rescore_summary_line(summary, source)
        self.notify(line, title="Re-scored", timeout=10)
        self.kind = "match"  # show what was just computed
        self.query_one("#scores-kind", Static).update(self._kinds())
        self.query_one("#accuracy-title", Static).update(self._title())
        self.action_reload()

    def rescore_ended(self) -> None:
        self.query_one("#r-bar").remove_class("rescoring")
