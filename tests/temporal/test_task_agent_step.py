"""A task run's agent step and a gate's timeout on Temporal: the agent attempt runs in an
activity on a worker in another process (its own run stored there, linked by
parent_run_id; its text comes back as the task run's `stream` events), and a gate nobody
decides ends `timed_out` after its timeout, a durable timer in the workflow."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers

from loopwright.events import (
    ConfirmationRequiredEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepCompleteEvent,
    StreamEvent,
)
from loopwright.store import open_store
from loopwright.tasks import TaskSpec

TASK = """\
name: explain-then-ask
tools: [{tools}]
inputs:
  out: null
steps:
  - name: measure
    type: tool
    tool: big
    args: {{size: 12}}
  - name: explain
    type: agent
    description: "Explain the text {{results.measure}}."
  - name: approve
    type: gate
    message_template: "Write it down?"
    timeout_s: 2
  - name: write
    type: tool
    tool: append_line
    args_from: {{path: inputs.out, text: results.explain}}
"""


async def test_an_agent_step_runs_on_a_worker_and_a_gate_times_out(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    task = tmp_path / "explain.yaml"
    task.write_text(TASK.format(tools=TOOLS_FILE), encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([json.dumps({"thought": "a look", "final_answer": "digits"})]))
    out = tmp_path / "out.txt"
    spec = TaskSpec(
        task_file=str(task),
        inputs={"out": str(out)},
        model=f"scripted:{script}",
        workspace=str(tmp_path),
        state_root=str(tmp_path / "state"),
    )
    workers.start()
    handle = await runs.start_task(spec)
    started = time.monotonic()
    outcome = await asyncio.wait_for(handle.result(), 120)
    elapsed = time.monotonic() - started

    assert outcome["status"] != "completed" and outcome["failed_step"] == "approve"
    assert not out.exists()  # the step after the timed-out gate never ran
    store = open_store(workers.store)
    try:
        events = store.events(handle.id)
        children = [r for r in store.list_runs() if r.parent_run_id == handle.id]
        child_events = store.events(children[0].run_id) if children else []
    finally:
        store.close()
    assert [e.chunk for e in events if isinstance(e, StreamEvent)] == ["a look", "digits"]
    steps = {e.step: e for e in events if isinstance(e, StepCompleteEvent)}
    assert (steps["explain"].status, steps["explain"].result) == ("completed", "digits")
    assert len(children) == 1 and children[0].status == "completed"
    first = child_events[0]
    assert isinstance(first, RunStartedEvent) and "Explain the text 0123456789ab." in first.request
    asked = next(e for e in events if isinstance(e, ConfirmationRequiredEvent))
    assert steps["approve"].status == "timed_out" and "write" not in steps
    waited = steps["approve"].ts - asked.ts  # workflow time, from the durable timer
    assert 2.0 <= waited < 10.0, waited
    assert elapsed < 60.0
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status != "completed"
