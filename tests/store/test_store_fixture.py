"""The frozen v1 store (tests/fixtures/store_v1.db) still opens and reads the same."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from loopwright.events import IterationStarted
from loopwright.runtime import export_run
from loopwright.store import SqliteRunStore
from loopwright.store._schema import MIGRATIONS

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_v1.db"


@pytest.fixture
def store(tmp_path: Path) -> SqliteRunStore:
    copy = tmp_path / "store_v1.db"  # opening a store may write to it: never the original
    shutil.copy(FIXTURE, copy)
    return SqliteRunStore(copy)


def test_the_v1_store_opens_with_its_runs(store: SqliteRunStore) -> None:
    assert store.migrated_from == 1
    runs = {r.run_id: r for r in store.list_runs(tenant="acme")}
    assert {k: (r.kind, r.status) for k, r in runs.items()} == {
        "run_fixture_done": ("agent", "completed"),
        "run_fixture_cut": ("agent", "interrupted"),
        "run_fixture_task": ("task", "completed"),
    }
    done = runs["run_fixture_done"]
    assert done.answer == "The echo tool said: hello" and done.tools == ("echo",)
    assert done.request == "Say hello" and done.last_seq == 8


def test_the_v1_events_decode_in_order(store: SqliteRunStore) -> None:
    events = store.events("run_fixture_done")
    assert [e.type for e in events] == [
        "run_started",
        "iteration_started",
        "model_response",
        "tool_call_started",
        "tool_call",
        "iteration_started",
        "model_response",
        "run_finished",
    ]
    assert [e.seq for e in events] == list(range(1, 9))
    assert events[4].result == "hello"  # type: ignore[union-attr]
    assert [e.seq for e in store.events("run_fixture_cut")] == [1, 2, 3, 4, 5]


def test_a_v1_task_run_exports_in_the_task_run_state_shape(store: SqliteRunStore) -> None:
    document = export_run(store, "run_fixture_task")
    assert document["task_id"] == "run_fixture_task" and document["task_name"] == "rotate"
    assert document["status"] == "completed" and document["client_name"] == "acme"
    assert document["steps_completed"][0]["step_name"] == "write"
    assert document["change_log"][0]["resource_id"] == "keys.json"
    assert document["current_step"] is None and len(document["events"]) == 8


def test_a_v1_store_takes_new_events(store: SqliteRunStore) -> None:
    store.append(IterationStarted(run_id="run_fixture_cut", seq=6, ts=1.0, iteration=2))
    record = store.get_run("run_fixture_cut")
    assert record is not None and record.last_seq == 6


def test_opening_an_old_store_applies_the_newer_migrations_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "store_v1.db"
    shutil.copy(FIXTURE, copy)
    monkeypatch.setitem(MIGRATIONS, 2, ("ALTER TABLE runs ADD COLUMN label TEXT",))
    monkeypatch.setitem(MIGRATIONS, 3, ("UPDATE runs SET label = kind || ':' || tenant",))
    store = SqliteRunStore(copy)
    assert store.migrated_from == 1
    store.close()
    conn = sqlite3.connect(copy)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    labels = conn.execute("SELECT label FROM runs ORDER BY run_id").fetchall()
    assert [row[0] for row in labels] == ["agent:acme", "agent:acme", "task:acme"]
    assert SqliteRunStore(copy).migrated_from == 3  # nothing left to apply
