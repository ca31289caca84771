"""Blind pairwise preference in the Arena. `PreferScreen` is a modal showing two completed
answers side by side as "A" and "B" — which run goes left is drawn from a fresh, recorded seed,
and no condition or model name is shown — then a / b / t choose, n writes a note, o picks the
other pane, Enter saves an appended `Preference` (normalised back to the runs) and returns the
stored row. `open_prefer` is what the Arena's `p` does: the focused pane and the next one."""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Markdown, Static

from fintrade_tui.safe_text import printable
from fintrade_tui.workspace.preferences import Preference, PreferenceStore, shown_pair

if TYPE_CHECKING:
    from .arena import ArenaScreen

CHOICE_TEXT = {"A": "A is better", "B": "B is better", "tie": "tie"}


def side_seed() -> str:
    """A fresh seed per entry: the annotator cannot learn which side a condition lands on."""
    return secrets.token_hex(8)


class PreferScreen(ModalScreen[dict[str, Any] | None]):
    """Choose between two answers shown as A and B; dismisses with the saved row or None."""

    DEFAULT_CSS = """
    PreferScreen { align: center middle; }
    PreferScreen > Vertical {
        width: 96%; height: 90%; border: thick $accent; background: $surface; padding: 0 1;
    }
    PreferScreen .prefer-title { text-style: bold; padding: 0 1; }
    PreferScreen #prefer-answers { height: 1fr; }
    PreferScreen .prefer-side { width: 1fr; border: round $panel; }
    PreferScreen .prefer-side-title { text-style: bold; }
    PreferScreen .prefer-choice, PreferScreen .prefer-help { padding: 0 1; height: auto; }
    PreferScreen .prefer-help { color: $text-muted; }
    PreferScreen .prefer-error { color: $error; padding: 0 1; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "choose('A')", "A better", id="prefer.a"),
        Binding("b", "choose('B')", "B better", id="prefer.b"),
        Binding("t", "choose('tie')", "Tie", id="prefer.tie"),
        Binding("o", "other", "Other pane", id="prefer.other"),
        Binding("n", "note", "Note", id="prefer.note"),
        Binding("enter", "save", "Save", id="prefer.save"),
        Binding("escape", "cancel", "Cancel", id="prefer.cancel"),
    ]

    def __init__(
        self,
        con: Any,
        first: tuple[str, str, str],
        others: list[tuple[str, str, str]],
        annotator: str = "analyst",
    ) -> None:
        """`first` and `others`: (run id, where the pane is, answer text); the first of
        `others` is the default other pane. `con`: the workspace connection."""
        super().__init__()
        self.con = con
        self.first = first
        self.others = others
        self.other = 0
        self.annotator = annotator
        self.choice: str | None = None
        self.seed = side_seed()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Which answer is better? (blind)"), classes="prefer-title")
            with Horizontal(id="prefer-answers"):
                for side in "AB":
                    with VerticalScroll(classes="prefer-side", id=f"prefer-{side}"):
                        yield Static(Text(side), classes="prefer-side-title")
                        yield Markdown()
            yield Static(classes="prefer-choice")
            yield Input(placeholder="note (n); Enter saves")
            yield Static(
                "a A better · b B better · t tie · o other pane · n note · Enter save · Esc cancel",
                classes="prefer-help",
            )
            yield Static(classes="prefer-error")

    def on_mount(self) -> None:
        self._show()

    def shown(self) -> tuple[str, str]:
        """(run id shown as A, run id shown as B)."""
        return shown_pair(self.first[0], self.others[self.other][0], self.seed)

    def _show(self) -> None:
        texts = {
            self.first[0]: self.first[2],
            self.others[self.other][0]: self.others[self.other][2],
        }
        for side, rid in zip("AB", self.shown(), strict=True):
            self.query_one(f"#prefer-{side} Markdown", Markdown).update(
                printable(texts[rid] or "(empty)")
            )
        self._show_choice()

    def _show_choice(self) -> None:
        where = f"{self.first[1]} and {self.others[self.other][1]}"
        more = " (o picks another)" if len(self.others) > 1 else ""
        chosen = CHOICE_TEXT.get(self.choice or "", "— (a / b / t)")
        self.query_one(".prefer-choice", Static).update(Text(f"{where}{more}: {chosen}"))

    def _error(self, text: str) -> None:
        self.query_one(".prefer-error", Static).update(Text(text))

    def action_choose(self, which: str) -> None:
        self.choice = which
        self._error("")
        self._show_choice()

    def action_other(self) -> None:
        if len(self.others) > 1:
            self.other = (self.other + 1) % len(self.others)
            self.seed = side_seed()  # a new pair: a new draw of the sides
            self.choice = None
            self._show()

    def action_note(self) -> None:
        self.query_one(Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_save(self) -> None:
        if self.choice is None:
            self._error("choose first: a, b or t")
            return
        pref = Preference(
            self.first[0],
            self.others[self.other][0],
            self.choice,
            seed=self.seed,
            annotator=self.annotator,
            note=self.query_one(Input).value.strip() or None,
            blind=True,
            source="arena",
        )
        self._error("saving…")
        self._save(pref)

    @work(exclusive=True, exit_on_error=False)
    async def _save(self, pref: Preference) -> None:
        try:
            row = await asyncio.to_thread(lambda: PreferenceStore(self.con).save(pref))
        except Exception as exc:  # shown in place; the modal stays open
            self._error(str(exc).splitlines()[0][:200])
            return
        self.dismiss(row)


def open_prefer(arena: ArenaScreen) -> None:
    """The Arena's `p`: the focused completed pane against the next completed one."""
    panes = arena.panes()
    done = [p for p in panes if p.run_id and p.finished and p.status == "completed"]
    if len(done) < 2:
        arena.say("a preference needs two completed answers", error=True)
        return
    current = arena.state.current
    first = current if current in done and current is not None else done[0]
    i = panes.index(first)
    around = [p for p in panes[i + 1 :] + panes[:i] if p in done]  # the next pane first
    where = {p.run_id: f"pane {panes.index(p) + 1}" for p in done}  # no condition names

    def item(p: Any) -> tuple[str, str, str]:
        return (p.run_id, where[p.run_id], p.markdown.source)

    # where the pane is and the Arena's own label (letters while blind): no more than it shows
    labels = {p.run_id: f"{where[p.run_id]} ({p.label})" for p in done}

    def saved(row: dict[str, Any] | None) -> None:
        if row is None:
            return
        a, b = labels[row["run_a"]], labels[row["run_b"]]
        if row["winner"] == "tie":
            what = f"tie between {a} and {b}"
        else:
            loser = row["run_b"] if row["winner"] == row["run_a"] else row["run_a"]
            what = f"{labels[row['winner']]} preferred over {labels[loser]}"
        arena.say(f"saved preference {row['id']}: {row['shown']} chosen — {what}")

    screen = PreferScreen(
        arena.fintrade.workspace_connection(),
        item(first),
        [item(p) for p in around],
        annotator=arena.state.annotator,
    )
    arena.app.push_screen(screen, callback=saved)
