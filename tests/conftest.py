"""Shared fixtures. Real network requests are blocked by default: only loopback is allowed."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from loopwright.tools import tool

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and (
        host in {"localhost", "::1"} or host.startswith("127.") or self.family == socket.AF_UNIX
    ):
        return _real_connect(self, address)
    raise OSError(f"tests may not reach the network (tried {address!r}); use loopback")


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    yield


@pytest.fixture(autouse=True)
def _run_store_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLI runs are stored by default: keep them out of ~/.loopwright during tests."""
    folder = tmp_path_factory.mktemp("store")
    monkeypatch.setenv("LOOPWRIGHT_STORE", str(folder / "runs.db"))


@tool
async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first number
        b: second number
    """
    return a + b


@pytest.fixture
def add_tool() -> Any:
    return add
