"""One conformance suite for every persistent store: each test runs on SQLite and on
PostgreSQL (a real server the suite starts), so the two cannot drift apart."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from store_helpers import line_spec, lines, recorded_run
from store_locations import Spot

from loopwright.cli import main
from loopwright.clock import MockClock
from loopwright.errors import ResumeConflict, RunNotFound, StoreError
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    IterationStartedEvent,
    ModelResponseEvent,
    RunFinishedEvent,
    RunStartedEvent,
    TaskCompleteEvent,
    TaskStartEvent,
    encode_event,
)
from loopwright.runtime import RunSpec, Runtime
from loopwright.runtime._lease import LeaseKeeper
from loopwright.store import RunRecord, RunStore
from loopwright.store._tail import tail_events
from loopwright.testing import InMemoryRunStore


def started(run_id: str, tenant: str = "default", ts: float = 1.0) -> RunStartedEvent:
    return RunStartedEvent(
        run_id=run_id,
        seq=1,
        ts=ts,
        request=f"do {run_id}",
        tenant=tenant,
        kind="agent",
        model="m",
        tools=[],
        options={},
    )


def step(run_id: str, seq: int, iteration: int = 0) -> IterationStartedEvent:
    return IterationStartedEvent(
        run_id=run_id,
        seq=seq,
        ts=float(seq),
        iteration_number=iteration,
        max_iterations=10,
    )


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
        steps=0,
        partial=None,
    )


def test_a_run_is_stored_event_by_event_and_read_back_in_ranges(spot: Spot, tmp_path: Path) -> None:
    events = recorded_run(line_spec(tmp_path, 2))
    store = spot.open()
    for event in events:
        store.append(event)
    store.close()
    other = spot.open()  # another connection sees the same, byte for byte
    assert [encode_event(e) for e in other.events("run_test")] == [encode_event(e) for e in events]
    assert [e.seq for e in other.events("run_test", after=3)] == list(range(4, len(events) + 1))
    assert other.events("run_test", after=len(events)) == []
    assert other.events("nope") == []
    record = other.get_run("run_test")
    assert record is not None and record.status == "completed" and record.answer == "2 lines"
    assert record.last_seq == len(events) and record.updated_at == events[-1].ts
    assert record.kind == "agent" and record.tools == ("append_line",)
    assert record.options == events[0].options and record.options  # type: ignore[union-attr]


def test_find_run_gives_the_run_or_says_which_store_lacks_it(spot: Spot) -> None:
    store = spot.open()
    store.append(started("r1", tenant="acme"))
    assert store.find_run("r1").run_id == store.find_run("r1", tenant="acme").run_id == "r1"
    for run_id, tenant in (("r9", None), ("r1", "globex")):  # not there; another tenant's
        with pytest.raises(RunNotFound) as missing:
            store.find_run(run_id, tenant=tenant)
        assert missing.value.run_id == run_id and f"no run {run_id!r} in " in str(missing.value)
        assert str(missing.value).endswith(store.path) and "password" not in str(missing.value)
    with pytest.raises(RunNotFound, match=r"^no run 'r9'$"):  # in memory: no place to name
        InMemoryRunStore().find_run("r9")


def test_a_gap_a_duplicate_and_an_unknown_run_are_refused(spot: Spot) -> None:
    store = spot.open()
    store.append(started("r1"))
    with pytest.raises(StoreError, match=r"seq 3 does not follow 1"):
        store.append(step("r1", 3))
    with pytest.raises(StoreError, match=r"unknown run nope"):
        store.append(step("nope", 2))
    with pytest.raises(StoreError, match=r"run r1 is already in .*: it started before"):
        store.append(started("r1"))
    store.append(step("r1", 2))
    with pytest.raises(StoreError, match=r"(?i)unique|does not follow"):
        spot.open().append(step("r1", 2))  # another writer with the same seq
    assert [e.seq for e in store.events("r1")] == [1, 2]


def test_a_registered_run_is_listed_queued_then_started_with_its_engine(spot: Spot) -> None:
    store = spot.open()
    queued = RunRecord(
        run_id="r1", tenant="acme", kind="agent", status="running", request="do r1",
        model="scripted:x", created_at=0.5, updated_at=0.5, last_seq=0, engine="temporal",
    )  # fmt: skip
    store.register_run(queued)
    listed = store.list_runs(status="queued")
    assert [(r.run_id, r.status, r.engine, r.last_seq) for r in listed] == [
        ("r1", "queued", "temporal", 0)
    ]
    assert store.list_runs(status="running") == [] and store.events("r1") == []
    with pytest.raises(StoreError, match="run r1 is already in"):
        spot.open().register_run(queued)
    store.append(started("r1", tenant="acme", ts=2.0))
    assert store.acquire_lease("r1", "worker", 60.0)
    record = store.get_run("r1", tenant="acme")
    assert record is not None and (record.status, record.engine) == ("running", "temporal")
    assert (record.created_at, record.model, record.last_seq) == (0.5, "m", 1)
    store.append(started("r2"))
    plain = store.get_run("r2")
    assert plain is not None and plain.engine == "embedded"
    with pytest.raises(StoreError, match="run r2 is already in"):
        store.register_run(dataclasses.replace(queued, run_id="r2"))


def test_append_many_is_one_transaction(spot: Spot) -> None:
    store = spot.open()
    with pytest.raises(StoreError):
        store.append_many([started("r1"), step("r1", 2), started("r1")])
    assert store.get_run("r1") is None and store.events("r1") == []
    store.append(started("r2"))
    with pytest.raises(StoreError, match=r"does not follow"):
        store.append_many([step("r2", 2), finished("r2", 4)])
    record = store.get_run("r2")
    assert record is not None and record.last_seq == 1 and record.answer is None
    store.append_many([step("r2", 2), finished("r2", 3)])  # the store is still usable
    record = store.get_run("r2")
    assert record is not None and record.last_seq == 3 and record.answer == "done"


def test_row_events_in_one_batch_update_the_run(spot: Spot) -> None:
    store = spot.open()
    kwargs = {
        "run_id": "t1", "kind": "task", "request": "", "tenant": "acme", "model": "",
        "tools": [], "options": {},
    }  # fmt: skip
    store.append_many(
        [
            RunStartedEvent(seq=1, ts=1.0, **kwargs),  # type: ignore[arg-type]
            TaskStartEvent(run_id="t1", seq=2, ts=2.0, task_name="rotate", total_steps=1),
            TaskCompleteEvent(
                run_id="t1", seq=3, ts=3.0, task_name="rotate", summary="2 keys", status="completed"
            ),
        ]
    )
    record = spot.open().get_run("t1")
    assert record is not None
    assert (record.request, record.answer, record.last_seq) == ("rotate", "2 keys", 3)


def reply(run_id: str, seq: int, tokens_in: int, tokens_out: int) -> ModelResponseEvent:
    usage = {"input_tokens": tokens_in, "output_tokens": tokens_out}
    return ModelResponseEvent(
        run_id=run_id, seq=seq, ts=float(seq), iteration_number=1,
        response={"text": "hi", "tool_calls": [], "usage": usage, "model": "m"},
        request_digest="d", thought=None, actions=[], final_answer=None, duration_ms=1.0,
        ended="stop",
    )  # fmt: skip


def tokens(store: RunStore, run_id: str) -> tuple[int, int]:
    record = store.get_run(run_id)
    assert record is not None
    return record.input_tokens, record.output_tokens


def test_a_live_run_row_adds_the_tokens_of_each_reply(spot: Spot) -> None:
    """A running run's row holds the tokens of its replies so far, whether they are stored
    in one batch, in several, or by a handle that did not store the events before them;
    `run_finished` then gives the run's own totals."""
    store = spot.open()
    store.append_many([started("r1"), reply("r1", 2, 10, 5), step("r1", 3), reply("r1", 4, 20, 1)])
    assert tokens(store, "r1") == (30, 6)
    store.append_many([reply("r1", 5, 1, 1)])
    other = spot.open()
    other.append_many([reply("r1", 6, 2, 2), step("r1", 7)])  # its first events of the run
    assert tokens(store, "r1") == tokens(other, "r1") == (33, 9)
    store.append(reply("r1", 8, 4, 4))  # this handle's last seq is behind: read from the file
    assert tokens(other, "r1") == (37, 13)
    store.append_many([reply("r1", 9, 100, 100), finished("r1", 10)])
    assert tokens(other, "r1") == (5, 7)


