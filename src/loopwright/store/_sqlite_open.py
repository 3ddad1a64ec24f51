"""Opening a SQLite run store's file: its path checked (and its folders made), the file
checked to be a loopwright store, switched to WAL mode and migrated; or, when it cannot be
written, opened read-only, with the reason kept for every write it refuses.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from urllib.parse import quote

from loopwright.errors import StoreError
from loopwright.store._schema import check_readable, check_store, migrate
from loopwright.store._sqlite_errors import READ_ONLY_CODES, primary_code, store_failure

WAL_CHECKPOINT_PAGES = 10_000
WAL_SIZE_LIMIT = 64 * 1024 * 1024


def store_path(path: str | Path) -> tuple[str, str | None]:
    """The store file's path (`~` expanded; its folders made for a new file), and why it
    cannot be written (None: it can, as far as its permissions tell)."""
    where = str(path)
    if where == ":memory:":
        return where, None
    where = str(Path(where).expanduser())
    if Path(where).is_dir():
        raise StoreError(
            f"run store {where} is a folder: give the path of a file in it "
            f"(e.g. {Path(where) / 'runs.db'})"
        )
    if not Path(where).exists():
        Path(where).parent.mkdir(parents=True, exist_ok=True)
    elif not os.access(where, os.W_OK) or not os.access(Path(where).parent, os.W_OK):
        return where, "the file or its folder is not writable"
    return where, None


def open_store_file(path: str, read_only: str | None) -> tuple[sqlite3.Connection, int, str | None]:
    """The connection to the store file at `path`, the schema version the file had when
    opened, and why it cannot be written (None: writable). A file `read_only` names a
    reason for, or that refuses a write while it is opened, is opened read-only."""
    if read_only is None:
        try:
            conn, version = _open_writable(path)
            return conn, version, None
        except sqlite3.Error as exc:
            if primary_code(exc) not in READ_ONLY_CODES or path == ":memory:":
                raise store_failure(path, exc) from None
            read_only = f"{exc}"
    conn, version = _open_read_only(path)
    return conn, version, read_only


def _open_writable(path: str) -> tuple[sqlite3.Connection, int]:
    """The file opened for writing and migrated, and the schema version it had."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open run store {path}: {exc}") from None
    try:
        conn.execute("PRAGMA busy_timeout = 10000")
        version = check_store(conn, path)  # a foreign file is refused untouched
        _use_wal(conn)
        migrate(conn, version)
        conn.execute("PRAGMA synchronous = NORMAL")
        # a checkpoint (which syncs) every ~10,000 appends instead of every ~1,000
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
        conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
    except BaseException:
        conn.close()
        raise
    return conn, version


def _use_wal(conn: sqlite3.Connection, attempts: int = 50) -> None:
    """WAL mode, before anything else: switching needs the file to itself, and SQLite
    answers "locked" at once (without waiting) while another connection opens a new store
    at the same moment; the switch is retried for up to ~1 s."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if primary_code(exc) != sqlite3.SQLITE_BUSY or attempt == attempts - 1:
                raise
            time.sleep(0.02)


def _open_read_only(path: str) -> tuple[sqlite3.Connection, int]:
    """The file opened for reading only, and its schema version; `immutable` if even its
    WAL index cannot be made (a read-only folder): nothing else can be writing to it then."""
    failure: sqlite3.Error | None = None
    for mode in ("mode=ro", "immutable=1"):
        try:
            conn = sqlite3.connect(f"file:{quote(path)}?{mode}", uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            failure = exc
            continue
        try:
            return conn, check_readable(conn, path)
        except sqlite3.Error as exc:
            conn.close()
            failure = exc
    assert failure is not None
    raise store_failure(path, failure) from None
