"""Custom-provider room: how a litellm model string `<name>/...` is routed to a CustomLLM handler
(the offline local model, the scripted providers of tests and benchmarks), and the chunk such a
handler streams."""

from __future__ import annotations

from typing import Any


def register_provider(name: str, handler: Any) -> None:
    """Route litellm model strings `<name>/...` to a CustomLLM handler, replacing an earlier one
    of that name: the local model, and the scripted providers of tests and benchmarks."""
    import litellm as mod

    mod.custom_provider_map = [
        *[p for p in mod.custom_provider_map if p.get("provider") != name],
        {"provider": name, "custom_handler": handler},
    ]


def stream_chunk(
    text: str, finished: bool = False, finish: str = "", usage: dict | None = None
) -> dict[str, Any]:
    """One chunk as a CustomLLM's streaming methods yield it (litellm's GenericStreamingChunk);
    a finished chunk without a reason says "stop"."""
    tokens = None
    if usage:
        tokens = {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
        }
    return {
        "text": text,
        "tool_use": None,
        "is_finished": finished,
        "finish_reason": finish or ("stop" if finished else ""),
        "usage": tokens,
        "index": 0,
    }
