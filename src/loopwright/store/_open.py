"""Where the run store lives: `--store PATH`, else `$LOOPWRIGHT_STORE`, else the default.

The default is ~/.loopwright/runs.db.
"""

from __future__ import annotations

import os
from pathlib import Path

from loopwright.clock import Clock
from loopwright.store._sqlite import SqliteRunStore

STORE_ENV = "LOOPWRIGHT_STORE"
DEFAULT_STORE_PATH = "~/.loopwright/runs.db"


def default_store_path() -> Path:
    """`$LOOPWRIGHT_STORE` if set, else ~/.loopwright/runs.db."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE_PATH).expanduser()


def open_store(path: str | Path | None = None, *, clock: Clock | None = None) -> SqliteRunStore:
    """The SQLite run store at `path` (default: `default_store_path()`), created if absent."""
    return SqliteRunStore(Path(path).expanduser() if path else default_store_path(), clock=clock)
