"""Fixtures for the store tests: a real PostgreSQL server for the whole session (initdb in a
temporary folder, a free port on 127.0.0.1, stopped at the end), a fresh database per test,
and `spot`: one store location per kind, so the conformance suite runs on both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from store_locations import Spot, new_database

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


@pytest.fixture
def pg_url(pg_server: LocalPostgres) -> str:
    return new_database(pg_server)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def spot(request: pytest.FixtureRequest, tmp_path: Path) -> Spot:
    if request.param == "sqlite":
        return Spot("sqlite", str(tmp_path / "runs.db"))
    server: LocalPostgres = request.getfixturevalue("pg_server")
    return Spot("postgres", new_database(server))
