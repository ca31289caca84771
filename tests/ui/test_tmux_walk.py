"""The explorer walk in a real terminal (slow, ~30-60 s): the installed `fintrade-tui` binary
in tmux at 160x48, as a new user would go — Universe -> NVDA -> quarters -> Questions (the
nearest quarter offered) -> Arena (a litellm `mock_response` model) -> score -> Results ->
export, then Escape back to the Company, where `o` asks the analyst's own question (the form,
the Arena on it, `r`), then Escape all the way back. Each key is sent alone, then the walk
waits until the screen (`tmux capture-pane -p`) shows what it did; the numbers read off the
screen are checked against the workspace afterwards. The screen is captured again only once
the binary has written something since the last capture (or a second has passed): a look is a
`stat`, not a tmux client.

The store is the session's `built_store` (through a symlink in the test's folder, so exports
land there too); the workspace is new, so the seed questions are imported first."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from datetime import date
from pathlib import Path

import pytest

from tests.conftest import BUNDLE, ROOT
from tests.ui.conftest import LIMIT, wait_for

BIN = ROOT / ".venv" / "bin" / "fintrade-tui"
TMUX = shutil.which("tmux") or "/usr/bin/tmux"
ANSWER = "NVIDIA walk-through answer: ROE as of the 10-Q."


def _ready() -> str | None:
    if not Path(TMUX).exists():
        return "tmux is not installed"
    if not BIN.exists():
        return f"{BIN} is not installed"
    if not (BUNDLE / "fintradebench").is_dir():
        return "sample bundle not at ../shared/data"
    return None


pytestmark = pytest.mark.skipif(_ready() is not None, reason=str(_ready()))


def _quarter(d: date) -> str:
    return f"Q{(d.month - 1) // 3 + 1} {d.year}"


def focused_row(dimension: str) -> str:
    """The score modal's focused dimension on a styled screen: its row is drawn bold."""
    return rf"\x1b\[1m(?:\x1b\[[0-9;]*m)*{dimension} "


class Term:
    """One tmux server of our own (-L): a session running the binary, keys and screens. Each
    key is sent alone and the walk waits for what it does before the next one: keys sent in a
    burst race the screen they are meant for."""

    def __init__(self, folder: Path, command: str) -> None:
        conf = folder / "tmux.conf"  # the size stays 160x48 whatever clients come and go;
        # the pane stays, dead, once its command has ended: its last words can still be read
        conf.write_text("set -g default-size 160x48\nset -g remain-on-exit on\n")
        self.base = [TMUX, "-L", f"walk-{os.getpid()}-{time.monotonic_ns()}", "-f", str(conf)]
        self.last = ""
        self._tmux("new-session", "-d", "-x", "160", "-y", "48", "-s", "walk", command)
        # every byte the binary writes, appended by tmux after it has drawn it on the pane: a
        # screen unchanged since a capture is one the file has not grown since
        self.output = folder / "pane.out"
        self.output.touch()
        self._tmux("pipe-pane", "-t", "walk", f"cat >> {shlex.quote(str(self.output))}")
        self._shot: dict[bool, tuple[int, float, str]] = {}  # styled -> (bytes, when, screen)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=LIMIT)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self, styled: bool = False) -> str:
        """What the pane shows; `styled` keeps the escape codes of its colours and bold. The
        last capture while the binary has written nothing since (a second at most)."""
        written, now = self.output.stat().st_size, time.monotonic()
        shot = self._shot.get(styled)
        if shot and shot[0] == written and now - shot[1] < 1.0:
            self.last = shot[2]
            return self.last
        self.last = self._tmux("capture-pane", "-p", *(["-e"] if styled else []), "-t", "walk")
        self._shot[styled] = (written, now, self.last)  # the size before: a later write recaptures
        return self.last

    def wait(self, pattern: str, timeout: float = LIMIT, styled: bool = False) -> re.Match[str]:
        """The first match of the regex on the screen, once it shows."""
        try:
            return wait_for(
                lambda: re.search(pattern, self.screen(styled), re.MULTILINE),
                what=f"{pattern!r} on the screen",
                timeout=timeout,
            )
        except AssertionError as missing:
            size = self._tmux("display", "-p", "-t", "walk", "#{window_width}x#{window_height}")
            raise AssertionError(f"{missing}; the {size.strip()} screen:\n{self.last}") from None

    def press(self, key: str, shows: str, timeout: float = LIMIT) -> re.Match[str]:
        """Send one key, then wait until the screen shows what it does."""
        self.keys(key)
        return self.wait(shows, timeout)

    def keys(self, key: str) -> None:
        self._tmux("send-keys", "-t", "walk", key)

    def footer(self) -> str:
        """The footer line (the one ending in the palette key), once it is drawn."""
        return self.wait(r"^.*\^p palette\s*$")[0]

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=LIMIT)


