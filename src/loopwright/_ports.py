"""Ports for the local servers loopwright starts (the Temporal dev server, PostgreSQL).

A port found by binding port 0 and closing the socket is free only until someone takes
it: the kernel hands out the same range (its ephemeral ports) to every outgoing connection
and to every other program's port-0 bind, so between the pick and the server's own bind
another process can get it, and the server cannot start. A server's port is drawn at
random from below that range instead, where the kernel hands out nothing; the server binds
it itself, and when that bind fails (another program chose the same port on purpose) the
starter draws another and starts the server again (`BIND_ATTEMPTS` times in all).
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

BIND_ATTEMPTS = 5
LOWEST = 10_000
"""Below it are the ports of well-known services; none is drawn there."""
EPHEMERAL_DEFAULT = (32768, 60999)  # Linux's default ip_local_port_range
_PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_range() -> tuple[int, int]:
    """The ports the kernel hands out itself (Linux: ip_local_port_range)."""
    try:
        low, high = (int(part) for part in _PORT_RANGE.read_text().split())
    except (OSError, ValueError):
        return EPHEMERAL_DEFAULT
    return low, high


def server_port(*, avoid: frozenset[int] = frozenset()) -> int:
    """A port for a server to bind on 127.0.0.1: drawn at random where the kernel hands out
    none (below the ephemeral range, or above it when that is the larger gap), and free
    right now (not a guarantee: the server's own bind decides, see `bind_failed`)."""
    low, high = ephemeral_range()
    below, above = (LOWEST, low - 1), (high + 1, 65535)
    first, last = below if below[1] - below[0] >= above[1] - above[0] else above
    for _ in range(100):
        port = random.randint(first, last)
        if port not in avoid and _bindable(port):
            return port
    return random.randint(first, last)  # everything tried was taken: let the bind decide


def _bindable(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def bind_failed(log_text: str) -> bool:
    """Whether a server's output says it could not bind a port (taken by another program)."""
    return "address already in use" in log_text.lower()