def test_runs_are_listed_by_tenant_and_status(spot: Spot) -> None:
    clock = MockClock()
    store = spot.open(clock)
    store.append_many([started("a1", "acme", ts=1.0), finished("a1", 2)])
    store.append_many([started("a2", "acme", ts=2.0), finished("a2", 2, "stopped")])
    store.append(started("b1", "beta", ts=3.0))
    assert store.acquire_lease("b1", "someone-else:1:x", 60)
    store.append(started("b2", "beta", ts=4.0))  # no lease: interrupted
    assert [r.run_id for r in store.list_runs()] == ["b2", "b1", "a2", "a1"]
    assert [r.run_id for r in store.list_runs(tenant="acme")] == ["a2", "a1"]
    assert [r.run_id for r in store.list_runs(status="stopped")] == ["a2"]
    assert [r.run_id for r in store.list_runs(status="running")] == ["b1"]
    assert [r.run_id for r in store.list_runs(status="interrupted")] == ["b2"]
    assert [r.run_id for r in store.list_runs(limit=1)] == ["b2"]
    assert store.get_run("a1", tenant="beta") is None
    row = store.get_run("a1", tenant="acme")
    assert row is not None and (row.input_tokens, row.output_tokens, row.cost) == (5, 7, 0.25)
    store.set_status("a1", "rolled_back")
    assert [r.run_id for r in spot.open(clock).list_runs(status="rolled_back")] == ["a1"]
    with pytest.raises(StoreError, match=r"no run 'zz'"):
        store.set_status("zz", "failed")


