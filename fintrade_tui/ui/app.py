"""The Textual app: configuration, the shared workspace and store handles, global key bindings
(with ids, remappable from config.yaml `ui.keymap`), the command palette and the status bar.
Screens are pushed by name; every screen keeps its work in workers. Escape (`app.back`) pops
back to the screen the user came from, which kept its filters, cursor and selection; screens
that bind Escape themselves (a filter to clear, a modal to cancel) come first."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from functools import partial
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Header

from fintrade_tui.config import Config
from fintrade_tui.ui.workspace_refresh import WorkspaceRefresh


class FinTradeApp(WorkspaceRefresh, App):
    """fintrade-tui: Universe -> Company -> Questions -> Arena -> Results."""

    TITLE = "fintrade-tui"
    watch_workspace = True
    CSS = """
    Screen { background: $surface; }
    .error { color: $error; }
    .muted { color: $text-muted; }
    #app-status { dock: bottom; height: 1; background: $panel; color: $text-muted; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # first of the app's keys: the footer lists them after the screen's, and cuts the end
        Binding("escape", "back", "Back", id="app.back"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "show_keys", "Keys", id="app.keys"),
        Binding("f1", "goto('universe')", "Universe", id="app.universe"),
        Binding("f2", "goto('questions')", "Questions", id="app.questions"),
        Binding("f3", "goto('arena')", "Arena", id="app.arena"),
        Binding("f4", "goto('results')", "Results", id="app.results"),
    ]

    def __init__(
        self,
        cfg: Config,
        model: str | None = None,
        start: str = "universe",
        index_in_background: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        from fintrade_tui.workspace.sharing import set_wait

        self.cfg = cfg
        set_wait(cfg.workspace_wait)
        self.model = model or cfg.runs.default_model
        self.start = start
        self.index_in_background = index_in_background
        self._index_timer: Any = None
        self._store: Any = None
        self._workspace: Any = None
        self._lock = threading.Lock()
        self._back_warned = 0.0  # when Escape last warned that leaving cancels streaming panes
        if cfg.ui.keymap:
            self.set_keymap(cfg.ui.keymap)

    # -- shared connections: one per app; threads take a cursor of their own --
    def store(self) -> Any:
        """A cursor on the read-only market-data store (safe to use from a worker thread)."""
        with self._lock:
            if self._store is None:
                from fintrade_tui.store.db import connect

                self._store = connect(self.cfg.store, read_only=True)
            return self._store.cursor()

    def workspace(self) -> Any:
        """A cursor on the workspace (questions, runs, scores), opened read-write once."""
        with self._lock:
            if self._workspace is None:
                from fintrade_tui.workspace.connection import open_workspace

                self._workspace = open_workspace(self.cfg.workspace)
            return self._workspace.cursor()

    def workspace_connection(self) -> Any:
        """The workspace connection itself, for RunStore / ScoreStore (they lock and cursor)."""
        self.workspace().close()
        return self._workspace

    def notify_error(self, where: str, exc: BaseException) -> None:
        """Errors are shown in place (a toast); the app stays alive."""
        from fintrade_tui.errors import UserError

        text = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
        self.notify(text.splitlines()[0][:300], title=where, severity="error", timeout=8)

    def on_ready(self) -> None:
        if self.watch_workspace:  # runs and scores other processes write show up here
            self.set_timer(0.5, self.start_watching)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Footer()

    def on_mount(self) -> None:
        self.action_goto(self.start)
        if self.index_in_background:
            # after the first screen has drawn: the indexer's model load would delay it
            self.set_timer(2.0, self._index_filing_companies)

    @work(thread=True, group="index-bg", exit_on_error=False)
    def _index_filing_companies(self) -> None:
        from fintrade_tui.retrieval.indexing import filing_companies

        with self.store() as cur:
            tickers = filing_companies(cur)
        self.call_from_thread(self.follow_indexing, tickers)

    def follow_indexing(self, tickers: list[str] | None = None) -> None:
        """Show the background indexer's progress in the title bar (queueing `tickers`)."""
        from fintrade_tui.retrieval.indexing import background

        if tickers:
            background(self.cfg).add(tickers)
        if self._index_timer is None:
            self._index_timer = self.set_interval(1.0, self._show_indexing)

    def _show_indexing(self) -> None:
        from fintrade_tui.retrieval.indexing import background

        status = background(self.cfg).status
        line = status.line()
        self.title = f"{self.TITLE} · {line}" if line and status.running else self.TITLE
        if not status.running and self._index_timer is not None:
            self._index_timer.stop()
            self._index_timer = None
            if status.error:
                self.notify(line, title="RAG index", severity="error", timeout=10)
            elif status.total:
                self.notify(line, title="RAG index", timeout=6)

    def action_goto(self, name: str, **kwargs: Any) -> None:
        """Open a screen by name (a fresh instance; arguments go to its constructor)."""
        from fintrade_tui.ui.registry import make_screen

        self.push_screen(make_screen(name, **kwargs))

    def can_go_back(self) -> bool:
        """A screen below the current one (the first screen sits on Textual's default one)."""
        return len(self.screen_stack) > 2 and not self.screen.is_modal

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back":  # hidden on the first screen: there is nowhere to go back to
            return self.can_go_back()
        return True

    # sync where Textual's is async (its actions may be either): screens call it directly
    def action_back(self) -> None:  # type: ignore[override]
        """Back to the previous screen. Leaving panes that still stream cancels them, so the
        first Escape only says so; a second one within 3 s leaves."""
        if not self.can_go_back():
            return
        panes = getattr(self.screen, "panes", None)
        streaming = [p for p in panes() if getattr(p, "streaming", False)] if panes else []
        now = time.monotonic()
        if streaming and now - self._back_warned > 3.0:
            self._back_warned = now
            self.notify(
                f"{len(streaming)} answer(s) still streaming: Escape again leaves and cancels them",
                title="Back",
                severity="warning",
                timeout=3,
            )
            return
        self._back_warned = 0.0
        self.pop_screen()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): Textual's own commands, then every key of the screen
        and the app that has a description, hidden ones too, named as in `?` with their key."""
        yield from super().get_system_commands(screen)
        seen: set[tuple[int, str]] = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            if binding.system or not binding.description:
                continue
            if (id(active.node), binding.action) in seen:
                continue
            seen.add((id(active.node), binding.action))
            yield SystemCommand(
                binding.description,
                f"key {self.get_key_display(binding)}"
                + ("" if active.enabled else " (unavailable)"),
                partial(self.run_action, binding.action, active.node),
            )

    def action_show_keys(self) -> None:
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()
