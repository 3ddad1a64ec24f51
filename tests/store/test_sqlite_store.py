"""SqliteRunStore on a real SQLite file: appends, run rows, tenants, errors, versions."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from store_helpers import line_spec, recorded_run

from loopwright.errors import StoreError
from loopwright.events import (
    IterationStartedEvent,
    RunFinishedEvent,
    RunStartedEvent,
    encode_event,
    event_to_dict,
)
from loopwright.runtime import RunSpec
from loopwright.store import SqliteRunStore, open_store
from loopwright.store._schema import SCHEMA_VERSION


def started(run_id: str, tenant: str = "default", ts: float = 1.0) -> RunStartedEvent:
    return RunStartedEvent(
        run_id=run_id, seq=1, ts=ts, kind="agent", request=f"do {run_id}", model="m",
        tools=[], options={}, tenant=tenant,
    )  # fmt: skip


def finished(run_id: str, seq: int, status: str = "completed") -> RunFinishedEvent:
    return RunFinishedEvent(
        run_id=run_id,
        seq=seq,
        ts=9.0,
        status=status,  # type: ignore[arg-type]
        answer="done",
        usage={"input_tokens": 5, "output_tokens": 7},
        cost=0.25,
        reason=None,
        steps=1,
        partial=None,
    )


def test_a_run_is_stored_event_by_event_and_survives_reopening(tmp_path: Path) -> None:
    events = recorded_run(line_spec(tmp_path, 2))
    path = tmp_path / "deep" / "folder" / "runs.db"
    store = open_store(path)
    for event in events:
        store.append(event)
    store.close()

    reopened = open_store(path)
    assert [event_to_dict(e) for e in reopened.events("run_test")] == [
        event_to_dict(e) for e in events
    ]
    assert [e.seq for e in reopened.events("run_test", after=3)] == list(range(4, len(events) + 1))
    record = reopened.get_run("run_test")
    assert record is not None
    assert record.status == "completed" and record.answer == "2 lines"
    assert record.last_seq == len(events) and record.kind == "agent"
    assert record.tools == ("append_line",)
    first = reopened.events("run_test")[0]  # with the spec the run was started from
    assert isinstance(first, RunStartedEvent) and first.spec is not None
    assert RunSpec.from_dict(first.spec).request == "write 2 lines"


def test_the_file_is_in_wal_mode_with_the_schema_version(tmp_path: Path) -> None:
    store = open_store(tmp_path / "runs.db")
    store.close()
    conn = sqlite3.connect(tmp_path / "runs.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_the_env_variable_chooses_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPWRIGHT_STORE", str(tmp_path / "env" / "runs.db"))
    store = open_store()
    assert Path(store.path) == tmp_path / "env" / "runs.db"
    assert (tmp_path / "env" / "runs.db").exists()


def test_a_gap_in_seq_and_an_unknown_run_are_refused(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append(started("r1"))
    with pytest.raises(StoreError, match="seq 3 does not follow 1"):
        store.append(
            IterationStartedEvent(run_id="r1", seq=3, ts=2.0, iteration_number=1, max_iterations=5)
        )
    with pytest.raises(StoreError, match="unknown run nope"):
        store.append(
            IterationStartedEvent(
                run_id="nope", seq=2, ts=2.0, iteration_number=1, max_iterations=5
            )
        )
    with pytest.raises(StoreError, match=r"run r1 is already in .*: it started before"):
        store.append(started("r1"))
    store.append(
        IterationStartedEvent(run_id="r1", seq=2, ts=2.0, iteration_number=1, max_iterations=5)
    )
    assert [e.seq for e in store.events("r1")] == [1, 2]


def test_append_many_is_one_transaction(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    with pytest.raises(StoreError):
        store.append_many(
            [
                started("r1"),
                IterationStartedEvent(
                    run_id="r1", seq=2, ts=2.0, iteration_number=1, max_iterations=5
                ),
                started("r1"),
            ]
        )
    assert store.get_run("r1") is None and store.events("r1") == []


def _iteration(run_id: str, seq: int) -> IterationStartedEvent:
    return IterationStartedEvent(
        run_id=run_id, seq=seq, ts=2.0, iteration_number=seq - 1, max_iterations=9
    )


def test_append_many_keeps_two_interleaved_runs_and_their_rows(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many([
        started("a"), _iteration("a", 2), started("b"), _iteration("a", 3),
        _iteration("b", 2), _iteration("b", 3), finished("a", 4), _iteration("b", 4),
    ])  # fmt: skip
    assert [e.seq for e in store.events("a")] == [1, 2, 3, 4]
    assert [e.seq for e in store.events("b")] == [1, 2, 3, 4]
    record = store.get_run("a")
    assert record is not None and record.status == "completed" and record.answer == "done"


def test_a_gap_inside_a_batch_stores_none_of_it(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append(started("r1"))
    with pytest.raises(StoreError, match="seq 4 does not follow 2"):
        store.append_many([_iteration("r1", 2), _iteration("r1", 4), _iteration("r1", 5)])
    assert [e.seq for e in store.events("r1")] == [1]
    store.append_many([_iteration("r1", 2), _iteration("r1", 3)])  # the cache was not fooled
    assert [e.seq for e in store.events("r1")] == [1, 2, 3]


def test_runs_are_listed_by_tenant_and_status(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append_many([started("a1", "acme", ts=1.0), finished("a1", 2)])
    store.append_many([started("a2", "acme", ts=2.0), finished("a2", 2, "stopped")])
    store.append(started("b1", "beta", ts=3.0))
    assert [r.run_id for r in store.list_runs()] == ["b1", "a2", "a1"]
    assert [r.run_id for r in store.list_runs(tenant="acme")] == ["a2", "a1"]
    assert [r.run_id for r in store.list_runs(status="stopped")] == ["a2"]
    assert [r.run_id for r in store.list_runs(limit=1)] == ["b1"]
    assert store.get_run("a1", tenant="beta") is None
    row = store.get_run("a1", tenant="acme")
    assert row is not None and (row.input_tokens, row.output_tokens, row.cost) == (5, 7, 0.25)
    store.set_status("a1", "rolled_back")
    assert [r.run_id for r in store.list_runs(status="rolled_back")] == ["a1"]
    with pytest.raises(StoreError, match="no run 'zz'"):
        store.set_status("zz", "failed")


def test_a_file_that_is_not_a_store_is_a_clear_error(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("just some notes, not a database at all" * 100)
    with pytest.raises(StoreError, match="is not a loopwright run store"):
        SqliteRunStore(text)
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE customers (id INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="other tables: customers"):
        SqliteRunStore(other)


def test_a_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    open_store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=f"newer loopwright .*v{SCHEMA_VERSION + 1}"):
        open_store(path)


def test_stored_events_are_their_wire_form_byte_for_byte(tmp_path: Path) -> None:
    events = recorded_run(line_spec(tmp_path, 1))
    store = SqliteRunStore(tmp_path / "runs.db")
    for event in events:
        store.append(event)
    conn = sqlite3.connect(tmp_path / "runs.db")
    rows = conn.execute("SELECT data FROM events ORDER BY seq").fetchall()
    assert [row[0] for row in rows] == [encode_event(e) for e in events]


def test_a_new_store_opened_by_several_at_once_is_refused_by_none(tmp_path: Path) -> None:
    """Four openers of a file that does not exist yet (a server and a worker starting
    together): each gets the store; none reads another's half-made schema as a foreign
    database or gives up on the journal-mode switch."""
    refused: list[str] = []

    def open_it(path: Path) -> None:
        try:
            SqliteRunStore(path).close()
        except StoreError as exc:
            refused.append(str(exc))

    for round_ in range(40):
        path = tmp_path / f"runs_{round_}.db"
        openers = [threading.Thread(target=open_it, args=(path,)) for _ in range(4)]
        for opener in openers:
            opener.start()
        for opener in openers:
            opener.join()
    assert refused == []
