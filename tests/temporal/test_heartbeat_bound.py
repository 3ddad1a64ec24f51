"""A worker killed inside an activity that has no effect of its own (here: the append of a
run's last events, its insert waiting in the real PostgreSQL server) is seen within the
run's heartbeat timeout, and the other worker goes on with the run: the attempt's failure
in the history is a heartbeat timeout, not its start-to-close timeout (60-120 s before,
when these activities had no heartbeat timeout)."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import pytest
from store_faults import BlockedInsert
from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final
from temporalio.api.enums.v1 import TimeoutType
from temporalio.client import WorkflowHandle

from loopwright.engines.temporal import EngineSettings
from loopwright.runtime import RunSpec
from loopwright.tasks import TaskSpec

FAST = EngineSettings(heartbeat_timeout_s=5.0)
TASK = """\
name: one-line
tools: [{tools}]
inputs:
  out: null
steps:
  - name: first
    type: tool
    tool: put_line
    args_from: {{path: inputs.out}}
    args: {{text: line1}}
"""


async def _retried(handle: WorkflowHandle[Any, Any]) -> list[tuple[str, int, int]]:
    """(activity type, attempt, why the attempt before it failed: its timeout type) of
    each activity that took more than one attempt."""
    history = await handle.fetch_history()
    scheduled: dict[int, str] = {}
    retried: list[tuple[str, int, int]] = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            scheduled[event.event_id] = attrs.activity_type.name
        if event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            if started.attempt > 1:
                kind = started.last_failure.timeout_failure_info.timeout_type
                retried.append((scheduled[started.scheduled_event_id], started.attempt, kind))
    return retried


async def _start(runs: TemporalRuns, kind: str, folder: Path) -> WorkflowHandle[Any, Any]:
    out = folder / "out.txt"
    if kind == "task":
        task = folder / "one.yaml"
        task.write_text(TASK.format(tools=TOOLS_FILE), encoding="utf-8")
        spec = TaskSpec(task_file=str(task), inputs={"out": str(out)}, workspace=str(folder),
                        state_root=str(folder / "state"), auto_gate=False)  # fmt: skip
        return await runs.start_task(spec, settings=FAST)
    script = folder / "script.json"
    replies = [action("put_line", path=str(out), text="line1"), final("wrote it")]
    script.write_text(json.dumps(replies), encoding="utf-8")
    agent = RunSpec(request="write a line", model=f"scripted:{script}",
                    tools=(f"{TOOLS_FILE}:put_line",), workspace=str(folder))  # fmt: skip
    return await runs.start(agent, settings=FAST)


@pytest.mark.parametrize("kind", ["agent", "task"])
async def test_a_killed_workers_append_is_retried_within_the_heartbeat_timeout(
    workers: Workers, tmp_path: Path, kind: str, runs: TemporalRuns
) -> None:
    block = BlockedInsert(workers.store, "", event="run_finished")
    try:
        first = workers.start()
        handle = await _start(runs, kind, tmp_path)
        backend = await block.waiting()  # its run_finished is being inserted
        workers.start()
        first.send_signal(signal.SIGKILL)
        first.wait()
        block.abort(backend)  # the killed worker's insert never commits
        outcome = await asyncio.wait_for(handle.result(), 120)
    finally:
        block.close()

    assert outcome["status"] == "completed", workers.logs()
    assert (tmp_path / "out.txt").read_text() == "line1\n"
    heartbeat = TimeoutType.TIMEOUT_TYPE_HEARTBEAT
    assert await _retried(handle) == [("loopwright.append_events.v1", 2, heartbeat)]
