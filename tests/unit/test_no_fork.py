"""No process forks after threads: `index`, `ask` and `run` (the real binary, RAG on the
OpenVINO embedder) print no "fork" warning and fork nothing. OpenVINO's usage analytics forked
a process from a thread to post to Google Analytics (after LanceDB had started its threads,
which then warned of a possible deadlock); they are kept off (`no_vendor_telemetry`). CI=true
also turns them off, so it is unset here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fintrade_tui.config import Config
from tests.conftest import needs_bundle
from tests.unit.test_runs import small_rag_config

ANSWER = "AAPL's ROE was about 1.6 at the end of FY2024."
# every fork of the process (multiprocessing's or not) noted on stderr
WATCH = (
    "import os, sys\n"
    "os.register_at_fork(before=lambda: print('FORKED', file=sys.stderr, flush=True))\n"
    "sys.argv[0] = 'fintrade-tui'\n"
    "from fintrade_tui.cli import main\n"
    "main()\n"
)


@pytest.mark.long  # index, ask and run as real binaries, embedding AAPL's filings
@needs_bundle
def test_index_ask_and_run_fork_nothing_and_warn_of_none(built_store: Config, tmp_path: Path):
    config = small_rag_config(built_store, tmp_path, ANSWER)
    (tmp_path / "home").mkdir()  # the analytics stay off where there is no home folder
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env |= {"HOME": str(tmp_path / "home"), "PYTHONWARNINGS": "default"}
    commands = [
        ["index", "--ticker", "AAPL"],
        ["ask", "F1", "-c", "no_rag,rag", "-m", "mock"],
        ["run", "-q", "F1", "-c", "rag", "-m", "mock", "--batch", "b1"],
    ]
    for args in commands:
        out = subprocess.run(
            [sys.executable, "-c", WATCH, "--config", str(config), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        text = out.stdout + out.stderr
        # lancedb's "fork support is experimental ..." (the temp paths hold the test's name)
        assert "Warning" not in text and "os.fork" not in text, (args, text[-2000:])
        assert "FORKED" not in text, args
    # nor did the analytics leave their files in the home folder
    assert not (tmp_path / "home" / "intel").exists()
