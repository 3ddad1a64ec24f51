"""A loopback HTTP proxy in front of the model server that counts model calls and tokens.

The peers report usage each in its own way (or not at all); counted here, on the wire, every
framework is measured the same way: each POST to `.../chat/completions` is a model call, and
the `usage` of a JSON reply (prompt, completion and cached prompt tokens) is added up. A
streamed (server-sent events) reply is passed through and counted as a call only.

`cancel_in_flight()` closes the upstream connections of requests still running (their
client was killed at the time limit): the model server sees the connection close and stops
generating, instead of writing a runaway reply to its context limit for nobody.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
TIMEOUT_S = 1800.0


class CountingProxy:
    """`with CountingProxy(upstream) as proxy:` then give frameworks `proxy.url`."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self._lock = threading.Lock()
        self._counts = self._zero()
        self._in_flight: set[http.client.HTTPConnection] = set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @staticmethod
    def _zero() -> dict[str, int]:
        return {"model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0}

    @property
    def url(self) -> str:
        path = httpx.URL(self.upstream).path
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def __enter__(self) -> CountingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.cancel_in_flight()

    def cancel_in_flight(self) -> int:
        """Close the upstream connection of every request still running; how many."""
        with self._lock:
            running, self._in_flight = list(self._in_flight), set()
        for connection in running:
            if connection.sock is not None:
                with contextlib.suppress(OSError):
                    connection.sock.shutdown(socket.SHUT_RDWR)
        return len(running)

    def _send(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        base = httpx.URL(self.upstream)
        connection = http.client.HTTPConnection(base.host, base.port, timeout=TIMEOUT_S)
        with self._lock:
            self._in_flight.add(connection)
        try:
            connection.request(method, path, body=body, headers=headers)
            reply = connection.getresponse()
            return reply.status, reply.getheaders(), reply.read()
        finally:
            with self._lock:
                self._in_flight.discard(connection)
            connection.close()

    def take(self) -> dict[str, int]:
        """The counts since the last `take`, and start again from zero."""
        with self._lock:
            counts, self._counts = self._counts, self._zero()
        return counts

    def _count(self, path: str, body: bytes, content_type: str) -> None:
        if not path.endswith("/chat/completions"):
            return
        usage: dict[str, Any] = {}
        if content_type.startswith("application/json"):
            try:
                usage = json.loads(body).get("usage") or {}
            except (ValueError, AttributeError):
                usage = {}
        details = usage.get("prompt_tokens_details") or {}
        with self._lock:
            self._counts["model_calls"] += 1
            self._counts["input_tokens"] += int(usage.get("prompt_tokens") or 0)
            self._counts["output_tokens"] += int(usage.get("completion_tokens") or 0)
            self._counts["cached_input_tokens"] += int(details.get("cached_tokens") or 0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Forward(BaseHTTPRequestHandler):
            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
                try:
                    status, reply_headers, content = proxy._send(
                        self.command, self.path, body, headers
                    )
                except (OSError, http.client.HTTPException):
                    return  # cancelled (its client is gone) or the server went away
                kind = dict((k.lower(), v) for k, v in reply_headers).get("content-type", "")
                if self.command == "POST":
                    proxy._count(self.path, content, kind)
                self.send_response(status)
                for key, value in reply_headers:
                    if key.lower() not in HOP_HEADERS and key.lower() != "content-encoding":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = _forward
            do_POST = _forward

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: the bench prints its own lines

        return Forward
