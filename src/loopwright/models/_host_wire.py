"""The model host's wire: one JSON object per line over a Unix stream socket.

    client -> host   {"op": "hello", "protocol": 1, "pid": ..., "command": "..."}
                     {"op": "call", "request": {...}}       (models/_llama_engine.CallRequest)
                     {"op": "status"} | {"op": "stop"}
    host -> client   {"op": "hello", "pid": ..., "model": "...", "loaded": true}
                     {"op": "accepted"}                     the call is queued
                     {"op": "phase", "phase": "...", "detail": "..."}
                     {"op": "alive", "phase": "...", "detail": "..."}   every HEARTBEAT_S
                     {"op": "text", "piece": "..."}
                     {"op": "done", "response": {...}}      (ModelResponse.to_dict)
                     {"op": "error", "kind": "model" | "config", "message": "..."}
                     {"op": "status", ...} | {"op": "stopping"}

A connection carries one call (or one status or stop); the client closing it before the
reply abandons the call, and the host stops generating for it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
from typing import Any

HEARTBEAT_S = 1.0
"""The host says it is alive this often to every client waiting for a reply."""
MAX_LINE = 64 * 1024 * 1024
"""A line longer than this is not a message (a prompt is a few hundred KB at most)."""


class WireClosed(Exception):
    """The other end closed the connection (or sent something that is not a message)."""


class Channel:
    """One connection: send whole lines (from any thread), read them one by one."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._send_lock = threading.Lock()
        self._buffer = bytearray()
        self.closed = False

    def send(self, message: dict[str, Any]) -> bool:
        """False when the other end is gone."""
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._send_lock:
            if self.closed:
                return False
            try:
                self.sock.sendall(data)
            except OSError:
                self.closed = True
                return False
        return True

    def receive(self) -> dict[str, Any]:
        """The next message; `TimeoutError` when none came within the socket's timeout,
        `WireClosed` when the connection ended."""
        while b"\n" not in self._buffer:
            try:
                chunk = self.sock.recv(1 << 16)
            except (ConnectionResetError, BrokenPipeError):
                chunk = b""
            if not chunk:
                self.closed = True
                raise WireClosed
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE:
                raise WireClosed
        line, _, rest = bytes(self._buffer).partition(b"\n")
        self._buffer = bytearray(rest)
        try:
            message = json.loads(line)
        except ValueError:
            raise WireClosed from None
        if not isinstance(message, dict):
            raise WireClosed
        return message

    def close(self) -> None:
        with self._send_lock:
            self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end (Linux: SO_PEERCRED); None elsewhere."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)
