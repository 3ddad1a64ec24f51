"""`loopwright store migrate|copy` and the `--store postgresql://` option of the run commands."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from store_helpers import line_spec, recorded_run
from store_locations import new_database

from loopwright.cli import main
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    RunFinishedEvent,
    RunStartedEvent,
    TaskCompleteEvent,
    TaskStartEvent,
    encode_event,
)
from loopwright.store import LocalPostgres, RunRecord, SqliteRunStore, open_store


def task_run(run_id: str, *, gated: bool = False) -> list[Event]:
    events: list[Event] = [
        RunStartedEvent(
            run_id=run_id,
            seq=1,
            ts=10.0,
            kind="task",
            request="rotate",
            tenant="acme",
            model="m",
            tools=[],
            options={},
        ),
        TaskStartEvent(run_id=run_id, seq=2, ts=11.0, task_name="rotate", total_steps=1),
    ]
    if gated:
        return [
            *events,
            ConfirmationRequiredEvent(
                run_id=run_id,
                seq=3,
                ts=12.0,
                step="ok",
                request_id="g1",
                message="ok?",
                timeout_s=60.0,
            ),
        ]
    return [
        *events,
        TaskCompleteEvent(
            run_id=run_id, seq=3, ts=12.0, task_name="rotate", summary="done", status="completed"
        ),
        RunFinishedEvent(
            run_id=run_id,
            seq=4,
            ts=13.0,
            answer="done",
            status="completed",
            reason=None,
            usage={},
            cost=0.0,
            steps=0,
            partial=None,
        ),
    ]


def test_migrate_creates_the_schema_once_and_the_run_commands_use_the_url(
    pg_server: LocalPostgres, capsys: pytest.CaptureFixture[str]
) -> None:
    url = new_database(pg_server, migrate=False)
    assert main(["runs", "list", "--store", url]) == 2  # a set-up error, not a failed run
    err = capsys.readouterr().err
    assert err.startswith("loopwright: error: ") and "no loopwright run store yet" in err
    shown = url.replace(f":{pg_server.password}@", "@")  # as pasted, it reads PGPASSWORD
    assert f"create it with `loopwright store migrate --store {shown}`" in err
    assert "Traceback" not in err and pg_server.password not in err
    assert main(["store", "migrate", "--store", url]) == 0
    out = capsys.readouterr().out
    migrated = re.search(r"store schema v0 -> v([1-9][0-9]*)", out)
    assert migrated and pg_server.password not in out
    assert main(["store", "migrate", "--store", url]) == 0  # again: nothing to do
    assert f"up to date (v{migrated[1]})" in capsys.readouterr().out
    assert main(["runs", "list", "--store", url]) == 0
    assert capsys.readouterr().out.strip() == "no runs"


def test_the_environment_variable_selects_the_postgres_store(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    open_store(pg_url).append_many(task_run("t_env"))
    monkeypatch.setenv("LOOPWRIGHT_STORE", pg_url)
    assert main(["runs", "list"]) == 0
    assert "t_env" in capsys.readouterr().out


def test_copy_moves_every_run_verified_and_can_run_again(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source_path = tmp_path / "runs.db"
    source = SqliteRunStore(source_path)
    agent_events = recorded_run(line_spec(tmp_path, 2), run_id="r_agent")
    source.append_many(agent_events)
    source.append_many(task_run("t_rolled"))
    source.set_status("t_rolled", "rolled_back")
    source.append_many(task_run("t_gated", gated=True))  # its process died at the gate
    assert source.post_gate_decision("t_gated", "g1", True, "api:acme", decided_at=12.5)
    source.append_many(task_run("t_live", gated=True))
    assert source.acquire_lease("t_live", "elsewhere:1:x", 600)  # still executing

    assert main(["store", "copy", str(source_path), pg_url]) == 0
    out = capsys.readouterr().out
    assert f"copied 3 run(s), {len(agent_events) + 7} event(s)" in out
    assert "each read back the same" in out
    assert "1 run(s) still executing, not copied" in out and "t_live" in out
    target = open_store(pg_url)
    for run_id in ("r_agent", "t_rolled", "t_gated"):
        assert [encode_event(e) for e in target.events(run_id)] == [
            encode_event(e) for e in source.events(run_id)
        ]
    statuses = {r.run_id: r.status for r in target.list_runs()}
    assert statuses == {"r_agent": "completed", "t_rolled": "rolled_back", "t_gated": "interrupted"}
    decision = target.gate_decision("t_gated", "g1")
    assert decision is not None and (decision.approved, decision.decided_at) == (True, 12.5)

    assert main(["store", "copy", str(source_path), pg_url]) == 0  # again: nothing doubled
    assert "3 run(s) were already there, the same" in capsys.readouterr().out
    assert len(target.events("r_agent")) == len(agent_events)


def test_copy_refuses_a_run_that_differs_in_the_target(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source_path = tmp_path / "runs.db"
    SqliteRunStore(source_path).append_many(task_run("t1"))
    open_store(pg_url).append_many(task_run("t1", gated=True))
    assert main(["store", "copy", str(source_path), pg_url]) == 1
    err = capsys.readouterr().err
    assert "run t1 is already in postgresql://loopwright:***@" in err and "other events" in err


def test_copy_from_postgres_back_to_a_sqlite_file(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = open_store(pg_url)
    source.append_many(task_run("t1"))
    on_temporal = RunRecord(
        run_id="t2", tenant="acme", kind="task", status="queued", request="rotate", model="m",
        created_at=9.0, updated_at=9.0, last_seq=0, engine="temporal",
    )  # fmt: skip
    source.register_run(on_temporal)
    source.append_many(task_run("t2"))
    source.register_run(dataclasses.replace(on_temporal, run_id="t3"))  # still queued
    target = tmp_path / "back.db"
    assert main(["store", "copy", pg_url, str(target)]) == 0
    out = capsys.readouterr().out
    assert "copied 2 run(s), 8 event(s)" in out and "not copied" in out and "t3" in out
    record = SqliteRunStore(target).get_run("t1")
    assert record is not None and record.answer == "done" and record.tenant == "acme"
    copied = SqliteRunStore(target).get_run("t2")
    assert copied is not None and (copied.engine, copied.created_at) == ("temporal", 9.0)
