"""Fixtures for the store tests: a fresh database per test on the session's PostgreSQL server
(`pg_server`, tests/conftest.py), and `spot`: one store location per kind, so the conformance
suite runs on both stores."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_locations import Spot, new_database

from loopwright.store import LocalPostgres


@pytest.fixture
def pg_url(pg_server: LocalPostgres) -> str:
    return new_database(pg_server)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def spot(request: pytest.FixtureRequest, tmp_path: Path) -> Spot:
    if request.param == "sqlite":
        return Spot("sqlite", str(tmp_path / "runs.db"))
    server: LocalPostgres = request.getfixturevalue("pg_server")
    return Spot("postgres", new_database(server))
