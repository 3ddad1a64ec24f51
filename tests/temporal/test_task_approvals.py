"""Approvals of a task run on Temporal (the issue's test 2): a gate waits in the workflow
while every worker is SIGKILLed; new workers start; a decision from another process (the
CLI) is the workflow's Update `approve`: the tool after an approved gate runs exactly
once, the one after a rejected gate never runs; a duplicate or unknown decision is refused
by the Update's validator and leaves no history."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from task_files import two_gates_task
from temporal_helpers import TemporalRuns, Workers, gates_opened, loopwright_env
from temporalio.api.enums.v1 import EventType

from loopwright.engines.temporal import connect
from loopwright.errors import UsageError
from loopwright.events import ConfirmationRequiredEvent, GateDecisionEvent, RunFinishedEvent
from loopwright.store import open_store


def loopwright(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "loopwright", *args], capture_output=True,
                          text=True, env=loopwright_env(), timeout=120)  # fmt: skip


async def waiting_gate(store_url: str, run_id: str | None, step: str, limit_s: float) -> str:
    """The request id of the gate of `step` once it is stored as waiting (bounded); the
    run's id is read from the first run in the store when not known yet."""
    store = open_store(store_url)
    deadline = time.monotonic() + limit_s
    last = 0
    try:
        while True:
            runs = [run_id] if run_id else [r.run_id for r in store.list_runs()]
            for rid in runs:
                for event in store.events(rid):
                    if isinstance(event, ConfirmationRequiredEvent) and event.step == step:
                        return f"{rid} {event.request_id}"
                    last = event.seq
            assert time.monotonic() < deadline, f"no gate {step!r} waiting in {limit_s:g}s"
            if runs:  # until the run stores more
                await store.wait_for_events(runs[0], after=last, timeout=1.0)
            else:  # the run is not stored yet
                await asyncio.sleep(0.1)
    finally:
        store.close()


async def test_an_approval_survives_every_worker_stopping(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    task = two_gates_task(tmp_path)
    out = tmp_path / "out.txt"
    out.write_text("", encoding="utf-8")
    first = [workers.start() for _ in range(2)]
    command = [sys.executable, "-m", "loopwright", "task", "run", str(task),
               "--input", f"out={out}", "--workspace", str(tmp_path), "--store", workers.store,
               "--engine", "temporal", "--temporal", workers.address,
               "--task-queue", workers.queue, "--json"]  # fmt: skip
    starter = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=loopwright_env()
    )
    try:
        run_id, gate = (await waiting_gate(workers.store, None, "approve", 90)).split()
        client = await connect(workers.address)  # killed once the gate is open in the workflow
        await asyncio.wait_for(gates_opened(client.get_workflow_handle(run_id)), 90)
        for proc in first:  # every worker dies while the gate waits
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert all(proc.poll() == -signal.SIGKILL for proc in first)
        store = open_store(workers.store)
        try:
            record = store.get_run(run_id)
            assert record is not None and record.status == "running"
            assert record.engine == "temporal"  # recorded: nobody guesses
        finally:
            store.close()
        [workers.start() for _ in range(2)]

        approved = loopwright("task", "approve", run_id, "--store", workers.store,
                              "--temporal", workers.address, "--by", "ops")  # fmt: skip
        assert approved.returncode == 0, approved.stderr
        assert "sent to its workflow on Temporal" in approved.stdout
        second = (await waiting_gate(workers.store, run_id, "confirm", 90)).split()[1]
        assert out.read_text() == "after-the-gate\n"  # ran once, on a new worker

        # decided, and never asked: refused before any reaches the workflow
        for gate_id, refusal in ((gate, "no gate .* waiting"), ("gate_nope", "no gate")):
            with pytest.raises(UsageError, match=refusal):
                await runs.decide(run_id, gate_id, True, "test")
        rejected = loopwright("runs", "approve", run_id, second, "--reject", "--reason", "no",
                              "--store", workers.store, "--temporal", workers.address)  # fmt: skip
        assert rejected.returncode == 0, rejected.stderr
        stdout, stderr = starter.communicate(timeout=120)
    finally:
        if starter.poll() is None:
            starter.kill()
            starter.wait()
    assert starter.returncode == 1, stderr  # a rejected gate stops the task
    assert stderr.count("waits for approval") == 2  # no terminal: each gate said so
    assert json.loads(stdout.splitlines()[-1])["type"] == "run_finished"
    assert out.read_text() == "after-the-gate\n"  # the tool after the rejection never ran

    store = open_store(workers.store)
    try:
        events = store.events(run_id)
    finally:
        store.close()
    decisions = [(e.approved, e.decided_by) for e in events if isinstance(e, GateDecisionEvent)]
    assert len(decisions) == 2 and decisions[0] == (True, "ops")
    assert decisions[1][0] is False and decisions[1][1].startswith("cli:")
    finished = events[-1]
    assert isinstance(finished, RunFinishedEvent) and finished.status != "completed"
    history = await client.get_workflow_handle(run_id).fetch_history()
    kinds = [e.event_type for e in history.events]
    accepted = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
    assert kinds.count(accepted) == 2  # the two refused decisions left no history
