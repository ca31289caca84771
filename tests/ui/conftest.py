"""The UI tests' waiting room: a test waits for the state it then asserts, never for a time.

`until` polls a condition between rounds of the app's message queue; `settle` waits until no
worker runs and the screens have taken what the workers sent; `goto` opens a screen and waits
for it to mount and settle; `wait_for` is `until` for another
process's screen (the tmux walk), which has no message queue here to await. Each gives up, naming
what it waited for, only after a limit that a loaded machine never reaches: a hung test's.

`notices` records the notifications an app sends, however long the test takes to look.

`populated_workspace` is a copy of the hand-populated workspace (`populate()` of
tests/unit/test_failures_export.py), built once per process: each test gets its own file.

`f4_workspace` is FinTradeBench's seed F4 resolved against the built store, saved with the given
answers as completed runs to a fresh workspace, the judge a mock that gives the reply asked."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from textual.pilot import Pilot

from tests.clock import wait_until

if TYPE_CHECKING:
    from fintrade_tui.config import Config
    from fintrade_tui.workspace.questions import Question

T = TypeVar("T")

LIMIT = 60.0  # seconds: only a hung test waits this long, however busy the machine
LOOK_AGAIN = 0.05  # seconds between looks at another process's screen (wait_for only)


def notices(app: Any) -> list[str]:
    """Every notification the app sends from now on, as sent (a live list). Not the app's own
    list of those on show: each leaves it when its timeout passes, which a loaded machine can
    reach before the test looks."""
    sent: list[str] = []
    notify = app.notify

    def recording(message: Any, *args: Any, **kwargs: Any) -> None:
        sent.append(str(message))
        notify(message, *args, **kwargs)

    app.notify = recording
    return sent


async def until(
    pilot: Pilot[Any], condition: Callable[[], T], *, what: str, timeout: float = LIMIT
) -> T:
    """The condition's first truthy value, looked at after each round of the message queue;
    an AssertionError naming `what` when `timeout` seconds pass without one."""
    end = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > end:
            raise AssertionError(f"still waiting for {what} after {timeout:g} s")
        await pilot.pause()  # no delay: until the screen has handled its messages
    return value


async def settle(pilot: Pilot[Any], timeout: float = LIMIT) -> None:
    """No worker running, twice in a row with a message round between: a worker's result,
    handled in that round, may start another worker."""
    workers = pilot.app.workers

    def idle() -> bool:
        return all(w.is_finished for w in workers)

    end = time.monotonic() + timeout
    while True:
        await until(pilot, idle, what="every worker to finish", timeout=end - time.monotonic())
        await pilot.pause()
        if idle():
            return


async def goto(pilot: Pilot[Any], name: str, **kwargs: Any) -> Any:
    """Open a screen as a key would (`action_goto`), then wait for it: on top and mounted (its
    on_mount has started its first load), then `settle`d. Settling alone can come too soon: a
    screen pushed from outside the message loop mounts some rounds later, and until it has,
    no worker of its own is running to wait for."""
    app = pilot.app
    before = app.screen
    app.action_goto(name, **kwargs)

    def mounted() -> Any:
        return app.screen if app.screen is not before and app.screen.is_mounted else None

    screen = await until(pilot, mounted, what=f"the {name} screen to mount")
    await settle(pilot)
    return screen


async def shown(pilot: Pilot[Any], name: str, what: str) -> Any:
    """The app's screen once it is a `name` (its class name), opened by a key the test pressed:
    waited for as `until` waits."""
    app = pilot.app
    return await until(
        pilot, lambda: app.screen if type(app.screen).__name__ == name else None, what=what
    )


def wait_for(condition: Callable[[], T], *, what: str, timeout: float = LIMIT) -> T:
    """`until` for a condition on another process (nothing to await here): the condition's
    first truthy value, an AssertionError naming `what` after `timeout` seconds."""
    return wait_until(condition, timeout, LOOK_AGAIN, what)


@pytest.fixture(scope="session")
def populated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`populate()`'s workspace, written once per process (closed: the file is all of it)."""
    from fintrade_tui.workspace.connection import open_workspace
    from tests.unit.test_failures_export import populate

    path = tmp_path_factory.mktemp("populated") / "workspace.duckdb"
    with open_workspace(path) as con:
        populate(con)
    return path


@pytest.fixture
def populated_workspace(populated_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the populated workspace in the test's folder: the same file `populate()`
    writes, at the cost of a copy instead of 4 questions, 8 runs and 14 scores written anew."""
    path = tmp_path / "workspace.duckdb"
    shutil.copyfile(populated_template, path)
    return path


def f4_workspace(
    built_store: Config,
    workspace: Path,
    judge_reply: dict[str, Any],
    answers: list[tuple[str, str]],
) -> tuple[Config, Question, list[str]]:
    """A copy of `built_store`'s config writing to `workspace`, its judge a mock replying
    `judge_reply`; FinTradeBench's seed F4 resolved against the store and saved there, with one
    completed run of the local model per (condition, answer). (config, F4, the run ids)."""
    import json

    from fintrade_tui.application.readiness import SEEDS
    from fintrade_tui.config import ModelConfig
    from fintrade_tui.questions.importers import read_questions
    from fintrade_tui.questions.resolve import Resolver
    from fintrade_tui.store.db import connect
    from fintrade_tui.workspace.connection import open_workspace
    from fintrade_tui.workspace.questions import save_questions
    from fintrade_tui.workspace.run_records import RunStore

    cfg = built_store.model_copy(deep=True)
    cfg.workspace = workspace
    judge = ModelConfig(
        model="openai/gpt-4o-mini", extra={"mock_response": json.dumps(judge_reply)}
    )
    cfg.models = {**cfg.models, "judge": judge}
    cfg.judging = cfg.judging.model_copy(update={"model": "judge"})
    with connect(cfg.store) as con:
        r = Resolver(con, cfg.questions.reference_date, cfg.fundamentals.estimated_lag_days)
        f4 = next(q for q in read_questions(cfg.bundle / SEEDS, "fintradebench") if q.id == "F4")
        q = r.resolve(f4)
    with open_workspace(cfg.workspace) as ws:
        save_questions(ws, [q])
        runs = RunStore(ws)
        ids = []
        for condition, answer in answers:
            rid = runs.start({"question_id": "F4", "condition": condition, "model": "local"})
            runs.finish(rid, status="completed", answer=answer, ttft=0.5, duration=20.0)
            ids.append(rid)
    return cfg, q, ids
