"""Sub-agents on Temporal workers (`agent.as_tool(...)` in a run's tools): the child runs
inside the lead's tool activity on a worker, its events stored as a run of its own linked
to the call (parent_run_id, parent_call_id; the lead's `tool_call_started` names it), its
approvals waiting for a decision made elsewhere (`runs approve CHILD_RUN_ID` from another
process), as on the embedded engine."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from temporal_helpers import TemporalRuns, Workers, action, final, loopwright_env

from loopwright.engines.temporal import EngineSettings
from loopwright.events import (
    ConfirmationRequiredEvent,
    Event,
    GateDecisionEvent,
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
)
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import PersistentStore, open_store

HELPER = f"{Path(__file__).with_name('subagent_tools.py')}:helper"


def spec_of(tmp_path: Path, lines: list[str], approve: tuple[str, ...] = ()) -> RunSpec:
    out = tmp_path / "notes.txt"
    replies = [action("helper", request=f"{out}: {line}") for line in lines]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*replies, final("all noted")]))
    return RunSpec(request="note the lines", model=f"scripted:{script}", tools=(HELPER,),
                   workspace=str(tmp_path), approve=approve)  # fmt: skip


async def test_a_subagent_is_a_child_run_stored_on_the_worker(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    workers.start()
    handle = await runs.start(spec_of(tmp_path, ["one"]))
    assert (await handle.result())["status"] == "completed", workers.logs()
    store = open_store(workers.store)
    try:
        lead = store.events(handle.id)
        (started,) = [e for e in lead if isinstance(e, ToolCallStartedEvent)]
        assert started.child_run_id is not None
        child = store.events(started.child_run_id)
        record = store.get_run(started.child_run_id)
    finally:
        store.close()
    first = child[0]
    assert isinstance(first, RunStartedEvent)
    assert (first.parent_run_id, first.parent_call_id) == (handle.id, started.call_id)
    assert [e.seq for e in child] == list(range(1, len(child) + 1))
    assert isinstance(child[-1], RunFinishedEvent) and child[-1].status == "completed"
    assert record is not None and record.parent_run_id == handle.id
    assert record.status == "completed"
    (finished,) = [e for e in lead if isinstance(e, ToolCallEvent)]
    assert finished.result == child[-1].answer == "noted"
    assert (tmp_path / "notes.txt").read_text() == "one\n"


async def test_a_fresh_runtime_follows_a_stored_temporal_run_with_its_subagents_events(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    """`loopwright runs follow RUN_ID` from another shell: a Runtime of its own on the same
    store reads the lead's events with the child's nested under the call that ran it."""
    workers.start()
    handle = await runs.start(spec_of(tmp_path, ["one"]))
    assert (await handle.result())["status"] == "completed", workers.logs()
    store = open_store(workers.store)
    fresh = Runtime(store)
    try:
        lead = store.events(handle.id)
        (started,) = [e for e in lead if isinstance(e, ToolCallStartedEvent)]
        child_id = started.child_run_id
        assert child_id is not None
        child = store.events(child_id)
        seen: list[Event] = []
        async with contextlib.aclosing(fresh.follow(handle.id)) as events:
            async for event in events:
                seen.append(event)
    finally:
        fresh.close()
        store.close()
    stored = sorted((e.run_id, e.seq) for e in [*lead, *child])
    assert sorted((e.run_id, e.seq) for e in seen if e.type != "model_text_delta") == stored
    opens = seen.index(next(e for e in seen if isinstance(e, ToolCallStartedEvent)))
    closes = seen.index(next(e for e in seen if isinstance(e, ToolCallEvent)))
    assert {e.run_id for e in seen[opens + 1 : closes]} == {child_id}


def approve_cli(store: str, run_id: str, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "loopwright", "runs", "approve", run_id, "--store", store,
               "--by", "ops", *extra]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env=loopwright_env(),
                          timeout=60)  # fmt: skip


async def test_a_subagents_approvals_are_decided_with_runs_approve(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    """The lead's `approve` covers its sub-agents' tools: each `note` waits in the child run
    until `runs approve` (another process, no Temporal address) decides it."""
    workers.start()
    spec = spec_of(tmp_path, ["yes", "no"], approve=("note",))
    handle = await runs.start(spec)
    store = open_store(workers.store)
    decisions: list[str] = []
    try:
        for verdict in ((), ("--reject", "--reason", "not this one")):
            gate = await waiting_gate(store, handle.id, len(decisions))
            done = approve_cli(workers.store, gate.run_id, *verdict)
            assert done.returncode == 0, done.stderr
            decisions.append(gate.run_id)
        assert (await handle.result())["status"] == "completed", workers.logs()
        children = [store.events(run_id) for run_id in decisions]
    finally:
        store.close()
    assert (tmp_path / "notes.txt").read_text() == "yes\n"  # the rejected call never ran
    verdicts = [[e for e in events if isinstance(e, GateDecisionEvent)] for events in children]
    assert [[(d.approved, d.decided_by) for d in v] for v in verdicts] == [
        [(True, "ops")],
        [(False, "ops")],
    ]
    assert "not this one" in verdicts[1][0].reason


async def test_a_subagent_waiting_at_a_gate_goes_on_after_its_worker_is_killed(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    """The worker running a child that waits at its gate is SIGKILLed: the call is tried
    again on another worker (the sub-agent tool is idempotent), which resumes the child
    from its stored events (its model is not asked again what it answered), the gate waits
    again, `runs approve` decides it there, and the tool runs once."""
    first = workers.start()
    spec = spec_of(tmp_path, ["once"], approve=("note",))
    settings = EngineSettings(heartbeat_timeout_s=3.0)
    handle = await runs.start(spec, settings=settings)
    store = open_store(workers.store)
    try:
        gate = await waiting_gate(store, handle.id, 0)
        first.send_signal(signal.SIGKILL)
        first.wait()
        second = workers.start()
        await until_leased_by(store, gate.run_id, second.pid)
        done = approve_cli(workers.store, gate.run_id)
        assert done.returncode == 0, done.stderr
        assert (await handle.result())["status"] == "completed", workers.logs()
        child = store.events(gate.run_id)
    finally:
        store.close()
    assert (tmp_path / "notes.txt").read_text() == "once\n"
    assert (tmp_path / "notes.txt.calls").read_text() == "once\n" * 2  # asked, then answered
    assert [e.seq for e in child] == list(range(1, len(child) + 1))
    assert sum(isinstance(e, RunStartedEvent) for e in child) == 1
    assert isinstance(child[-1], RunFinishedEvent) and child[-1].status == "completed"


async def until_leased_by(store: PersistentStore, run_id: str, pid: int) -> None:
    """Until the worker process `pid` holds the run's lease (it executes the run)."""
    deadline = time.monotonic() + 90
    while True:
        lease = store.lease(run_id)
        if lease is not None and lease.owner.split(":")[1] == str(pid):
            return
        assert time.monotonic() < deadline, f"worker {pid} did not take run {run_id}"
        await asyncio.sleep(0.2)


