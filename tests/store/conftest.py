"""Fixtures for the store tests: a real PostgreSQL server for the whole session (initdb in a
temporary folder, a free port on 127.0.0.1, stopped at the end), a fresh database per test,
and `spot`: one store location per kind, so the conformance suite runs on both stores."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from loopwright.clock import Clock
from loopwright.store import PersistentStore, open_store
from loopwright.store._pg_local import LocalPostgres, find_pg_bin, start_local_postgres


@pytest.fixture(scope="session")
def pg_server() -> Iterator[LocalPostgres]:
    bin_dir = find_pg_bin()
    if bin_dir is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, postgres): `make postgres` installs "
            "Debian's postgresql package (make test does it)"
        )
    server = start_local_postgres(bin_dir)
    yield server
    server.stop()


def new_database(server: LocalPostgres, *, migrate: bool = True) -> str:
    """A fresh database on the session's server (with the store's schema); its URL."""
    url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    if migrate:
        open_store(url, migrate=True).close()
    return url


@pytest.fixture
def pg_url(pg_server: LocalPostgres) -> str:
    return new_database(pg_server)


@dataclass
class Spot:
    """Where a test's store lives; each `open()` is another handle (connection) on it."""

    kind: str
    location: str

    def open(self, clock: Clock | None = None) -> PersistentStore:
        return open_store(self.location, clock=clock)


@pytest.fixture(params=["sqlite", "postgres"])
def spot(request: pytest.FixtureRequest, tmp_path: Path) -> Spot:
    if request.param == "sqlite":
        return Spot("sqlite", str(tmp_path / "runs.db"))
    server: LocalPostgres = request.getfixturevalue("pg_server")
    return Spot("postgres", new_database(server))
