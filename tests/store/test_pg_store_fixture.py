"""The frozen Postgres stores (tests/fixtures/pg_store_v1.sql, pg_store_v2.sql and
pg_store_v3.sql, SQL dumps made once each by make_pg_store.py) still load, migrate and read
the same."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from store_locations import new_database

from loopwright.events import ConfirmationRequiredEvent, IterationStartedEvent
from loopwright.runtime import task_state
from loopwright.store import GateDecision, LocalPostgres, PostgresRunStore, open_store
from loopwright.store._pg_schema import PG_MIGRATIONS, PG_SCHEMA_VERSION, SCHEMA

FIXTURES = Path(__file__).parents[1] / "fixtures"


def load_dump(url: str, path: Path) -> None:
    """Run a plain pg_dump file (its psql-only backslash lines left out)."""
    script = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("\\"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(script.encode())


@pytest.fixture
def store_v1(pg_server: LocalPostgres) -> PostgresRunStore:
    url = new_database(pg_server, migrate=False)
    load_dump(url, FIXTURES / "pg_store_v1.sql")
    store = open_store(url, migrate=True)
    assert isinstance(store, PostgresRunStore)
    return store


def test_the_v1_store_opens_with_its_runs_and_gate_decision(store_v1: PostgresRunStore) -> None:
    assert store_v1.migrated_from == 1
    runs = {r.run_id: r for r in store_v1.list_runs(tenant="acme")}
    assert {k: (r.kind, r.status) for k, r in runs.items()} == {
        "run_fixture_done": ("agent", "completed"),
        "run_fixture_cut": ("agent", "interrupted"),
        "run_fixture_task": ("task", "completed"),
        "run_fixture_gated": ("task", "interrupted"),
    }
    done = runs["run_fixture_done"]
    assert done.answer == "The echo tool said: hello" and done.tools == ("echo",)
    assert done.request == "Say hello" and done.last_seq == 8
    assert store_v1.gate_decision("run_fixture_gated", "gate_fixture0001") == GateDecision(
        "run_fixture_gated", "gate_fixture0001", True, "api:acme", 1_700_000_300.0
    )
    assert not store_v1.post_gate_decision("run_fixture_gated", "gate_fixture0001", False, "cli")


def test_the_v1_events_decode_in_order(store_v1: PostgresRunStore) -> None:
    events = store_v1.events("run_fixture_done")
    assert [e.type for e in events] == [
        "run_started", "iteration_started", "model_response", "tool_call_started",
        "tool_call", "iteration_started", "model_response", "run_finished",
    ]  # fmt: skip
    assert events[4].result == "hello"  # type: ignore[union-attr]
    assert [e.seq for e in store_v1.events("run_fixture_cut")] == [1, 2, 3, 4, 5]
    gated = store_v1.events("run_fixture_gated")
    assert isinstance(gated[-1], ConfirmationRequiredEvent)


def test_a_v1_task_run_reads_as_its_task_run_state(store_v1: PostgresRunStore) -> None:
    document = task_state(store_v1, "run_fixture_task").to_dict()
    assert document["task_name"] == "rotate" and document["status"] == "completed"
    assert document["change_log"][0]["resource_id"] == "keys.json"


def test_a_v1_store_takes_new_events(store_v1: PostgresRunStore) -> None:
    store_v1.append(
        IterationStartedEvent(
            run_id="run_fixture_cut", seq=6, ts=1.0, iteration_number=2, max_iterations=10
        )
    )
    record = store_v1.get_run("run_fixture_cut")
    assert record is not None and record.last_seq == 6


def test_migrating_the_v1_store_applies_newer_migrations_in_order(
    pg_server: LocalPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = new_database(pg_server, migrate=False)
    load_dump(url, FIXTURES / "pg_store_v1.sql")
    later, last = PG_SCHEMA_VERSION + 1, PG_SCHEMA_VERSION + 2
    monkeypatch.setitem(PG_MIGRATIONS, later, (f"ALTER TABLE {SCHEMA}.runs ADD COLUMN label TEXT",))
    monkeypatch.setitem(
        PG_MIGRATIONS, last, (f"UPDATE {SCHEMA}.runs SET label = kind || ':' || tenant",)
    )
    monkeypatch.setattr("loopwright.store._pg_schema.PG_SCHEMA_VERSION", last)
    assert open_store(url, migrate=True).migrated_from == 1
    with psycopg.connect(url) as conn:
        labels = conn.execute(f"SELECT label FROM {SCHEMA}.runs ORDER BY run_id").fetchall()
        version = conn.execute(f"SELECT value FROM {SCHEMA}.store_meta").fetchall()
    assert [row[0] for row in labels] == ["agent:acme", "agent:acme", "task:acme", "task:acme"]
    assert version == [(str(last),)]


def test_migrating_v1_marks_the_runs_the_temporal_engine_held_as_temporal(
    pg_server: LocalPostgres,
) -> None:
    url = new_database(pg_server, migrate=False)
    load_dump(url, FIXTURES / "pg_store_v1.sql")
    with psycopg.connect(url) as conn:  # a v1 Temporal run: its activities' lease owner
        conn.execute(
            f"INSERT INTO {SCHEMA}.leases VALUES ('run_fixture_cut', 'temporal-engine', 1.0)"
        )
    store = open_store(url, migrate=True)
    engines = {r.run_id: r.engine for r in store.list_runs()}
    assert engines == {
        "run_fixture_done": "embedded",
        "run_fixture_cut": "temporal",
        "run_fixture_task": "embedded",
        "run_fixture_gated": "embedded",
    }


def test_the_v2_store_holds_a_queued_temporal_run(pg_server: LocalPostgres) -> None:
    url = new_database(pg_server, migrate=False)
    load_dump(url, FIXTURES / "pg_store_v2.sql")
    store = open_store(url, migrate=True)
    assert store.migrated_from == 2
    queued = store.get_run("run_fixture_queued", tenant="acme")
    assert queued is not None
    assert (queued.status, queued.engine, queued.last_seq) == ("queued", "temporal", 0)
    assert queued.tools == ("echo",) and queued.options == {"max_iterations": 5}
    done = store.get_run("run_fixture_done")
    assert done is not None and (done.status, done.engine) == ("completed", "embedded")


def test_the_v3_store_holds_a_conversation_of_two_turns(pg_server: LocalPostgres) -> None:
    url = new_database(pg_server, migrate=False)
    load_dump(url, FIXTURES / "pg_store_v3.sql")
    store = open_store(url)
    assert store.migrated_from == 3
    second = store.get_run("run_fixture_turn2", tenant="acme")
    assert second is not None and second.after_run_id == "run_fixture_turn1"
    assert [r.run_id for r in store.follow_ups("run_fixture_turn1")] == ["run_fixture_turn2"]
    assert store.follow_ups("run_fixture_turn1", tenant="other") == []
    assert store.follow_ups("run_fixture_done") == []


def test_migrating_v2_leaves_every_run_without_a_turn_before(pg_server: LocalPostgres) -> None:
    url = new_database(pg_server, migrate=False)
    load_dump(url, FIXTURES / "pg_store_v2.sql")
    store = open_store(url, migrate=True)
    assert {r.after_run_id for r in store.list_runs()} == {None}
    assert store.follow_ups("run_fixture_done") == []