async def waiting_gate(
    store: PersistentStore, lead_id: str, index: int
) -> ConfirmationRequiredEvent:
    """The `index`-th sub-agent's gate, once its child run has stored it (bounded)."""
    deadline = time.monotonic() + 60
    while True:
        started = [e for e in store.events(lead_id) if isinstance(e, ToolCallStartedEvent)]
        child = started[index].child_run_id if len(started) > index else None
        if child is not None:
            gates = [e for e in store.events(child) if isinstance(e, ConfirmationRequiredEvent)]
            if gates:
                return gates[0]
            await store.wait_for_events(child, after=0, timeout=0.5)
        else:
            await store.wait_for_events(lead_id, after=0, timeout=0.5)
        assert time.monotonic() < deadline, "no sub-agent gate within 60 s"


def test_run_follows_its_subagent_and_approves_its_calls_with_yes(
    workers: Workers, tmp_path: Path
) -> None:
    """`loopwright run --engine temporal --approve note --yes`: the view follows the child
    run too (its events between the call's start and end), and `--yes` approves the
    child's call, which runs once."""
    spec = spec_of(tmp_path, ["seen"])
    workers.start()
    command = [sys.executable, "-m", "loopwright", "run", spec.request, "--model", spec.model,
               "--tools", HELPER, "--workspace", str(tmp_path), "--store", workers.store,
               "--engine", "temporal", "--temporal", workers.address, "--task-queue",
               workers.queue, "--approve", "note", "--yes", "--json"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=loopwright_env(),
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr + workers.logs()
    events = [json.loads(line) for line in done.stdout.splitlines()]
    lead = events[0]["run_id"]
    (call,) = [e for e in events if e["type"] == "tool_call_started" and e["run_id"] == lead]
    child = call["child_run_id"]
    runs = [e["run_id"] for e in events]
    first, last = runs.index(child), len(runs) - 1 - runs[::-1].index(child)
    ended = [i for i, e in enumerate(events) if e["type"] == "tool_call" and e["run_id"] == lead]
    assert events.index(call) < first < last < ended[0]
    assert events[first]["type"] == "run_started" and events[last]["type"] == "run_finished"
    decided = [e for e in events if e["type"] == "gate_decision"]
    assert [(e["run_id"], e["approved"], e["decided_by"]) for e in decided] == [
        (child, True, "--yes")
    ]
    assert (tmp_path / "notes.txt").read_text() == "seen\n"
