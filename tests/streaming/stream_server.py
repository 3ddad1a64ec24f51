"""A real HTTP server on 127.0.0.1 that streams chat replies the way providers do: OpenAI's
server-sent events, Ollama's NDJSON, Anthropic's Messages events. Each reply's pieces are
written and flushed one by one; a piece may wait on a `threading.Event` the test holds, so
a test can look at what arrived before the rest is sent."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content_type: str
    pieces: list[bytes]
    hold_after: int | None = None
    """Wait for `release` after sending this many pieces."""
    release: threading.Event = field(default_factory=threading.Event)
    until_closed: bool = False
    """At `hold_after`, wait instead for the client to close the connection (30 s at
    most): once it has, send nothing more and set `client_closed`."""
    client_closed: threading.Event = field(default_factory=threading.Event)


def openai_sse(pieces: list[str], *, prompt: int = 20) -> Reply:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    ]
    chunks += [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    usage = {"prompt_tokens": prompt, "completion_tokens": len(pieces)}
    chunks.append({"choices": [], "usage": usage})
    lines = [f"data: {json.dumps(c)}\n\n".encode() for c in chunks]
    return Reply("text/event-stream", [*lines, b"data: [DONE]\n\n"])


def ollama_ndjson(pieces: list[str]) -> Reply:
    chunks: list[dict[str, Any]] = [
        {"message": {"role": "assistant", "content": p}, "done": False} for p in pieces
    ]
    chunks.append(
        {
            "message": {"role": "assistant", "content": ""},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 20,
            "eval_count": len(pieces),
        }
    )
    return Reply("application/x-ndjson", [(json.dumps(c) + "\n").encode() for c in chunks])


def anthropic_sse(pieces: list[str]) -> Reply:
    def event(kind: str, data: dict[str, Any]) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

    out = [
        event("message_start", {"message": {"usage": {"input_tokens": 20}}}),
        event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
    ]
    out += [
        event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": p}})
        for p in pieces
    ]
    out += [
        event("content_block_stop", {"index": 0}),
        event(
            "message_delta", {"delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}}
        ),
        event("message_stop", {}),
    ]
    return Reply("text/event-stream", out)


class StreamServer:
    """Serves the queued replies in order, to any POST; keeps each request body."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.bodies.append(body)
                server.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = server.replies.pop(0)
                pieces = reply.pieces
                if not body.get("stream"):  # asked for a whole reply: send one JSON body
                    pieces = [whole(reply)]
                    reply = Reply("application/json", pieces)
                self.send_response(200)
                self.send_header("content-type", reply.content_type)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for index, piece in enumerate(pieces):
                    if index == reply.hold_after and reply.until_closed:
                        if self._client_closed():
                            reply.client_closed.set()
                            return
                    elif index == reply.hold_after:
                        reply.release.wait(30)
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _client_closed(self) -> bool:
                """Whether the client closes its end within 30 s (a read gives EOF)."""
                self.connection.settimeout(30)
                try:
                    return self.rfile.read(1) == b""
                except OSError:  # a timeout, or a reset: a reset is a close too
                    return not isinstance(sys.exc_info()[1], TimeoutError)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"


def whole(reply: Reply) -> bytes:
    """An OpenAI-shaped whole reply with the streamed reply's text."""
    text = ""
    for piece in reply.pieces:
        line = piece.decode().strip()
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices", []):
                text += choice.get("delta", {}).get("content") or ""
    data = {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 5},
    }
    return json.dumps(data).encode()


@contextmanager
def stream_server() -> Iterator[StreamServer]:
    server = StreamServer()
    server.thread.start()
    try:
        yield server
    finally:
        for reply in server.replies:
            reply.release.set()
        server.httpd.shutdown()
        server.httpd.server_close()
