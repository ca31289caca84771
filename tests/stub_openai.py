"""A small OpenAI-compatible HTTP server on loopback for the faults a real server will not
produce on demand: each request to /v1/chat/completions takes the next scripted reply (a 429
with Retry-After, a 500, a streamed answer, an event stream broken mid-answer, a stream that
stalls until the test ends). What each request carried is recorded for the asserts.

Every answer reports its `usage`, as OpenAI's server does (the streamed one in a last chunk,
when the client asks with `stream_options.include_usage`): by default 10 prompt tokens and a
completion token per word; given `tokens` (text -> count, e.g. a tiktoken encoding's), the
counts OpenAI's chat format gives — each message's content plus 3, plus 3 for the reply's
priming — and the answer's own count."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _chunk(delta: dict[str, Any], finish: str | None = None, **more: Any) -> bytes:
    body = {"id": "stub-1", "object": "chat.completion.chunk", "created": 0, "model": "stub"}
    body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    return b"data: " + json.dumps(body | more).encode() + b"\n\n"


class Stub:
    """The script (`replies`, taken in order; the last one repeats) and the requests seen."""

    def __init__(
        self, replies: list[dict[str, Any]], tokens: Callable[[str], int] | None = None
    ) -> None:
        self.replies = list(replies)
        self.tokens = tokens
        self.usages: list[dict[str, int]] = []  # each answer's reported usage, in order
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()  # ends stalled streams
        self.base = ""

    def next_reply(self) -> dict[str, Any]:
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def usage(self, body: dict[str, Any], text: str) -> dict[str, int]:
        """The usage this server reports for a request and its answer (kept in `usages`)."""
        if self.tokens is None:
            prompt, completion = 10, len(text.split(" "))
        else:
            contents = [str(m.get("content") or "") for m in body.get("messages", [])]
            prompt = sum(self.tokens(c) + 3 for c in contents) + 3
            completion = self.tokens(text)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        self.usages.append(usage)
        return usage


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            headers = {k.lower(): v for k, v in self.headers.items()}
            stub.requests.append({"path": self.path, "headers": headers, **body})
            reply = stub.next_reply()
            if "status" in reply:
                self.send_response(reply["status"])
                for k, v in reply.get("headers", {}).items():
                    self.send_header(k, v)
                error = {"error": {"message": reply.get("message", "stub error"), "type": "x"}}
                data = json.dumps(error).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            text = reply.get("text") or reply.get("broken") or reply.get("stall") or ""
            if not body.get("stream"):
                message = {"role": "assistant", "content": text}
                data = json.dumps(
                    {
                        "id": "stub-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "stub",
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": stub.usage(body, text),
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
            words = text.split(" ")
            for i, word in enumerate(words):
                piece = word if i == 0 else " " + word
                self.wfile.write(_chunk({"role": "assistant", "content": piece}))
                self.wfile.flush()
                if "broken" in reply and i == len(words) // 2:
                    self.wfile.write(b"data: {not json\n\n")  # and the connection drops
                    return
                if "stall" in reply and i == len(words) // 2:
                    stub.release.wait(60)
                    return
            self.wfile.write(_chunk({}, "stop"))
            usage = stub.usage(body, text)
            self.wfile.write(
                b"data: " + json.dumps({"id": "stub-1", "choices": [], "usage": usage}).encode()
            )
            self.wfile.write(b"\n\ndata: [DONE]\n\n")

    return Handler


@contextmanager
def serving(
    replies: list[dict[str, Any]], tokens: Callable[[str], int] | None = None
) -> Iterator[Stub]:
    """The stub on 127.0.0.1 (a free port) while the block runs; `stub.base` is its /v1."""
    stub = Stub(replies, tokens)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stub.base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield stub
    finally:
        stub.release.set()
        server.shutdown()
        server.server_close()


@contextmanager
def serving_apart(text: str) -> Iterator[str]:
    """The stub in a process of its own answering `text` to every request, while the block
    runs; yields its /v1 base. For benchmarks: an in-process server shares the client's GIL,
    so its work would count as the client's."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    args = [sys.executable, "-m", "tests.stub_openai", text]
    with subprocess.Popen(args, cwd=root, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            yield proc.stdout.readline().strip()
        finally:
            proc.kill()


def main() -> None:
    """`python -m tests.stub_openai TEXT`: the stub in a process of its own, answering TEXT to
    every request; prints its /v1 base on the first line, serves until killed. A benchmark's
    server must not share the client's interpreter (its GIL) as the in-process one does."""
    import sys

    with serving([{"text": sys.argv[1]}]) as stub:
        print(stub.base, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
