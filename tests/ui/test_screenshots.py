"""Headless screenshots (fintrade_tui/ui/screenshots.py, `fintrade-tui screenshot`): the SVG of
Universe, Company and an Arena replay holds what those screens show on the hand-populated
workspace (tests/unit/test_failures_export.py); `shoot` works from a worker thread of a running
explorer on that explorer's connections, and on a thread whose loop is running; the command
writes the file and bad options are one line."""

from __future__ import annotations

import html
import re
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from fintrade_tui.cli import main
from fintrade_tui.cli.screenshot import default_path, parse_size
from fintrade_tui.config import Config
from fintrade_tui.errors import UserError
from fintrade_tui.store.db import connect
from fintrade_tui.ui.app import FinTradeApp
from fintrade_tui.ui.screenshots import shoot
from tests.conftest import BUNDLE, write_config
from tests.ui.conftest import settle
from tests.ui.results_app import SIZE, results_ui_cfg  # noqa: F401 (the fixture ui_cfg)
from tests.unit.test_failures_export import RUNS

_TEXT = re.compile(r'<text [^>]*x="([\d.]+)"[^>]*line-(\d+)\)">([^<]*)</text>')


def screen_lines(svg: str) -> list[str]:
    """The terminal's rows as text: each SVG <text> placed at its column on its line."""
    found = [(float(x), int(n), html.unescape(t)) for x, n, t in _TEXT.findall(svg)]
    assert found, "no text in the SVG"
    # one cell, in px: the median over the text runs, counted in cells (a wide glyph such as
    # the title bar's status icon is two: with the widest ratio every column came out halved)
    runs = [(float(m), cell_len(html.unescape(t))) for m, t in _widths(svg)]
    width = statistics.median(m / n for m, n in runs if n)
    rows: dict[int, list[str]] = {}
    for x, n, text in found:
        row = rows.setdefault(n, [])
        col = round(x / width)
        row.extend(" " * (col + len(text) - len(row)))
        row[col : col + len(text)] = text
    return ["".join(rows[n]).replace("\xa0", " ").rstrip("\n") for n in sorted(rows)]


def _widths(svg: str) -> list[tuple[str, str]]:
    return re.findall(r'<text [^>]*textLength="([\d.]+)"[^>]*>([^<]+)</text>', svg)


def line_with(lines: list[str], *parts: str) -> str:
    """The first row holding every one of `parts`."""
    hits = [ln for ln in lines if all(p in ln for p in parts)]
    screen = "\n".join(ln.rstrip() for ln in lines)
    assert hits, f"no row shows {parts!r}; the screen:\n{screen}"
    return hits[0]


def test_universe_lists_the_store_tickers(ui_cfg: Config) -> None:  # noqa: F811
    with connect(ui_cfg.store) as con:
        (n,) = con.execute("SELECT count(DISTINCT ticker) FROM prices").fetchone()
    lines = screen_lines(shoot(ui_cfg, "universe"))
    assert line_with(lines, f"{n} of {n} tickers")
    assert line_with(lines, "AAPL", "Apple Inc.", "Technology")
    assert line_with(lines, "fintrade-tui", "Universe")  # the header: the screen, not a blank


def test_company_shows_the_quarter_ratios(ui_cfg: Config) -> None:  # noqa: F811
    svg = shoot(ui_cfg, "company", ticker="aapl", quarter="FY2024 Q4", size=(160, 48))
    lines = screen_lines(svg)
    assert line_with(lines, "PIT as of 2024-11-01: filings up to 10-K filed 2024-11-01")
    # DESIGN.md: Apple's FY2024 10-K gives Debt/Equity 1.8723 and Debt/Assets 0.2922
    assert line_with(lines, "Debt/Equity", "1.8723", "0000320193-24-000123")
    assert line_with(lines, "Debt/Assets", "0.2922")
    assert line_with(lines, "AAPL adj. close")  # a chart's title: the charts drew
    latest = screen_lines(shoot(ui_cfg, "company", ticker="AAPL", quarter="latest"))
    assert not any("FY2024 Q4" in ln for ln in latest)  # the latest quarter is later


