"""The frozen stores (tests/fixtures/store_v1.db to store_v4.db) still open and read the
same."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from loopwright.events import ConfirmationRequiredEvent, IterationStartedEvent
from loopwright.runtime import task_state
from loopwright.store import GateDecision, SqliteRunStore
from loopwright.store._rows import record_of
from loopwright.store._schema import MIGRATIONS, SCHEMA_VERSION, select_run

FIXTURE = Path(__file__).parents[1] / "fixtures" / "store_v1.db"
FIXTURE_V2 = Path(__file__).parents[1] / "fixtures" / "store_v2.db"
FIXTURE_V3 = Path(__file__).parents[1] / "fixtures" / "store_v3.db"
FIXTURE_V4 = Path(__file__).parents[1] / "fixtures" / "store_v4.db"


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


def test_a_v1_task_run_reads_as_its_task_run_state(store: SqliteRunStore) -> None:
    document = task_state(store, "run_fixture_task").to_dict()
    assert document["task_id"] == "run_fixture_task" and document["task_name"] == "rotate"
    assert document["status"] == "completed" and document["client_name"] == "acme"
    assert document["steps_completed"][0]["step_name"] == "write"
    assert document["change_log"][0]["resource_id"] == "keys.json"
    assert document["current_step"] is None and len(store.events("run_fixture_task")) == 8


def test_a_v1_store_takes_new_events(store: SqliteRunStore) -> None:
    store.append(
        IterationStartedEvent(
            run_id="run_fixture_cut", seq=6, ts=1.0, iteration_number=2, max_iterations=5
        )
    )
    record = store.get_run("run_fixture_cut")
    assert record is not None and record.last_seq == 6


def test_a_v1_store_is_migrated_to_take_gate_decisions(store: SqliteRunStore) -> None:
    assert store.gate_decision("run_fixture_task", "gate_x") is None
    assert store.post_gate_decision("run_fixture_task", "gate_x", False, "cli")
    decision = store.gate_decision("run_fixture_task", "gate_x")
    assert decision is not None and (decision.approved, decision.decided_by) == (False, "cli")
    store.close()
    conn = sqlite3.connect(store.path)
    assert SCHEMA_VERSION >= 2
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_opening_an_old_store_applies_the_newer_migrations_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "store_v1.db"
    shutil.copy(FIXTURE, copy)
    later, last = SCHEMA_VERSION + 1, SCHEMA_VERSION + 2
    monkeypatch.setitem(MIGRATIONS, later, ("ALTER TABLE runs ADD COLUMN label TEXT",))
    monkeypatch.setitem(MIGRATIONS, last, ("UPDATE runs SET label = kind || ':' || tenant",))
    store = SqliteRunStore(copy)
    assert store.migrated_from == 1
    store.close()
    conn = sqlite3.connect(copy)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == last
    labels = conn.execute("SELECT label FROM runs ORDER BY run_id").fetchall()
    assert [row[0] for row in labels] == ["agent:acme", "agent:acme", "task:acme"]
    assert conn.execute("SELECT count(*) FROM gate_decisions").fetchone()[0] == 0
    assert SqliteRunStore(copy).migrated_from == last  # nothing left to apply


@pytest.fixture
def store_v2(tmp_path: Path) -> SqliteRunStore:
    copy = tmp_path / "store_v2.db"
    shutil.copy(FIXTURE_V2, copy)
    return SqliteRunStore(copy)


def test_the_v2_store_opens_with_its_runs_and_gate_decision(store_v2: SqliteRunStore) -> None:
    assert store_v2.migrated_from == 2
    runs = {r.run_id: r.status for r in store_v2.list_runs(tenant="acme")}
    assert runs == {
        "run_fixture_done": "completed",
        "run_fixture_cut": "interrupted",
        "run_fixture_task": "completed",
        "run_fixture_gated": "interrupted",
    }
    gated = store_v2.events("run_fixture_gated")
    assert isinstance(gated[-1], ConfirmationRequiredEvent)
    assert gated[-1].request_id == "gate_fixture0001"
    assert store_v2.gate_decision("run_fixture_gated", "gate_fixture0001") == GateDecision(
        "run_fixture_gated", "gate_fixture0001", True, "api:acme", 1_700_000_300.0
    )


def test_a_v2_gate_keeps_its_first_decision(store_v2: SqliteRunStore) -> None:
    assert not store_v2.post_gate_decision("run_fixture_gated", "gate_fixture0001", False, "cli")
    decision = store_v2.gate_decision("run_fixture_gated", "gate_fixture0001")
    assert decision is not None and decision.approved and decision.decided_by == "api:acme"


def test_the_v3_store_holds_a_queued_temporal_run(tmp_path: Path) -> None:
    copy = tmp_path / "store_v3.db"
    shutil.copy(FIXTURE_V3, copy)
    store = SqliteRunStore(copy)
    assert store.migrated_from == 3
    queued = store.get_run("run_fixture_queued", tenant="acme")
    assert queued is not None
    assert (queued.status, queued.engine, queued.last_seq) == ("queued", "temporal", 0)
    assert queued.created_at == queued.updated_at == 1_700_000_400.0
    assert [r.engine for r in store.list_runs() if r.run_id != "run_fixture_queued"] == [
        "embedded"
    ] * 4


def test_an_older_store_that_cannot_be_migrated_reads_every_run_as_embedded() -> None:
    """What a v2 store opened read-only (never migrated) is read with."""
    conn = sqlite3.connect(f"file:{FIXTURE_V2}?mode=ro", uri=True)
    rows = conn.execute(select_run(2)).fetchall()
    conn.close()
    assert len(rows) == 4 and {record_of(row, now=None).engine for row in rows} == {"embedded"}


def test_the_v4_store_holds_a_conversation_of_two_turns(tmp_path: Path) -> None:
    copy = tmp_path / "store_v4.db"
    shutil.copy(FIXTURE_V4, copy)
    store = SqliteRunStore(copy)
    assert store.migrated_from == 4
    second = store.get_run("run_fixture_turn2", tenant="acme")
    assert second is not None and second.after_run_id == "run_fixture_turn1"
    assert second.answer == "In French: bonjour"
    assert [r.run_id for r in store.follow_ups("run_fixture_turn1")] == ["run_fixture_turn2"]
    assert store.follow_ups("run_fixture_turn1", tenant="other") == []
    assert store.follow_ups("run_fixture_turn2") == []


def test_a_v3_store_is_migrated_with_no_run_following_another(tmp_path: Path) -> None:
    copy = tmp_path / "store_v3.db"
    shutil.copy(FIXTURE_V3, copy)
    store = SqliteRunStore(copy)
    assert {r.after_run_id for r in store.list_runs()} == {None}
    assert store.follow_ups("run_fixture_done") == []


def test_an_older_store_read_only_has_no_follow_ups() -> None:
    """What a v3 store opened read-only (never migrated) is read with."""
    conn = sqlite3.connect(f"file:{FIXTURE_V3}?mode=ro", uri=True)
    rows = conn.execute(select_run(3)).fetchall()
    conn.close()
    assert len(rows) == 5 and {record_of(row, now=None).after_run_id for row in rows} == {None}
