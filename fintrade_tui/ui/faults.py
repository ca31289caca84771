"""Model faults in the Arena (UI room, no Textual import): what a pane whose run failed says.

A run that ends in `error` or `timeout` carries a one-line error (`llm.error_text`, written by
the runner or, for a failure before the run starts such as a missing local GGUF, by the Arena).
Here it becomes the pane's fault block: what kind of fault it was, the reason on one line, a
"cut off" mark when the stream broke after some text (that partial answer stays in the pane),
and the key that retries the pane. Classified from the text alone, so a replayed run shows the
same block as a live one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FAULTED = ("error", "timeout")

LABELS = {
    "timeout": "timed out",
    "rate_limit": "rate limited (429)",
    "server": "server error (5xx)",
    "connection": "connection failed",
    "model_file": "local model file missing",
    "error": "model error",
}

# litellm wraps an error raised while streaming: "MidStreamFallbackError: litellm.Mid...:
# litellm.RateLimitError: slow down Original exception: RateLimitError: ..." - the inner one
_WRAPPERS = ("MidStreamFallbackError",)
_KINDS = (
    ("timeout", ("Timeout", "APITimeoutError", "TimeoutError")),
    ("rate_limit", ("RateLimitError",)),
    ("server", ("InternalServerError", "ServiceUnavailableError", "BadGatewayError")),
    ("connection", ("APIConnectionError",)),
)


@dataclass(frozen=True)
class Fault:
    kind: str  # a key of LABELS
    reason: str  # one line: the error's class and first line
    cut: bool  # the stream broke mid-answer: the partial answer is kept above
    chars: int  # how much of it arrived

    @property
    def label(self) -> str:
        return LABELS[self.kind]


def tidy(error: str) -> str:
    """The error line without litellm's wrapping: `RateLimitError: slow down`."""
    line = " ".join((error or "").split())
    line = line.split(" Original exception:")[0]
    for wrapper in _WRAPPERS:
        line = re.sub(rf"^{wrapper}: (litellm\.)?{wrapper}: ", "", line)
    line = re.sub(r"^(\w+): litellm\.\1: ", r"\1: ", line)  # "X: litellm.X: msg"
    line = re.sub(r"^litellm\.(\w+): ", r"\1: ", line)
    return re.sub(r"^(\w+): (?:\1: )+", r"\1: ", line)  # "X: X: msg"


def kind_of(status: str, reason: str) -> str:
    name = reason.split(":", 1)[0].strip()
    if status == "timeout":
        return "timeout"
    for kind, names in _KINDS:
        if name in names:
            return kind
    if name == "UserError" and ".gguf" in reason:
        return "model_file"  # weights.ensure / local.register name the file and the fix
    # a status code standing alone, not part of a path or name ("pytest-511", "v429.json")
    if re.search(r"(?<![\w/.-])429(?![\w/.-])", reason):
        return "rate_limit"
    if re.search(r"(?<![\w/.-])5\d\d(?![\w/.-])", reason) and "Error" in name:
        return "server"
    return "error"


def fault(status: str, error: str | None, answer: str | None = "") -> Fault | None:
    """The fault of a finished run, or None when it did not fail."""
    if status not in FAULTED:
        return None
    reason = tidy(error or status) or status
    kind = kind_of(status, reason)
    if kind == "model_file":
        reason = reason.removeprefix("UserError: ")  # already the user's one line
    partial = (answer or "").strip()
    return Fault(kind, reason, bool(partial), len(partial))


def fault_lines(f: Fault, retry_key: str | None) -> list[str]:
    """The pane's fault block: the reason, the cut mark, the retry hint (none in a replay)."""
    lines = [f"✗ {f.label}: {f.reason}"]
    if f.cut:
        lines.append(f"✂ cut off mid-answer after {f.chars:,} chars (the partial answer is kept)")
    if retry_key:
        lines.append(f"{retry_key} retries this pane (its condition only)")
    return lines
