"""Exit codes a script can trust: `ask` and `run` exit 0 when every run completed, 3 when any
ended in error or time-out (with one line on stderr saying how many, by status, and the most
common error), 2 on bad input; the table or JSON is printed either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fintrade_tui.cli import main
from fintrade_tui.cli.runs import RUNS_FAILED
from fintrade_tui.config import Config
from tests.conftest import needs_bundle, write_config

pytestmark = needs_bundle
ANSWER = "Apple's ROE was high as of the quarter; see the evidence."


@pytest.fixture(scope="module")
def config(built_store: Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One workspace for the module: the seeds are imported once (the first `ask`)."""
    tmp_path = tmp_path_factory.mktemp("exit-codes")
    extra = (
        f"workspace: {tmp_path / 'ws.duckdb'}\n"
        "runs: {retries: 0, backoff: 0.01}\n"
        "models:\n"
        "  ok: {model: openai/gpt-4o-mini, extra: {mock_response: %s}}\n"
        "  down: {model: openai/gpt-4o-mini, extra: {mock_response: litellm.InternalServerError}}\n"
        "  slow: {model: openai/gpt-4o-mini, timeout: 0.2, extra: {mock_response: late, "
        "mock_delay: 5}}\n"
    ) % json.dumps(ANSWER)
    return write_config(tmp_path / "cfg", built_store.bundle, built_store.store, extra)


def _cli(config: Path, *args: str):
    return CliRunner().invoke(main, ["--config", str(config), *args])


def test_ask_exits_0_when_every_run_completed_and_3_when_any_did_not(config: Path) -> None:
    ok = _cli(config, "ask", "F1", "-c", "no_rag,oracle", "-m", "ok", "--json")
    assert ok.exit_code == 0, ok.output
    assert [r["status"] for r in json.loads(ok.stdout)] == ["completed", "completed"]
    assert ok.stderr == ""

    down = _cli(config, "ask", "F1", "-c", "no_rag,oracle", "-m", "down", "--json")
    assert down.exit_code == RUNS_FAILED == 3
    assert [r["status"] for r in json.loads(down.stdout)] == ["error", "error"]  # still printed
    (line,) = down.stderr.splitlines()
    assert line.startswith("error: 2 of 2 runs did not complete (error 2); most often (2x): ")
    assert line.endswith("(2x): InternalServerError: this is a mock internal server error")

    slow = _cli(config, "ask", "F1", "-c", "no_rag", "-m", "slow")
    assert slow.exit_code == 3
    assert "1 of 1 runs did not complete (timeout 1)" in slow.stderr.splitlines()[-1]


def test_run_exits_3_while_any_run_of_the_batch_failed_and_0_once_none_did(config: Path) -> None:
    both = _cli(
        config, "run", "-q", "F1", "-m", "ok,down", "-c", "no_rag", "--batch", "b", "--json"
    )
    assert both.exit_code == 3
    summary = json.loads(both.stdout.strip().splitlines()[-1])
    assert summary["status_completed"] == 1 and summary["status_error"] == 1
    (line,) = both.stderr.splitlines()
    assert line.startswith("error: 1 of 2 runs did not complete (error 1); most often (1x): ")

    # the completed run is skipped, the failed one sent again (and failing again)
    again = _cli(config, "run", "-q", "F1", "-m", "ok,down", "-c", "no_rag", "--batch", "b")
    assert again.exit_code == 3 and "1 of 1 runs did not complete" in again.stderr
    # a batch whose runs all completed, or had nothing left to run, exits 0
    fine = _cli(config, "run", "-q", "F1", "-m", "ok", "-c", "no_rag", "--batch", "b", "--json")
    assert fine.exit_code == 0 and fine.stderr == ""
    assert json.loads(fine.stdout.strip().splitlines()[-1])["skipped_completed"] == 1

    bad = _cli(config, "run", "-q", "NOPE*", "-m", "ok")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --questions")
