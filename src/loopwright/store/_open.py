"""Where the run store lives: `--store PATH_OR_URL`, else `$LOOPWRIGHT_STORE`, else the
default ~/.loopwright/runs.db. A `postgresql://` (or `postgres://`) URL opens the Postgres
store; anything else is a SQLite file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TypeAlias

from loopwright.clock import Clock
from loopwright.errors import ConfigurationError
from loopwright.store._pg_errors import is_postgres_url, redact_url
from loopwright.store._postgres import PostgresRunStore
from loopwright.store._sqlite import SqliteRunStore

STORE_ENV = "LOOPWRIGHT_STORE"
DEFAULT_STORE_PATH = "~/.loopwright/runs.db"
PersistentStore: TypeAlias = SqliteRunStore | PostgresRunStore
_URL = re.compile(r"[A-Za-z][\w+.\-]+:/")
"""`scheme:/...`; a scheme of one letter is a Windows drive (`C:/runs.db`)."""


def default_store_path() -> Path:
    """`$LOOPWRIGHT_STORE` if set, else ~/.loopwright/runs.db."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE_PATH).expanduser()


def store_location(location: str | Path | None = None) -> str:
    """The store a command uses: `location`, else `$LOOPWRIGHT_STORE`, else the default."""
    if location:
        return str(location)
    return os.environ.get(STORE_ENV) or DEFAULT_STORE_PATH


def open_store(
    location: str | Path | None = None, *, clock: Clock | None = None, migrate: bool = False
) -> PersistentStore:
    """The run store at `location` (default: `$LOOPWRIGHT_STORE`, else ~/.loopwright/runs.db).

    A SQLite file is created (and migrated) if needed; a Postgres database must hold the
    store's schema unless `migrate` is true (`loopwright store migrate --store URL`)."""
    where = store_location(location)
    if is_postgres_url(where):
        return PostgresRunStore(where, clock=clock, migrate=migrate)
    if _URL.match(where):  # not a file name: never create `mysql:/user:password@host/...`
        raise ConfigurationError(
            f"the run store {redact_url(where)} is a URL of a kind loopwright cannot use: "
            f"a store is a SQLite file path or a postgresql:// URL"
        )
    return SqliteRunStore(Path(where).expanduser(), clock=clock)
