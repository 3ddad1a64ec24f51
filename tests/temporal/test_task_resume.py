"""`runs resume RUN_ID --engine temporal` of a task run whose workflow was terminated while
its gate waited: a new workflow replays the recorded steps (the append before the gate is
not run again), the gate waits again with the same id, an approval from another process
lets the run finish; each effect once."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, loopwright_env

from loopwright.errors import UsageError
from loopwright.events import ConfirmationRequiredEvent, RunFinishedEvent
from loopwright.store import open_store
from loopwright.tasks import TaskSpec

TASK = """\
name: before-and-after
tools: [{tools}]
inputs:
  out: null
steps:
  - name: before
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: before}}
  - name: approve
    type: gate
    message_template: "Go on?"
  - name: after
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: after}}
"""


async def approve_when_waiting(runs: TemporalRuns, run_id: str, gate: str, limit_s: float) -> None:
    """Approve `gate` as soon as the resumed workflow has it open (its validator refuses
    a decision on a gate that is not waiting yet)."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            await runs.decide(run_id, gate, True, "ops")
            return
        except UsageError as exc:
            assert time.monotonic() < deadline, f"the gate never opened again: {exc}"
            await asyncio.sleep(0.2)


async def test_a_terminated_task_run_is_resumed_at_its_gate(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    task = tmp_path / "task.yaml"
    task.write_text(TASK.format(tools=TOOLS_FILE), encoding="utf-8")
    out = tmp_path / "out.txt"
    spec = TaskSpec(task_file=str(task), inputs={"out": str(out)}, workspace=str(tmp_path),
                    state_root=str(tmp_path / "state"), auto_gate=False)  # fmt: skip
    workers.start()
    handle = await runs.start_task(spec)
    store = open_store(workers.store)
    try:
        gate, last = None, 0
        async with asyncio.timeout(60):
            while gate is None:
                for event in store.events(handle.id, after=last):
                    last = event.seq
                    if isinstance(event, ConfirmationRequiredEvent):
                        gate = event.request_id
                await store.wait_for_events(handle.id, after=last, timeout=1.0)
        await handle.terminate("the workflow is lost")
        assert out.read_text() == "before\n"

        command = [sys.executable, "-m", "loopwright", "runs", "resume", handle.id,
                   "--engine", "temporal", "--temporal", workers.address,
                   "--store", workers.store, "--task-queue", workers.queue, "--json"]  # fmt: skip
        resumed = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=loopwright_env())  # fmt: skip
        try:
            await approve_when_waiting(runs, handle.id, gate, 60)
            _, err = await asyncio.to_thread(resumed.communicate, timeout=60)
        finally:
            if resumed.poll() is None:
                resumed.kill()
                resumed.wait()
        events = store.events(handle.id)
    finally:
        store.close()
    assert resumed.returncode == 0, err
    assert out.read_text() == "before\nafter\n"  # each effect once
    asked = [e.request_id for e in events if isinstance(e, ConfirmationRequiredEvent)]
    assert asked == [gate]  # the same gate, asked once: the resumed run re-made it
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