def test_own_question_form_opens_prefilled_from_the_company_screen(ui_cfg: Config) -> None:  # noqa: F811
    """`make screenshots` draws the form `o` opens on Company: AAPL and the FY2024 10-K's
    filing day (the as-of the Company screen names) filled in, the text left to the analyst."""
    lines = screen_lines(shoot(ui_cfg, "own_question", ticker="AAPL", quarter="FY2024 Q4"))
    assert line_with(lines, "Own question")
    assert line_with(lines, "tickers", "AAPL")
    assert line_with(lines, "as-of", "2024-11-01")
    assert line_with(lines, "Save and open the Arena")


def test_arena_replays_the_stored_runs(ui_cfg: Config) -> None:  # noqa: F811
    ids = ["r01", "r02", "r08"]  # F1 by alpha: No-RAG, RAG, Oracle (see RUNS)
    lines = screen_lines(shoot(ui_cfg, "arena", run_ids=ids, size=(200, 44)))
    assert line_with(lines, "replay of 3 stored runs (read-only)")
    assert line_with(lines, "is Apple's return on equity high given its debt to equity?")
    answers = {rid: answer for rid, _, _, _, _, answer in RUNS}
    for rid in ids:
        assert line_with(lines, answers[rid])
    titles = line_with(lines, "│ No-RAG ", "│ RAG ", "│ Oracle ")
    assert titles.index("No-RAG") < titles.index("│ RAG ") < titles.index("Oracle")  # run order


def test_bad_screen_and_missing_ticker_are_user_errors(ui_cfg: Config) -> None:  # noqa: F811
    with pytest.raises(UserError, match="screen 'nope': is not a screen .*universe, company"):
        shoot(ui_cfg, "nope")
    with pytest.raises(UserError, match="company: needs a ticker"):
        shoot(ui_cfg, "company")
    with pytest.raises(UserError, match="--run r01: means nothing to universe"):
        shoot(ui_cfg, "universe", run_ids=["r01"])
    # an error the screen reports while loading fails the shot, with its line
    with pytest.raises(UserError, match="quarter 'FY1990 Q1'"):
        shoot(ui_cfg, "company", ticker="AAPL", quarter="FY1990 Q1")