def test_the_turns_after_a_run_are_found_by_its_id(spot: Spot) -> None:
    store = spot.open()
    store.append(started("run_one", ts=1.0))
    for run_id, ts, tenant in (("run_three", 3.0, "default"), ("run_two", 2.0, "default"),
                               ("run_other", 4.0, "acme")):  # fmt: skip
        follow_up = dataclasses.replace(started(run_id, tenant, ts), after_run_id="run_one")
        store.append(follow_up)
    found = store.get_run("run_two")
    assert found is not None and found.after_run_id == "run_one"
    assert [r.run_id for r in store.follow_ups("run_one")] == ["run_two", "run_three", "run_other"]
    assert [r.run_id for r in store.follow_ups("run_one", tenant="acme")] == ["run_other"]
    assert store.follow_ups("run_two") == [] and store.follow_ups("run_none") == []
    first = store.get_run("run_one")
    assert first is not None and first.after_run_id is None


def test_runs_are_found_by_a_prefix_of_their_id(spot: Spot) -> None:
    store = spot.open()
    for run_id, tenant in [("run_ab12", "acme"), ("run_ab34", "beta"), ("run_c_%", "acme")]:
        store.append(started(run_id, tenant))
    assert store.run_ids_starting("run_ab") == ["run_ab12", "run_ab34"]
    assert store.run_ids_starting("run_ab", limit=1) == ["run_ab12"]
    assert store.run_ids_starting("run_ab", tenant="beta") == ["run_ab34"]
    assert store.run_ids_starting("run_ab12") == ["run_ab12"]
    assert store.run_ids_starting("run_c_") == ["run_c_%"]  # no wildcards: plain text
    assert store.run_ids_starting("run_%") == [] and store.run_ids_starting("run_x") == []
    assert store.run_ids_starting("") == ["run_ab12", "run_ab34", "run_c_%"]


WRITERS, PER_WRITER = 4, 15


