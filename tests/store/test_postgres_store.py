"""PostgresRunStore's own behaviour on a real server: bad input gets a clear error naming
what to do (and writes nothing), the URL's password never shows, a read-only role can still
list and show runs."""

from __future__ import annotations

import logging
import socket

import psycopg
import pytest
from store_locations import new_database

from loopwright.errors import StoreError
from loopwright.events import IterationStartedEvent, RunStartedEvent
from loopwright.store import LocalPostgres, PostgresRunStore, open_store, redact_url
from loopwright.store._pg_schema import PG_MIGRATIONS, PG_SCHEMA_VERSION, SCHEMA


def started(run_id: str) -> RunStartedEvent:
    return RunStartedEvent(
        run_id=run_id,
        seq=1,
        ts=1.0,
        kind="agent",
        request="r",
        model="m",
        tools=[],
        options={},
        tenant="default",
    )


def has_schema(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regnamespace(%s) IS NOT NULL", (SCHEMA,)).fetchone()
        return bool(row and row[0])


def test_the_url_is_shown_without_its_password() -> None:
    assert (
        redact_url("postgresql://app:s3cr%40t@db:5432/runs") == "postgresql://app:***@db:5432/runs"
    )
    assert redact_url("postgresql://db/runs?user=app&password=hunter2&sslmode=require") == (
        "postgresql://db/runs?user=app&password=%2A%2A%2A&sslmode=require"
    )
    assert redact_url("postgresql://app@db/runs") == "postgresql://app@db/runs"


def test_a_wrong_password_is_a_clear_error_that_does_not_show_it(
    pg_server: LocalPostgres, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "not-the-Pa55word"
    with pytest.raises(StoreError) as caught:
        open_store(pg_server.url(password=wrong))
    message = str(caught.value)
    assert "wrong user or password" in message and "PGPASSWORD" in message
    assert "loopwright:***@127.0.0.1" in message
    assert wrong not in message and wrong not in caplog.text
    assert pg_server.password not in message


def closed_port() -> int:
    """A port nothing listens on: bound by the kernel's choice, then let go."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_is_a_clear_error(pg_server: LocalPostgres) -> None:
    url = f"postgresql://loopwright:{pg_server.password}@127.0.0.1:{closed_port()}/postgres"
    with pytest.raises(
        StoreError, match=r"cannot reach the run store .*check that the server"
    ) as caught:
        PostgresRunStore(url, connect_timeout=3)
    assert pg_server.password not in str(caught.value)


def test_a_database_without_the_schema_names_the_migrate_command(pg_server: LocalPostgres) -> None:
    url = new_database(pg_server, migrate=False)
    with pytest.raises(StoreError, match=r"no loopwright run store yet.*loopwright store migrate"):
        open_store(url)
    assert not has_schema(url)  # opening never creates or changes the schema
    store = open_store(url, migrate=True)
    assert store.migrated_from == 0
    store.append(started("r1"))
    store.close()
    assert open_store(url, migrate=True).migrated_from == PG_SCHEMA_VERSION


def test_a_missing_database_says_to_create_it(pg_server: LocalPostgres) -> None:
    with pytest.raises(StoreError, match=r"database does not exist.*createdb"):
        open_store(pg_server.url("no_such_db"))


def test_a_schema_newer_than_the_code_is_refused(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            f"UPDATE {SCHEMA}.store_meta SET value = %s WHERE key = 'schema_version'",
            (str(PG_SCHEMA_VERSION + 1),),
        )
    for migrate in (False, True):
        with pytest.raises(
            StoreError, match=rf"newer loopwright .*v{PG_SCHEMA_VERSION + 1}.*upgrade"
        ):
            open_store(pg_url, migrate=migrate)


def test_an_older_schema_is_refused_until_migrated(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = PG_SCHEMA_VERSION + 1
    monkeypatch.setitem(PG_MIGRATIONS, later, (f"ALTER TABLE {SCHEMA}.runs ADD COLUMN label TEXT",))
    monkeypatch.setattr("loopwright.store._pg_schema.PG_SCHEMA_VERSION", later)
    with pytest.raises(
        StoreError, match=rf"v{PG_SCHEMA_VERSION}; this loopwright needs v{later}.*store migrate"
    ):
        open_store(pg_url)
    assert open_store(pg_url, migrate=True).migrated_from == PG_SCHEMA_VERSION
    open_store(pg_url).close()  # now it opens


def test_a_schema_of_another_application_is_not_taken_over(pg_server: LocalPostgres) -> None:
    url = new_database(pg_server, migrate=False)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {SCHEMA}")
        conn.execute(f"CREATE TABLE {SCHEMA}.customers (id int)")
    with pytest.raises(StoreError, match=r"not a loopwright run store"):
        open_store(url, migrate=True)


def test_a_read_only_role_lists_and_shows_runs_and_is_told_why_it_cannot_write(
    pg_server: LocalPostgres, pg_url: str
) -> None:
    store = open_store(pg_url)
    store.append(started("r1"))
    store.append(
        IterationStartedEvent(run_id="r1", seq=2, ts=2.0, iteration_number=1, max_iterations=5)
    )
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE ROLE reader LOGIN PASSWORD 'reader-pw-1'")
        conn.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO reader")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {SCHEMA} TO reader")
    url = pg_url.replace(f"loopwright:{pg_server.password}@", "reader:reader-pw-1@")
    reader = open_store(url)
    assert [r.run_id for r in reader.list_runs()] == ["r1"]
    assert [e.seq for e in reader.events("r1")] == [1, 2]
    with pytest.raises(
        StoreError, match=r"cannot be written by this user.*can be listed, shown"
    ) as caught:
        reader.append(
            IterationStartedEvent(run_id="r1", seq=3, ts=3.0, iteration_number=1, max_iterations=5)
        )
    assert "reader-pw-1" not in str(caught.value)
    assert [e.seq for e in store.events("r1")] == [1, 2]


def test_a_server_that_goes_away_mid_run_is_a_clear_error_and_nothing_is_half_written(
    pg_url: str,
) -> None:
    store = open_store(pg_url)
    store.append(started("r1"))
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the server drops our connections
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pytest.raises(StoreError, match=r"connection failed.*runs resume") as caught:
        store.append(
            IterationStartedEvent(run_id="r1", seq=2, ts=2.0, iteration_number=1, max_iterations=5)
        )
    assert "***" in str(caught.value)
    store.append(
        IterationStartedEvent(run_id="r1", seq=2, ts=2.0, iteration_number=1, max_iterations=5)
    )  # the pool reconnects
    assert [e.seq for e in open_store(pg_url).events("r1")] == [1, 2]
