"""Leases: a running run whose lease lapses shows as interrupted; two resumes are refused."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import line_spec, lines, recorded_run

from loopwright.agent import ExecutionResult
from loopwright.clock import MockClock
from loopwright.errors import ResumeConflict, StoreError
from loopwright.events import RunFinishedEvent, RunStartedEvent
from loopwright.runtime import Runtime
from loopwright.runtime._lease import DEFAULT_LEASE_TTL_S, LeaseKeeper
from loopwright.store import SqliteRunStore


def started(run_id: str) -> RunStartedEvent:
    return RunStartedEvent(
        run_id=run_id, seq=1, ts=1.0, kind="agent", request="r", model="m", tools=[],
        options={}, tenant="default",
    )  # fmt: skip


async def test_a_run_whose_lease_lapses_is_reported_interrupted(tmp_path: Path) -> None:
    clock = MockClock()
    store = SqliteRunStore(tmp_path / "runs.db", clock=clock)
    runtime = Runtime(store)
    await runtime.publish(started("r1"))
    record = store.get_run("r1")
    assert record is not None and record.status == "running"
    lease = store.lease("r1")
    assert lease is not None and lease.owner == runtime.leases.owner

    clock.advance(DEFAULT_LEASE_TTL_S + 1)  # the process stopped renewing it
    record = store.get_run("r1")
    assert record is not None and record.status == "interrupted"
    assert [r.run_id for r in store.list_runs(status="interrupted")] == ["r1"]
    assert store.list_runs(status="running") == []

    assert runtime.leases.beat() == []  # the heartbeat renews it
    record = store.get_run("r1")
    assert record is not None and record.status == "running"

    await runtime.publish(
        RunFinishedEvent(
            run_id="r1",
            seq=2,
            ts=2.0,
            status="completed",
            answer="ok",
            reason=None,
            usage={},
            cost=0.0,
            steps=0,
            partial=None,
        )
    )
    assert store.lease("r1") is None and runtime.leases.held == set()
    record = store.get_run("r1")
    assert record is not None and record.status == "completed"
    runtime.leases.close()


def test_a_run_appended_without_any_lease_is_interrupted(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append(started("r1"))
    record = store.get_run("r1")
    assert record is not None and record.status == "interrupted"


def test_a_live_lease_is_refused_to_others_until_it_lapses(tmp_path: Path) -> None:
    clock = MockClock()
    store = SqliteRunStore(tmp_path / "runs.db", clock=clock)
    first = LeaseKeeper(store, owner="host-a:1:x", ttl_s=10)
    second = LeaseKeeper(store, owner="host-b:2:y", ttl_s=10)
    first.hold("r1")
    with pytest.raises(ResumeConflict, match="being executed by host-a:1:x"):
        second.hold("r1")
    clock.advance(11)
    second.hold("r1")
    assert second.beat() == []
    assert first.beat() == ["r1"]  # the first owner learns it lost the run
    first.close()
    second.close()


@pytest.mark.subprocess
def test_the_lease_of_a_dead_process_on_this_host_is_taken_over(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    dead_owner = f"{socket.gethostname()}:{proc.stdout.strip()}:abc"
    live_owner = f"{socket.gethostname()}:{os.getpid()}:def"
    store = SqliteRunStore(tmp_path / "runs.db")
    assert store.acquire_lease("dead", dead_owner, 3600)
    assert store.acquire_lease("live", live_owner, 3600)
    keeper = LeaseKeeper(store)
    keeper.hold("dead")
    lease = store.lease("dead")
    assert lease is not None and lease.owner == keeper.owner
    with pytest.raises(ResumeConflict):
        keeper.hold("live")
    keeper.close()


def test_two_resumes_at_once_one_is_refused(tmp_path: Path) -> None:
    spec = line_spec(tmp_path, 3, tool="append_line")
    events = recorded_run(spec, run_id="r_two")
    (tmp_path / "lines.txt").unlink()
    store_path = tmp_path / "runs.db"
    SqliteRunStore(store_path).append_many(
        events[:3]
    )  # crashed after the first reply, before its tool call

    first, second = Runtime(SqliteRunStore(store_path)), Runtime(SqliteRunStore(store_path))

    async def both() -> list[ExecutionResult | BaseException]:
        outcomes = await asyncio.gather(
            resumed(first, "r_two"),
            resumed(second, "r_two"),
            return_exceptions=True,
        )
        return list(outcomes)

    async def resumed(runtime: Runtime, run_id: str) -> ExecutionResult:
        result: ExecutionResult = await (await runtime.resume(run_id)).wait()
        return result

    outcomes = asyncio.run(both())
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    results = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], ResumeConflict), outcomes
    assert "r_two is being executed by" in str(errors[0])
    assert len(results) == 1 and results[0].success
    assert lines(tmp_path / "lines.txt") == ["line 1", "line 2", "line 3"]


async def test_a_run_that_cannot_be_stored_leaves_no_lease(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append(started("r1"))
    runtime = Runtime(store)
    with pytest.raises(StoreError, match="run r1 is already in"):
        await runtime.publish(started("r1"))  # the run id is taken
    assert runtime.leases.held == set() and store.lease("r1") is None
