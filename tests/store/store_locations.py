"""Where the store tests keep their stores: `Spot` (one store location per kind, each
`open()` another handle on it) and `new_database` (a fresh database on the suite's
PostgreSQL server). Imported by conftest.py and the tests (a module name of its own)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from loopwright.clock import Clock
from loopwright.store import LocalPostgres, PersistentStore, open_store


def new_database(server: LocalPostgres, *, migrate: bool = True) -> str:
    """A fresh database on the session's server (with the store's schema); its URL."""
    url = server.create_database(f"t_{uuid.uuid4().hex[:12]}")
    if migrate:
        open_store(url, migrate=True).close()
    return url


@dataclass
class Spot:
    """Where a test's store lives; each `open()` is another handle (connection) on it."""

    kind: str
    location: str

    def open(self, clock: Clock | None = None) -> PersistentStore:
        return open_store(self.location, clock=clock)
