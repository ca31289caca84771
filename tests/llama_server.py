"""llama-cpp-python's own OpenAI-compatible server (`python -m llama_cpp.server`) serving the
test model, SmolLM2-135M, on loopback: what an analyst who serves a GGUF themselves points an
`openai/...` model with `api_base` at. One thread, so a loaded machine (a CI run, a flake
hunt) slows it evenly instead of stalling llama.cpp's thread barrier."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.clock import wait_until

ALIAS = "smollm2"  # the name the server answers to: the model string is openai/smollm2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ready(base: str, proc: subprocess.Popen) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"llama_cpp.server exited with {proc.returncode}")
    try:
        with urllib.request.urlopen(f"{base}/models", timeout=5) as r:
            return r.status == 200
    except OSError:  # not listening yet
        return False


@contextmanager
def llama_server(
    gguf: Path, log: Path, chat_format: str = "chatml-function-calling"
) -> Iterator[str]:
    """The server's OpenAI base URL (`http://127.0.0.1:PORT/v1`) while it runs. The chat
    format is llama-cpp-python's for native tool calls (it reads `tools` only beside a
    `tool_choice`); its log goes to `log`."""
    port = _free_port()
    args = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf)]
    args += ["--host", "127.0.0.1", "--port", str(port), "--model_alias", ALIAS]
    args += ["--chat_format", chat_format, "--n_ctx", "4096", "--verbose", "False"]
    args += ["--n_threads", "1", "--n_threads_batch", "1"]
    # by default a new request cuts the stream in progress short ("Stream ended before a
    # finish_reason"): a batch sends several at once
    args += ["--interrupt_requests", "False"]
    base = f"http://127.0.0.1:{port}/v1"
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
        try:
            try:
                wait_until(lambda: _ready(base, proc), 300, 0.1, "llama_cpp.server to listen")
            except AssertionError as exc:
                raise AssertionError(f"{exc}:\n{log.read_text(errors='replace')[-2000:]}") from None
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
