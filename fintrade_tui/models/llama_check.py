"""Build check room: does the llama.cpp library built into this venv run a model on this CPU?

`make` builds llama.cpp with `-march=native`. A CPU can list an instruction set that the
machine does not let a process use: this workplace's VMs list AMX, and its tile instructions
fault (a general protection fault in `ggml_backend_amx_mul_mat`, the process killed with
SIGSEGV). So the Makefile turns AMX off, and after the build runs this check in a child
process: SmolLM2 (the packaged test model) generates a few tokens. A crash or an error exits
non-zero, and the Makefile then builds the portable variant (no `-march=native`) instead.

    python -m fintrade_tui.models.llama_check
"""

from __future__ import annotations

import subprocess
import sys

_GENERATE = """
from pathlib import Path
from llama_cpp import Llama
from fintrade_tui.models import weights
w = weights.get("smollm2")  # a whole GGUF inside its package: no model folder needed
m = Llama(str(weights.locate(w, Path("."))), n_ctx=256, n_threads=2, verbose=False)
out = m.create_completion("The capital of France is", max_tokens=4, temperature=0)
assert out["choices"][0]["text"], "no tokens generated"
"""


def works(timeout: float = 300) -> tuple[bool, str]:
    """(True, "") when a child process generated tokens; else (False, why)."""
    try:
        res = subprocess.run(
            [sys.executable, "-c", _GENERATE], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return False, f"no tokens within {timeout:.0f} s"
    if res.returncode == 0:
        return True, ""
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    why = lines[-1] if lines else ""
    return False, f"exit code {res.returncode}" + (f": {why}" if why else "")


def main() -> None:
    ok, why = works()
    if ok:
        print("llama.cpp: runs a model on this CPU")
        return
    print(f"llama.cpp: the build does not run on this CPU ({why})", file=sys.stderr)
    sys.exit(1)


if __name__ == "__main__":
    main()
