"""The SQLite store's schema: DDL per version, applied in order by `migrate`; and the
statements that read and write its rows.

`runs` holds one row per run, written when the run starts and when an event changes it
(run_finished, task_start, task_complete); `last_seq` and `updated_at` are read from the
run's newest event, so most appends are a single INSERT into `events`.

A loopwright store is marked with `PRAGMA application_id` and carries its schema version
in `PRAGMA user_version`. `MIGRATIONS[n]` takes a store from version n-1 to version n
(version 0 is an empty file). Each version has a frozen fixture in tests/fixtures.
"""

from __future__ import annotations

import sqlite3

from loopwright.errors import StoreError

APPLICATION_ID = 0x4C575254  # "LWRT"
"""Marks a SQLite file as a loopwright run store."""

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            request TEXT NOT NULL,
            model TEXT NOT NULL,
            created_at REAL NOT NULL,
            input_tokens INTEGER NOT NULL DEFAULT 0,
            output_tokens INTEGER NOT NULL DEFAULT 0,
            cost REAL NOT NULL DEFAULT 0,
            answer TEXT,
            reason TEXT,
            parent_run_id TEXT,
            options TEXT NOT NULL DEFAULT '{}',
            tools TEXT NOT NULL DEFAULT '[]'
        )""",
        "CREATE INDEX runs_by_tenant ON runs (tenant, created_at)",
        "CREATE INDEX runs_by_created ON runs (created_at)",
        """CREATE TABLE events (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            ts REAL NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID""",
        """CREATE TABLE leases (
            run_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            expires_at REAL NOT NULL
        )""",
    ),
    2: (
        # a gate's decision, posted by a process that does not run the task (a server, or
        # `loopwright task approve`) and polled by the one that does; first decision wins
        """CREATE TABLE gate_decisions (
            run_id TEXT NOT NULL,
            request_id TEXT NOT NULL,
            approved INTEGER NOT NULL,
            decided_by TEXT NOT NULL,
            decided_at REAL NOT NULL,
            PRIMARY KEY (run_id, request_id)
        ) WITHOUT ROWID""",
    ),
    3: (
        # the engine that executes each run (a run on Temporal workers is registered, as
        # `queued`, before its first event); every run before v3 ran embedded
        "ALTER TABLE runs ADD COLUMN engine TEXT NOT NULL DEFAULT 'embedded'",
    ),
    4: (
        # a follow-up's turn before (conversations); no run before v4 is a follow-up
        "ALTER TABLE runs ADD COLUMN after_run_id TEXT",
        "CREATE INDEX runs_by_after ON runs (after_run_id) WHERE after_run_id IS NOT NULL",
    ),
}

SCHEMA_VERSION = max(MIGRATIONS)

_RUN_COLUMNS = """run_id, tenant, kind, status, request, model, created_at, input_tokens,
    output_tokens, cost, answer, reason, parent_run_id, options, tools, engine, after_run_id"""
_FILLED_IN = ", ".join(
    f"{column} = excluded.{column}"
    for column in ("status", "request", "model", "input_tokens", "output_tokens", "cost",
                   "answer", "reason", "parent_run_id", "options", "tools", "after_run_id")
)  # fmt: skip
"""What `run_started` sets in a registered run's row (tenant, engine and creation time stay)."""
REGISTER_RUN = f"INSERT OR IGNORE INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * 17)})"
INSERT_RUN = f"""INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({", ".join("?" * 17)})
    ON CONFLICT (run_id) DO UPDATE SET {_FILLED_IN} WHERE runs.status = 'queued'"""
"""`run_started`: a new row, or the queued row of a registered run filled in."""
UPDATE_RUN = """UPDATE runs SET status = ?, request = ?, input_tokens = ?, output_tokens = ?,
    cost = ?, answer = ?, reason = ? WHERE run_id = ?"""
ADD_TOKENS = """UPDATE runs SET input_tokens = input_tokens + ?,
    output_tokens = output_tokens + ? WHERE run_id = ?"""
"""What replies change in their run's row: their tokens, added."""
INSERT_EVENT = "INSERT INTO events (run_id, seq, type, ts, data) VALUES (?, ?, ?, ?, ?)"
_LAST_EVENT = """(SELECT e.seq FROM events e WHERE e.run_id = r.run_id ORDER BY e.seq DESC
    LIMIT 1), (SELECT e.ts FROM events e WHERE e.run_id = r.run_id ORDER BY e.seq DESC LIMIT 1)"""
SELECT_RUN = f"""SELECT r.run_id, r.tenant, r.kind, r.status, r.request, r.model, r.created_at,
    {_LAST_EVENT}, r.input_tokens, r.output_tokens, r.cost, r.answer, r.reason,
    r.parent_run_id, r.options, r.tools, r.engine, l.expires_at, l.owner, r.after_run_id
    FROM runs r LEFT JOIN leases l ON l.run_id = r.run_id"""
LAST_SEQ = "SELECT max(seq) FROM events WHERE run_id = ?"


def select_run(version: int) -> str:
    """SELECT_RUN for a store at `version` (one opened read-only may be older than v4)."""
    sql = SELECT_RUN if version >= 4 else SELECT_RUN.replace("r.after_run_id", "NULL")
    return sql if version >= 3 else sql.replace("r.engine", "'embedded'")


def _user_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    return [str(row[0]) for row in rows]


def check_store(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of the store at `path` (0: a new, empty file), read in one
    snapshot; StoreError for a file that is not a loopwright store (another SQLite database,
    or not SQLite at all: left untouched) and for a store written by a newer loopwright."""
    latest = max(MIGRATIONS)
    try:
        conn.execute("BEGIN")  # one snapshot: another process may be creating the store now
        try:
            application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = _user_tables(conn)
        finally:
            conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path} is not a loopwright run store ({exc})") from None
    if application_id != APPLICATION_ID and (tables or version):
        raise StoreError(
            f"{path} is not a loopwright run store (a SQLite database with other tables: "
            f"{', '.join(sorted(tables)) or 'none'})"
        )
    if version > latest:
        raise StoreError(
            f"{path} was written by a newer loopwright (store schema v{version}; this "
            f"version reads up to v{latest}): upgrade loopwright to open it"
        )
    return version


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Apply every migration after `version` (each in its own transaction)."""
    for target in range(version + 1, max(MIGRATIONS) + 1):
        _apply(conn, target)


def _apply(conn: sqlite3.Connection, target: int) -> None:
    """One migration in one transaction: its DDL, then the new version number."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if current >= target:  # another process migrated it meanwhile
            conn.execute("ROLLBACK")
            return
        for statement in MIGRATIONS[target]:
            conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {target}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def check_readable(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of a store opened read-only (nothing can be migrated)."""
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if application_id != APPLICATION_ID:
        raise StoreError(f"{path} is not a loopwright run store")
    if version > max(MIGRATIONS):
        raise StoreError(
            f"{path} was written by a newer loopwright (store schema v{version}; this "
            f"version reads up to v{max(MIGRATIONS)}): upgrade loopwright to open it"
        )
    return version