def test_a_screen_error_raised_while_the_shot_waits_is_still_one_line(
    ui_cfg: Config,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a busy machine the screen's loading worker fails while the shot is waiting on it
    (a CI run once got textual's WorkerFailed here): the shot still fails with the screen's
    own line. The worker is held until something waits on it, then fails."""
    import threading

    import fintrade_tui.screens.company as company
    from textual.worker import Worker

    waited = threading.Event()
    wait, view = Worker.wait, company.quarter_view

    async def waiting(self: Worker, *a, **k):
        waited.set()
        return await wait(self, *a, **k)

    def held_view(*a, **k):
        assert waited.wait(120), "nothing waited on the screen's worker"
        return view(*a, **k)

    monkeypatch.setattr(Worker, "wait", waiting)
    monkeypatch.setattr(company, "quarter_view", held_view)
    with pytest.raises(UserError, match="quarter 'FY1990 Q1': has no data"):
        shoot(ui_cfg, "company", ticker="AAPL", quarter="FY1990 Q1")


async def test_shoot_from_a_worker_thread_of_a_running_explorer(ui_cfg: Config) -> None:  # noqa: F811
    """The explorer holds the workspace (read-write): the shot draws on its connections, from
    its worker thread, and leaves the explorer running and its context its own."""
    app = FinTradeApp(ui_cfg, start="universe")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.store().close()

        def work() -> str:
            return shoot(
                ui_cfg,
                "arena",
                run_ids=["r07", "r06"],
                store=app._store,
                workspace=app.workspace_connection(),
                title="replay",
            )

        svg = await app.run_worker(work, thread=True).wait()
        lines = screen_lines(svg)
        assert line_with(lines, "Momentum is positive.") and line_with(lines, "NVIDIA's momentum")
        assert re.search(r'-title"[^>]*>replay</text>', svg)  # the window title given
        with app.workspace() as cur:  # the explorer's connections are still open
            assert cur.execute("SELECT count(*) FROM runs").fetchone() == (len(RUNS),)
        assert type(app.screen).__name__ == "UniverseScreen"
        await pilot.press("slash", "A", "A", "P", "L")  # the explorer still answers keys
        await pilot.pause()
        assert app.screen.shown and all("AAPL" in r["ticker"] for r in app.screen.shown)
        # on this thread, whose loop is running: drawn on a helper thread
        lines = screen_lines(shoot(ui_cfg, "results", store=app._store, workspace=app._workspace))
        assert line_with(lines, "alpha", "No-RAG")


# -- the command ---------------------------------------------------------------------------


@pytest.fixture
def cli_config(built_store: Config, tmp_path: Path, populated_workspace: Path) -> Path:
    """A config file on the session store with a hand-populated workspace of its own."""
    extra = f"workspace: {populated_workspace}\n"
    return write_config(tmp_path, BUNDLE, built_store.store, extra)


def test_command_writes_the_svg(cli_config: Path, tmp_path: Path) -> None:
    out = tmp_path / "shots" / "company.svg"
    args = ["--config", str(cli_config), "screenshot", "company", "--ticker", "AAPL"]
    res = CliRunner().invoke(main, [*args, "--quarter", "FY2024 Q4", "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip().startswith("{") and f'"path": "{out}"' in res.stdout
    assert '"screen": "company"' in res.stdout
    assert line_with(screen_lines(out.read_text()), "Debt/Equity", "1.8723")
    assert [p.name for p in out.parent.iterdir()] == ["company.svg"]  # no temp file left


def test_command_default_path_and_plain_output(cli_config: Path, tmp_path: Path) -> None:
    from fintrade_tui.config import load_config

    cfg = load_config(cli_config)
    want = default_path(cfg.store, "arena", None)
    assert want == cfg.store.parent / "exports" / "screenshot-arena.svg"
    assert default_path(cfg.store, "company", "nvda").name == "screenshot-company-NVDA.svg"
    try:
        args = ["--config", str(cli_config), "screenshot", "arena", "--run", "r03"]
        res = CliRunner().invoke(main, [*args, "--run", "r04", "--size", "150x40"])
        assert res.exit_code == 0, res.output
        assert res.stdout.strip() == str(want)
        lines = screen_lines(want.read_text())
        assert line_with(lines, "The 14-day RSI was 51.2, not overbought.")
        assert len(lines) == 40
    finally:
        want.unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "error: screen 'nope': is not a screen (fix: use one of universe, company"),
        (["company"], "error: company: needs a ticker (fix: pass --ticker"),
        (["universe", "--size", "big"], "error: --size 'big': is not COLUMNSxROWS"),
        (["arena", "--run", "zz-none"], "error: run "),
    ],
)
def test_command_bad_input_is_one_line(cli_config: Path, args: list[str], message: str) -> None:
    res = CliRunner().invoke(main, ["--config", str(cli_config), "screenshot", *args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), res.stderr
    assert "Traceback" not in res.output


def test_parse_size() -> None:
    assert parse_size("140x44") == (140, 44) and parse_size(" 90 X 30 ") == (90, 30)
    for bad in ("140", "x44", "-1x5", "140x44x2"):
        with pytest.raises(UserError):
            parse_size(bad)


async def test_tables_measured_waits_for_each_table_to_size_its_rows() -> None:
    """A row added, then the wait: a table left to size its own columns (as the screens no
    longer do: ui/tables.py) has measured the new row and the screen has been painted, so the
    column is as wide as the new value, not the " V " it had before. The wait is Textual's
    `wait_for_refresh` alone: the Pilot's pause, which tables_measured ends with, waits for the
    CPU to go idle and so lets the tables measure anyway when the machine is idle."""
    from textual.app import App
    from textual.widgets import DataTable

    from fintrade_tui.ui.screenshots import tables_measured

    class One(App):
        def compose(self):
            yield DataTable()

    class WithoutPause:
        def __init__(self, app: App) -> None:
            self.app = app

        async def pause(self) -> None:
            pass

    app = One()
    async with app.run_test(size=(60, 8)) as pilot:
        table = app.query_one(DataTable)
        table.add_column("V", key="v")
        table.add_row("x")
        await pilot.pause()
        table.add_row("1.8723456")
        assert _header_run(app.export_screenshot(), "V") == " V "  # no Idle since the row
        await tables_measured(WithoutPause(app))
        assert len(_header_run(app.export_screenshot(), "V")) >= len(" 1.8723456 ")


def _header_run(svg: str, label: str) -> str:
    """The SVG text run of a DataTable's header cell `label`, with its padding."""
    runs = re.findall(r"<text[^>]*>(.*?)</text>", html.unescape(svg).replace("\xa0", " "), re.S)
    return next(r for r in runs if r.strip() == label)
