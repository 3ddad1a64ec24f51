"""What a SQLite failure means for the user: a clear StoreError instead of a raw
`sqlite3` traceback, naming the file and what to do.

A failed write rolls its transaction back, so the run keeps a gap-free prefix of its events:
its process stops, the run shows as `interrupted`, and `loopwright runs resume` continues it
once the cause (a full disk, a damaged file) is dealt with.
"""

from __future__ import annotations

import sqlite3

from loopwright.errors import StoreError

SQLITE_PERM, SQLITE_BUSY, SQLITE_READONLY, SQLITE_IOERR = 3, 5, 8, 10
SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB = 11, 13, 14, 26
READ_ONLY_CODES = (SQLITE_PERM, SQLITE_READONLY, SQLITE_CANTOPEN)
"""Failures of a write that mean the file (or its folder) cannot be written."""
RESUME = "then continue the interrupted run with `loopwright runs resume RUN_ID`"


def primary_code(exc: sqlite3.Error) -> int:
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def store_failure(path: str, exc: sqlite3.Error) -> StoreError:
    """The StoreError for `exc`, raised while using the store file at `path`."""
    code = primary_code(exc)
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreError(f"run store {path}: {exc}")
    if code == SQLITE_FULL:
        return StoreError(
            f"run store {path}: the disk is full ({exc}); nothing was half-written: free "
            f"some space, {RESUME}"
        )
    if code in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return StoreError(
            f"run store {path} is damaged ({exc}): copy it aside and recover what can be "
            f"read with `sqlite3 {path} .recover | sqlite3 recovered.db`, then use "
            f"--store recovered.db"
        )
    if code in READ_ONLY_CODES:
        return StoreError(
            f"run store {path} cannot be written ({exc}): its runs can be listed, shown and "
            f"exported; to run or resume, make it writable or pass --store with a writable file"
        )
    if code == SQLITE_BUSY:
        return StoreError(
            f"run store {path} is busy ({exc}): another process held its write lock for "
            f"more than 10 s; try again"
        )
    if code == SQLITE_IOERR:
        return StoreError(f"run store {path}: the disk failed a read or write ({exc}); {RESUME}")
    return StoreError(f"run store {path}: {exc}")