def _race(spot: Spot, writer: int, barrier: threading.Barrier, conflicts: list[int]) -> None:
    """Append PER_WRITER events to r1, each at the next free seq, retrying when another
    writer took it first."""
    store = spot.open()
    barrier.wait()
    for k in range(PER_WRITER):
        while True:
            record = store.get_run("r1")
            assert record is not None
            try:
                store.append(step("r1", record.last_seq + 1, iteration=writer * 1000 + k))
                break
            except StoreError:
                conflicts[writer] += 1
    store.close()


def test_concurrent_appenders_keep_each_run_gap_free(spot: Spot) -> None:
    spot.open().append(started("r1"))
    barrier = threading.Barrier(WRITERS)
    conflicts = [0] * WRITERS
    threads = [
        threading.Thread(target=_race, args=(spot, w, barrier, conflicts)) for w in range(WRITERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    events = spot.open().events("r1")
    assert [e.seq for e in events] == list(range(1, 2 + WRITERS * PER_WRITER))
    iterations = [e.iteration_number for e in events[1:]]  # type: ignore[union-attr]
    assert sorted(iterations) == sorted(
        w * 1000 + k for w in range(WRITERS) for k in range(PER_WRITER)
    )
    for writer in range(WRITERS):  # each writer's events in its own order
        own = [i for i in iterations if i // 1000 == writer]
        assert own == sorted(own)


def test_leases_are_taken_renewed_refused_and_reclaimed(spot: Spot) -> None:
    clock = MockClock()
    start = clock.time()
    a, b = spot.open(clock), spot.open(clock)
    a.append(started("r1"))
    assert a.acquire_lease("r1", "host-a:1:x", 10)
    assert not b.acquire_lease("r1", "host-b:2:y", 10)  # held by a live owner
    record = b.get_run("r1")
    assert record is not None and record.status == "running"
    clock.advance(8)
    assert a.acquire_lease("r1", "host-a:1:x", 10)  # renewed: now until 18
    clock.advance(8)
    assert not b.acquire_lease("r1", "host-b:2:y", 10)
    lease = b.lease("r1")
    assert lease is not None and lease.owner == "host-a:1:x" and lease.expires_at == start + 18
    clock.advance(3)  # lapsed
    record = b.get_run("r1")
    assert record is not None and record.status == "interrupted"
    assert b.acquire_lease("r1", "host-b:2:y", 10)  # reclaimed
    assert not a.acquire_lease("r1", "host-a:1:x", 10)  # a learns it lost the run
    a.release_lease("r1", "host-a:1:x")  # not its lease: nothing happens
    assert b.lease("r1") is not None
    b.release_lease("r1", "host-b:2:y")
    assert a.lease("r1") is None


def test_a_lease_without_an_injected_clock_runs_on_real_time(spot: Spot) -> None:
    a, b = spot.open(), spot.open()
    a.append(started("r1"))
    assert a.acquire_lease("r1", "host-a:1:x", 30)
    assert not b.acquire_lease("r1", "host-b:2:y", 30)
    lease = b.lease("r1")
    assert lease is not None and abs(lease.expires_at - (time.time() + 30)) < 5
    record = b.get_run("r1")
    assert record is not None and record.status == "running"


def test_two_resumes_at_once_one_is_refused(spot: Spot, tmp_path: Path) -> None:
    spec = line_spec(tmp_path, 3, tool="append_line")
    events = recorded_run(spec, run_id="r_two")
    (tmp_path / "lines.txt").unlink()
    spot.open().append_many(events[:3])  # crashed after the first reply, before its tool call
    first, second = Runtime(spot.open()), Runtime(spot.open())

    async def resumed(runtime: Runtime) -> object:
        return await (await runtime.resume("r_two")).wait()

    async def both() -> list[object]:
        return list(await asyncio.gather(resumed(first), resumed(second), return_exceptions=True))

    outcomes = asyncio.run(both())
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    results = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], ResumeConflict), outcomes
    assert len(results) == 1 and results[0].success  # type: ignore[attr-defined]
    assert lines(tmp_path / "lines.txt") == ["line 1", "line 2", "line 3"]
    record = spot.open().get_run("r_two")
    assert record is not None and record.status == "completed"
    assert spot.open().lease("r_two") is None


def test_a_resume_that_read_the_run_before_another_finished_it_is_refused(
    spot: Spot, tmp_path: Path
) -> None:
    """The race of two resumes at once, made certain: one reads the run, the other resumes
    it to its end and lets go of its lease, then the first goes on. It must not replay the
    log it read (a second run of the tools): ResumeConflict, nothing written twice."""
    spec = line_spec(tmp_path, 3, tool="append_line")
    events = recorded_run(spec, run_id="r_late")
    (tmp_path / "lines.txt").unlink()
    spot.open().append_many(events[:3])
    late = Runtime(spot.open())
    read = late.find("r_late")

    async def both() -> None:
        result = await (await Runtime(spot.open()).resume("r_late")).wait()
        assert result.success
        with pytest.raises(ResumeConflict, match=r"read at event \d+ and is now at event"):
            await late.engine_of(read).resume(read)

    asyncio.run(both())
    assert lines(tmp_path / "lines.txt") == ["line 1", "line 2", "line 3"]
    assert spot.open().lease("r_late") is None
    record = spot.open().get_run("r_late")
    assert record is not None and record.status == "completed"


def test_a_keeper_renews_and_a_second_keeper_is_refused(spot: Spot) -> None:
    clock = MockClock()
    store = spot.open(clock)
    store.append(started("r1"))
    first = LeaseKeeper(store, owner="host-a:1:x", ttl_s=10)
    second = LeaseKeeper(spot.open(clock), owner="host-b:2:y", ttl_s=10)
    first.hold("r1")
    with pytest.raises(ResumeConflict, match=r"being executed by host-a:1:x"):
        second.hold("r1")
    clock.advance(11)
    second.hold("r1")
    assert first.beat() == ["r1"]
    first.close()
    second.close()


def test_a_run_exports_as_one_document(
    spot: Spot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = recorded_run(line_spec(tmp_path, 1))
    spot.open().append_many(events)
    assert main(["runs", "export", "run_test", "--store", spot.location]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["format"] == "loopwright.run/1"
    assert document["run"]["status"] == "completed" and document["run"]["last_seq"] == len(events)
    assert [e["seq"] for e in document["events"]] == list(range(1, len(events) + 1))


def test_the_first_gate_decision_wins(spot: Spot) -> None:
    clock = MockClock()
    a, b = spot.open(clock), spot.open(clock)
    assert a.gate_decision("t1", "g1") is None
    assert a.post_gate_decision("t1", "g1", True, "api:acme")
    assert not b.post_gate_decision("t1", "g1", False, "cli")
    decision = b.gate_decision("t1", "g1")
    assert decision is not None
    assert (decision.approved, decision.decided_by, decision.decided_at) == (
        True,
        "api:acme",
        clock.time(),
    )
    assert b.post_gate_decision("t1", "g2", False, "cli", decided_at=123.5)
    decision = a.gate_decision("t1", "g2")
    assert decision is not None and (decision.approved, decision.decided_at) == (False, 123.5)


def _gated(run_id: str) -> list[Event]:
    return [
        RunStartedEvent(
            run_id=run_id,
            seq=1,
            ts=1.0,
            kind="task",
            request="t",
            model="m",
            tools=[],
            options={},
            tenant="default",
        ),
        ConfirmationRequiredEvent(
            run_id=run_id, seq=2, ts=2.0, step="s", request_id="g", message="ok?", timeout_s=60.0
        ),
    ]


async def test_a_tail_gets_each_event_once_as_another_handle_appends_it(spot: Spot) -> None:
    writer, reader = spot.open(), spot.open()
    writer.append_many(_gated("r1"))
    seen: list[int] = []
    arrived = asyncio.Event()

    async def follow() -> None:
        async for event in tail_events(reader, "r1", after=0):
            seen.append(event.seq)
            arrived.set()

    task = asyncio.create_task(follow())
    for seq in range(3, 9):  # each append wakes the tail; no time-based wait
        while not seen or seen[-1] < seq - 1:
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), 10)
        writer.append(step("r1", seq))
    writer.append(finished("r1", 9))
    await asyncio.wait_for(task, 10)  # the tail ends at run_finished
    assert seen == list(range(1, 10))


async def test_a_tail_resumed_from_its_last_seq_misses_and_repeats_nothing(spot: Spot) -> None:
    store = spot.open()
    store.append_many([*_gated("r1"), step("r1", 3), step("r1", 4)])
    first = [e.seq async for e in tail_events(store, "r1", after=0, idle_timeout=0.05)]
    assert first == [1, 2, 3, 4]
    store.append_many([step("r1", 5), step("r1", 6)])  # while no one listened
    again = [
        e.seq async for e in tail_events(spot.open(), "r1", after=first[-1], idle_timeout=0.05)
    ]
    assert again == [5, 6]


async def test_wait_for_events_times_out_when_nothing_comes(spot: Spot) -> None:
    store: RunStore = spot.open()
    store.append_many(_gated("r1"))
    assert await store.wait_for_events("r1", after=1, timeout=5)  # already there
    began = time.monotonic()
    assert not await store.wait_for_events("r1", after=2, timeout=0.3)
    elapsed = time.monotonic() - began
    assert 0.3 <= elapsed < 1.5, elapsed


SECRET = "sk-live-" + "Q7w9E2r4T6y8U0i1"


def stored_text(spot: Spot) -> str:
    """Everything the store holds, as text (the SQLite file's bytes; every Postgres row)."""
    if spot.kind == "sqlite":
        files = [Path(spot.location), Path(spot.location + "-wal")]
        return "".join(f.read_bytes().decode("utf-8", "replace") for f in files if f.exists())
    import psycopg

    with psycopg.connect(spot.location) as conn:
        tables = ["runs", "events", "leases", "gate_decisions"]
        rows = [conn.execute(f"SELECT * FROM loopwright.{t}").fetchall() for t in tables]
    return repr(rows)


def test_a_secret_given_to_a_run_never_reaches_the_store(spot: Spot, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "deploy.env").write_text(f"API_TOKEN={SECRET}\nREGION=eu\n")
    replies = [
        '{"thought": "read it", "action": "read", "action_input": {"path": "deploy.env"}}',
        '{"thought": "done", "final_answer": "the region is eu"}',
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies))
    spec = RunSpec(request="which region?", model=f"scripted:{script}", tools=("read",),
                   workspace=str(workspace))  # fmt: skip
    runtime = Runtime(spot.open())

    async def run() -> object:
        return await runtime.start(spec, secrets=[SECRET]).wait()

    result = asyncio.run(run())
    runtime.close()
    runtime.store.close()
    assert result.success  # type: ignore[attr-defined]
    text = stored_text(spot)
    assert "REGION=eu" in text  # the observation is stored...
    assert SECRET not in text  # ...without the secret


@pytest.mark.subprocess
def test_two_resume_processes_one_is_refused(spot: Spot, tmp_path: Path) -> None:
    spec = line_spec(tmp_path, 3, tool="append_line")
    events = recorded_run(spec, run_id="r_proc")
    (tmp_path / "lines.txt").unlink()
    spot.open().append_many(events[:3])  # crashed after the first reply, before its tool call
    resume = [
        sys.executable,
        "-m",
        "loopwright",
        "runs",
        "resume",
        "r_proc",
        "--store",
        spot.location,
    ]
    env = {**os.environ, "LOOPWRIGHT_TEST_HANG_AFTER": "line 2"}
    first = subprocess.Popen(resume, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert first.stderr is not None
    try:
        for line in first.stderr:  # it holds the run's lease, inside its second tool call
            if b"hanging after line 2" in line:
                break
        second = subprocess.run(resume, capture_output=True, text=True, timeout=60)
        assert second.returncode == 1, second.stderr
        assert "r_proc is being executed by" in second.stderr and "Traceback" not in second.stderr
        assert lines(tmp_path / "lines.txt") == ["line 1", "line 2"]  # the second did nothing
    finally:
        first.kill()
        first.wait()
        first.stderr.close()
