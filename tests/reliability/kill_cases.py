"""What the SIGKILL tests share (tests/reliability/test_kills_*.py; issue 20): the real binary
killed at 3 points of each writing command. The command stops itself at a named stop point
(FINTRADE_STOP_AT, `fintrade_tui/kill_points.py`) and is killed while stopped (`kill_at`), so
every kill lands where its test says, on any machine load.

Each test asserts (a) the store / index / workspace is as before or holds the command's
complete result, as the point implies, never half of it (read from a copy, so the check never
alters the files; `stored_or_not` for a workspace write); (b) the same command run again
succeeds with no repair and gives the complete result; (c) no process the command started
outlives the kill (each has up to 10 s).

Only the killed command must be the binary. A command run to its end (a rerun, a module
workspace) reads only what is on disk, so it runs in this process (`cli_ok`): the same command
without a new Python importing litellm again; ingest and index run as the binary all the same
(`run_ok`: ingest forks its parser workers; an index build costs no less in here). The bundles,
configs and workspaces they start from are built once (tests/reliability/conftest.py, `base`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import BUNDLE, small_bundle
from tests.reliability.kill_harness import (
    Outcome,
    invoke,
    read_lock,
    read_rows,
    read_tables,
    run,
    run_until_stopped,
)

FILINGS = BUNDLE / "fintradebench/filings/AAPL"
# four 10-Qs: ingest parses 4+ filings in its two worker processes (fewer run in-process)
QUARTERS = ("2024-02-02", "2024-05-03", "2024-08-02", "2025-01-31")
ANSWER = "Apple's ROE was 1.6 as of the quarter [E1]."
JUDGED = {
    k: {"score": s, "justification": "because"}
    for k, s in (("accuracy", 4), ("completeness", 3), ("relevance", 4), ("clarity", 5))
}
JUDGED |= {"metrics_used": ["ROE"], "fundamental_integration": 4,
           "trading_signal_integration": 1, "reasoning_depth": 3}  # fmt: skip
N_QUESTIONS, N_IMPORTED = 1000, 1500


def kill_bundle(root: Path, quarters: tuple[str, ...]) -> Path:
    """A small bundle with the AAPL 10-Qs filed on these days."""
    return small_bundle(root, (next(FILINGS.glob(f"10-Q_{day}_*.htm")) for day in quarters))


def kill_config(
    folder: Path, bundle: Path, store: Path, index: Path | None = None, delay: float = 1.2
) -> Path:
    # a batch writes its run records a group every 0.5 s: an answer of 1.2 s lands each run's
    # end in a group of its own, so the stop point "k runs stored" finds exactly k of 6 (a
    # sleep, no CPU; shorter, runs would share groups and a kill at 1 find several stored)
    run_delay = f"mock_delay: {delay}"
    # the index kills test what a kill leaves of the tables and the manifest, not what the
    # vectors are worth: a filing's few large chunks, each embedded from its first 16 word
    # pieces, build the same tables at a third of the cost
    text = f"""bundle: {bundle}
store: {store}
workspace: {folder / "ws.duckdb"}
retrieval:
  index: {index or folder / "index"}
  parent_tokens: 4000
  child_tokens: 2000
  embed_tokens: 16
models:
  mock:
    model: openai/gpt-4o-mini
    extra: {{mock_response: {json.dumps(ANSWER)}, {run_delay}}}
  judge:
    model: openai/gpt-4o-mini
    extra: {{mock_response: {json.dumps(json.dumps(JUDGED))}}}
judging:
  model: judge
"""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(text)
    return folder / "config.yaml"


def run_ok(args: list[str], binary: bool = True) -> str:
    """The command run to its end: the binary, or in this process (the module docstring)."""
    res = run(args) if binary else invoke(args)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def cli_ok(args: list[str]) -> str:
    return run_ok(args, binary=False)


# a workspace write's stop points: (point, is the write stored, is its WAL left beside the file)
WORKSPACE_POINTS = {
    "transaction in progress": ("workspace.before-commit", False, None),
    "commit in the WAL": ("workspace.committed", True, True),
    "checkpointed, lock held": ("workspace.checkpointed", True, False),
}


def stored_or_not(ws: Path, count_sql: str, total: int, before: dict, point: str) -> None:
    """Killed before its commit, the command left every table as before; after it, all of its
    rows, in the WAL or already checkpointed into the file."""
    _, stored, wal = WORKSPACE_POINTS[point]
    if wal is not None:
        assert Path(f"{ws}.wal").is_file() == wal
    assert read_rows(ws, count_sql)[0][0] == (total if stored else 0)
    if not stored:
        assert read_tables(ws) == before


STORE_SKIP = {"meta": "key <> 'built_at'"}  # the one value two builds of a bundle differ in


def copy_workspace(ws: Path, to: Path) -> None:
    """The workspace as a next process would find it: its file once checkpointed (no WAL)."""
    with read_lock(ws):
        assert not Path(f"{ws}.wal").is_file()
        shutil.copyfile(ws, to)


def own_folder(base: dict, tmp_path: Path, workspace: str | None = None) -> tuple[Path, Path]:
    """A test's own folder: a copy of the store (and of a workspace), its config."""
    store = tmp_path / "store.duckdb"
    shutil.copyfile(base["store"], store)
    if workspace:
        shutil.copyfile(base["root"] / workspace, tmp_path / "ws.duckdb")
    return kill_config(tmp_path, base["bundle"], store), tmp_path / "ws.duckdb"


def kill_at(cfg: Path, args: list[str], point: str, env: dict[str, str] | None = None) -> Outcome:
    """Run the command until it stops itself at `point`, SIGKILL it there."""
    out = run_until_stopped(["--config", str(cfg), *args], point, env=env)
    assert out.killed, f"the kill did not land (rc {out.returncode}): {out.stderr[-500:]}"
    assert out.survivors == [], f"outlived the kill: {out.survivors}"
    return out


# the batch `base` runs to its end and the run kills stop (test_kills_workspace.py)
RUN_ARGS = ["run", "-q", "Q*", "-m", "mock", "-c", "no_rag,oracle", "--concurrency", "1",
            "--batch", "k", "--json"]  # fmt: skip
