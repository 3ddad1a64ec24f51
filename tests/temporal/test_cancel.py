"""Cancelling a run that executes on a worker: a running tool call is stopped within the
heartbeat timeout, and the run ends `cancelled` in the store with its partial work."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from temporal_helpers import TemporalRuns, Workers, action, final, loopwright_env
from temporalio.client import WorkflowFailureError

from loopwright.engines.temporal import EngineSettings
from loopwright.events import RunFinishedEvent, ToolCallStartedEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store

TOOLS = Path(__file__).with_name("run_tools.py")
HEARTBEAT_S = 3.0


async def _stored_until(store_url: str, run_id: str, kind: type, limit_s: float) -> list[object]:
    store = open_store(store_url)
    try:
        deadline = time.monotonic() + limit_s
        while True:
            events = store.events(run_id)
            if any(isinstance(e, kind) for e in events):
                return list(events)
            assert time.monotonic() < deadline, f"no {kind.__name__} in {limit_s:g}s"
            await store.wait_for_events(run_id, after=len(events), timeout=0.5)
    finally:
        store.close()


async def test_cancel_stops_a_running_tool_and_ends_the_run_cancelled(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    script = tmp_path / "script.json"
    replies = [action("echo", text="hi"), action("wait", seconds=120), final("never")]
    script.write_text(json.dumps(replies))
    spec = RunSpec(
        request="wait a long time",
        model=f"scripted:{script}",
        tools=("echo", f"{TOOLS}:wait"),
        workspace=str(tmp_path),
    )
    workers.start()
    settings = EngineSettings(heartbeat_timeout_s=HEARTBEAT_S)
    handle = await runs.start(spec, settings=settings)
    while "waiting" not in workers.logs():  # the long tool call is running
        await asyncio.sleep(0.05)
    store = open_store(workers.store)
    try:  # the workers hold its lease: running, not interrupted
        record = store.get_run(handle.id)
    finally:
        store.close()
    assert record is not None and record.status == "running"
    started = time.monotonic()
    await handle.cancel()
    events = await _stored_until(workers.store, handle.id, RunFinishedEvent, 30)
    elapsed = time.monotonic() - started

    assert elapsed < HEARTBEAT_S + 2.0, f"the cancel took {elapsed:.1f}s"
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    assert last.status == "cancelled"
    assert last.steps == 1  # the echo call is kept as partial work
    assert [e.tool_name for e in events if isinstance(e, ToolCallStartedEvent)] == ["echo", "wait"]
    store = open_store(workers.store)
    try:
        record = store.get_run(handle.id)
    finally:
        store.close()
    assert record is not None and record.status == "cancelled"
    with pytest.raises(WorkflowFailureError):
        await handle.result()


def test_ctrl_c_on_loopwright_run_cancels_the_run_on_its_worker(
    workers: Workers, tmp_path: Path
) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([action("wait", seconds=120), final("never")]))
    workers.start()
    command = [sys.executable, "-m", "loopwright", "run", "wait", "--model", f"scripted:{script}",
               "--tools", f"{TOOLS}:wait", "--workspace", str(tmp_path), "--json",
               "--engine", "temporal", "--temporal", workers.address,
               "--store", workers.store, "--task-queue", workers.queue]  # fmt: skip
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=loopwright_env()
    )
    deadline = time.monotonic() + 60
    while "waiting" not in workers.logs():
        assert time.monotonic() < deadline and proc.poll() is None, workers.logs()
        time.sleep(0.05)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - started

    assert proc.returncode == 130, err
    assert elapsed < HEARTBEAT_S + 5.0, f"Ctrl-C took {elapsed:.1f}s to end the run"
    last = json.loads(out.decode().splitlines()[-1])
    assert (last["type"], last["status"]) == ("run_finished", "cancelled")
    store = open_store(workers.store)
    try:
        record = store.get_run(last["run_id"])
    finally:
        store.close()
    assert record is not None and record.status == "cancelled"
