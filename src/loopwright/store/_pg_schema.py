"""The Postgres store's schema: DDL per version, applied in order by `migrate`.

Everything lives in the `loopwright` schema of the database the URL names, so the store can
share a database with other applications. The tables mirror the SQLite store's; the version
is the `schema_version` row of `loopwright.store_meta`. `PG_MIGRATIONS[n]` takes a store from
version n-1 to n (version 0: no `loopwright` schema). The Postgres versions are numbered on
their own (v1 already holds gate decisions, SQLite's v2). Each version has a frozen fixture,
a SQL dump in tests/fixtures/ made by make_pg_store.py.

Opening a store never changes its schema: `loopwright store migrate --store URL` does, once,
for every process that shares the database (they are all refused until then, and all
refused after it if they are older than the schema).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopwright.errors import StoreError

if TYPE_CHECKING:
    import psycopg

SCHEMA = "loopwright"
MIGRATION_LOCK = 0x4C575254  # "LWRT": one migrator at a time (pg_advisory_xact_lock)

PG_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}",
        f"""CREATE TABLE {SCHEMA}.store_meta (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )""",
        f"""CREATE TABLE {SCHEMA}.runs (
            run_id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            request TEXT NOT NULL,
            model TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL,
            input_tokens BIGINT NOT NULL DEFAULT 0,
            output_tokens BIGINT NOT NULL DEFAULT 0,
            cost DOUBLE PRECISION NOT NULL DEFAULT 0,
            answer TEXT,
            reason TEXT,
            parent_run_id TEXT,
            options TEXT NOT NULL DEFAULT '{{}}',
            tools TEXT NOT NULL DEFAULT '[]'
        )""",
        f"CREATE INDEX runs_by_tenant ON {SCHEMA}.runs (tenant, created_at)",
        f"CREATE INDEX runs_by_created ON {SCHEMA}.runs (created_at)",
        f"""CREATE TABLE {SCHEMA}.events (
            run_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            type TEXT NOT NULL,
            ts DOUBLE PRECISION NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        )""",
        f"""CREATE TABLE {SCHEMA}.leases (
            run_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )""",
        f"""CREATE TABLE {SCHEMA}.gate_decisions (
            run_id TEXT NOT NULL,
            request_id TEXT NOT NULL,
            approved BOOLEAN NOT NULL,
            decided_by TEXT NOT NULL,
            decided_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (run_id, request_id)
        )""",
    ),
    2: (
        # the engine that executes each run; a run whose lease the Temporal engine's
        # activities held (owner `temporal-engine`) ran on Temporal before v2
        f"ALTER TABLE {SCHEMA}.runs ADD COLUMN engine TEXT NOT NULL DEFAULT 'embedded'",
        f"""UPDATE {SCHEMA}.runs SET engine = 'temporal' WHERE run_id IN
            (SELECT run_id FROM {SCHEMA}.leases WHERE owner = 'temporal-engine')""",
    ),
    3: (
        # a follow-up's turn before (conversations); no run before v3 is a follow-up
        f"ALTER TABLE {SCHEMA}.runs ADD COLUMN after_run_id TEXT",
        f"""CREATE INDEX runs_by_after ON {SCHEMA}.runs (after_run_id)
            WHERE after_run_id IS NOT NULL""",
    ),
}

PG_SCHEMA_VERSION = max(PG_MIGRATIONS)


def stored_version(conn: psycopg.Connection[tuple[object, ...]], where: str) -> int:
    """The schema version of the store in `conn`'s database (0: none yet)."""
    row = conn.execute(
        "SELECT to_regnamespace(%s) IS NOT NULL, to_regclass(%s) IS NOT NULL",
        (SCHEMA, f"{SCHEMA}.store_meta"),
    ).fetchone()
    assert row is not None
    has_schema, has_meta = row
    if not has_schema:
        return 0
    if not has_meta:
        raise StoreError(
            f"{where} has a schema named {SCHEMA!r} that is not a loopwright run store "
            f"(no {SCHEMA}.store_meta table): use another database"
        )
    found = conn.execute(
        f"SELECT value FROM {SCHEMA}.store_meta WHERE key = 'schema_version'"
    ).fetchone()
    return int(str(found[0])) if found else 0


def check_version(conn: psycopg.Connection[tuple[object, ...]], where: str) -> int:
    """The store's version if this loopwright can use it; else a StoreError naming what to do."""
    version = stored_version(conn, where)
    latest = PG_SCHEMA_VERSION
    if version == 0:
        raise StoreError(
            f"{where} has no loopwright run store yet: create it with "
            f"`loopwright store migrate --store URL`"
        )
    if version > latest:
        raise StoreError(
            f"{where} was written by a newer loopwright (store schema v{version}; this "
            f"version reads up to v{latest}): upgrade loopwright to use it"
        )
    if version < latest:
        raise StoreError(
            f"{where} has store schema v{version}; this loopwright needs v{latest}: upgrade it "
            f"with `loopwright store migrate --store URL` (once, for every process sharing it)"
        )
    return version


def migrate(conn: psycopg.Connection[tuple[object, ...]], where: str) -> int:
    """Bring the store to the latest version, one transaction per migration; the version it
    had before. Concurrent migrators wait for each other (an advisory lock)."""
    before = stored_version(conn, where)
    if before > PG_SCHEMA_VERSION:
        check_version(conn, where)
    for target in range(before + 1, PG_SCHEMA_VERSION + 1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            if stored_version(conn, where) >= target:
                continue  # another process migrated it meanwhile
            for statement in PG_MIGRATIONS[target]:
                conn.execute(statement)
            conn.execute(
                f"INSERT INTO {SCHEMA}.store_meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(target),),
            )
    return before