@pytest.fixture
def walk_config(tmp_path: Path, built_store) -> Path:
    store = built_store.store  # the session's store, built from the bundle (a fresh clone too)
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / store.name).symlink_to(store)
    path = tmp_path / "config.yaml"
    path.write_text(
        f"bundle: {BUNDLE}\n"
        f"store: {tmp_path / 'store' / store.name}\n"
        f"workspace: {tmp_path / 'workspace.duckdb'}\n"
        f"model_dir: {ROOT / 'data' / 'models'}\n"
        f"retrieval: {{index: {tmp_path / 'lancedb'}}}\n"
        "models:\n"
        f"  mock: {{model: openai/gpt-4o-mini, extra: {{mock_response: '{ANSWER}'}}}}\n"
        "runs: {default_model: mock, conditions: [no_rag, oracle]}\n"
        "judging: {model: mock}\n"
    )
    return path


def test_walk_through_the_explorer_in_tmux(walk_config: Path, tmp_path: Path, built_store) -> None:
    from fintrade_tui.store.company import quarters
    from fintrade_tui.store.db import connect

    with connect(built_store.store, read_only=True) as con:
        keys = [q["key"] for q in quarters(con, "NVDA")]
        ends = [q["period_end"] for q in quarters(con, "NVDA")]
    # bare `fintrade-tui`: the explorer, not the help
    # COLUMNS / LINES inherited from the test process would pin the app to their size
    run = f"env -u COLUMNS -u LINES {BIN} --config {walk_config}"
    term = Term(tmp_path, f"cd {tmp_path} && {run}; echo EXITED $?")
    try:
        # -- Universe (after the seed questions are imported: a new workspace)
        total = term.wait(r"(\d+) of \1 tickers · Enter opens", timeout=2 * LIMIT)[1]
        assert int(total) > 100
        term.wait(r"fintrade-tui — Universe")
        for typed in ("N", "NV", "NVD", "NVDA"):  # the first key moves to the filter
            term.press(typed[-1], rf"of \d+ tickers matching {re.escape(repr(typed))}")
        term.wait(r"^ NVDA +NVIDIA Corporation")

        # -- Company: opens on the latest quarter with questions, and says so
        head = term.press(
            "Enter",
            r"NVDA · (FY\d{4} Q\d) \((Q\d \d{4})\): the latest quarter with questions \((\d+)\)",
        )
        key, calendar, n_there = head[1], head[2], int(head[3])
        i = keys.index(key)
        assert _quarter(ends[i]) == calendar and i < len(keys) - 1
        term.wait(r"End: latest data")
        term.wait(rf"◀ {key} · period end {ends[i]}.*q questions: {n_there} in {calendar}\)")
        term.wait(r"NVIDIA Corporation · Technology / Semiconductors")
        assert "esc Back" in term.footer()
        term.press("Left", rf"◀ {keys[i - 1]} · period end {ends[i - 1]}")
        term.press("Right", rf"◀ {key} · period end")
        # the latest quarter: no question is dated in it
        term.press("End", rf"◀ {keys[-1]} · period end {ends[-1]}.*\(←/→ quarters, q questions\)")

        # -- Questions: nothing in that quarter, the nearest one offered
        term.press(
            "q",
            rf"No question in {_quarter(ends[-1])} for NVDA; nearest with questions: "
            rf"{calendar} \({n_there}\) — press n to show it",
        )
        term.wait(r"Ticker NVDA .*Quarter " + _quarter(ends[-1]))
        term.wait(r"\b0 of (\d+)")
        term.wait(r"^.* n Nearest .*esc Back .*\^p palette\s*$")
        counted = term.press("n", rf"Quarter {calendar} .*\b({n_there}) of (\d+)")
        bank = int(counted[2])
        term.wait(r"\A(?![\s\S]*press n to show it)")  # the offer gone from the screen
        term.wait(r"^(?!.* n Nearest ).*esc Back .*\^p palette\s*$")  # nothing left to apply
        first = term.wait(r"^ (\S+) +(F|T|FT) +\S.* (\d{4}-\d\d-\d\d) +resolved")
        qid, as_of = first[1], date.fromisoformat(first[3])
        assert _quarter(as_of) == calendar

        # -- Arena: the highlighted question, two conditions, mocked answers
        term.press("Enter", rf"^ {re.escape(qid)} · \S+ · as of {as_of} · .*NVDA")
        term.wait(r"│ No-RAG .*│ Oracle ")
        assert "esc Back" in term.footer()
        term.press("r", r"completed · .*completed · ")
        # the status line can be drawn a frame before the answer's last words: Textual's
        # MarkdownStream.stop() returns while its last append may still be mounting
        answered = re.escape(ANSWER) + r"[\s\S]*" + re.escape(ANSWER)
        term.wait(answered)
        assert term.last.count(ANSWER) == 2

        # -- score the No-RAG pane: 4, 5, 4, 3; the Oracle pane's modal opens next, cancelled
        term.press("s", r"Score No-RAG")
        for n, dim in ((4, "accuracy"), (5, "completeness"), (4, "relevance"), (3, "clarity")):
            term.wait(focused_row(dim), styled=True)  # the row the key scores
            term.press(str(n), rf"{dim} +{'■' * n}{'□' * (5 - n)}  {n}")
            if dim != "clarity":
                term.keys("Down")
        term.press("Enter", r"Score Oracle")
        term.press("Escape", r"saved score v1 for No-RAG")

        # -- Results: the human score shows (accuracy 4 of 5 = 80 %), then the case export
        term.press("F4", r"Accuracy % \(LLM-judge scores\)")
        assert "esc Back" in term.footer()
        term.press("s", r"Accuracy % \(human scores\)")
        term.wait(r"^ mock +No-RAG .*\b80\.0 +1\b")
        term.wait(rf"unrated +{re.escape(qid)} +\S+ +mock +Oracle")
        # HTML with the explorer's own screenshots, and Markdown
        term.press("x", r"Case study written \(HTML, Markdown\)")
        exported = list((tmp_path / "store" / "exports").glob(f"case-{qid}-*.md"))
        assert len(exported) == 1 and ANSWER in exported[0].read_text(encoding="utf-8")
        page = exported[0].with_suffix(".html").read_text(encoding="utf-8")
        assert 'data-screen="Arena"' in page

        # -- Escape all the way back: each screen as it was left. A screen is drawn over more
        # than one capture: what it must show is waited for, never read off the last capture
        term.press("Escape", r"saved score v1 for No-RAG")
        assert term.wait(answered) and term.last.count(ANSWER) == 2
        term.press("Escape", rf"Quarter {calendar} .*\b{n_there} of {bank}")
        term.press("Escape", rf"◀ {keys[-1]} · period end {ends[-1]}")

        # -- the analyst's own question about this quarter: the form, the Arena on it, `r`
        term.press("o", r"Your own question, point in time")
        term.wait(r"tickers +NVDA")
        filed = term.wait(r"as-of +(\d{4}-\d\d-\d\d)")[1]
        term.keys("Is NVIDIA's ROE high?")  # typed into the text field, which has the focus
        term.wait(r"indicators +ROE\b")  # suggested from the text
        term.press("C-s", rf"^ OWN-1 · \S+ · as of {filed} · .*NVDA")
        term.wait(r"│ No-RAG .*│ Oracle ")
        term.press("r", r"completed · .*completed · ")
        term.wait(answered)
        term.press("Escape", rf"◀ {keys[-1]} · period end {ends[-1]}")  # the form is gone
        term.press("Escape", r"of \d+ tickers matching 'NVDA'")
        term.wait(r"^ NVDA +NVIDIA Corporation")
        term.press("C-q", r"EXITED 0")
    finally:
        term.close()

    # what the screens said, checked against the workspace the walk left
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import load_questions

    with open_workspace(tmp_path / "workspace.duckdb") as ws:
        bank_now = load_questions(ws)
    own = [q for q in bank_now if q.source == "own"]
    assert [(q.id, q.tickers, q.as_of.isoformat(), q.golden) for q in own] == [
        ("OWN-1", ["NVDA"], filed, ["roe"])
    ]
    nvda = [q for q in bank_now if "NVDA" in q.tickers and q.as_of and q.source != "own"]
    assert len(bank_now) == bank + 1
    assert sum(_quarter(q.as_of) == calendar for q in nvda) == n_there
    assert not any(_quarter(q.as_of) == _quarter(ends[-1]) for q in nvda)
    # ... and it was the latest quarter with questions: none in any later one
    assert all(not any(_quarter(q.as_of) == _quarter(e) for q in nvda) for e in ends[i + 1 :])
