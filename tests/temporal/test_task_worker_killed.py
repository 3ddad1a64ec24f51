"""A task run's tool that is not idempotent, its worker SIGKILLed after the effect: the
other worker never runs it again; the step fails with the uncertain outcome (the effect
happened exactly once), and the run stops there."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers

from loopwright.engines.temporal import EngineSettings
from loopwright.events import FunctionResultEvent, RunFinishedEvent
from loopwright.store import open_store
from loopwright.tasks import TaskSpec

TASK = """\
name: append-then-look
tools: [{tools}]
inputs:
  out: null
steps:
  - name: write
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: hang-here}}
  - name: look
    type: tool
    tool: big
    args: {{size: 4}}
"""


async def test_a_killed_workers_tool_step_is_not_run_again(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    task = tmp_path / "append.yaml"
    task.write_text(TASK.format(tools=TOOLS_FILE), encoding="utf-8")
    out = tmp_path / "out.txt"
    spec = TaskSpec(task_file=str(task), inputs={"out": str(out)}, workspace=str(tmp_path),
                    state_root=str(tmp_path / "state"), auto_gate=False)  # fmt: skip
    both = [workers.start(LOOPWRIGHT_TEST_HANG_AFTER="hang-here") for _ in range(2)]
    fast = EngineSettings(heartbeat_timeout_s=5.0)
    handle = await runs.start_task(spec, settings=fast)
    deadline = time.monotonic() + 60
    while "hanging after hang-here" not in workers.logs():
        assert time.monotonic() < deadline, workers.logs()
        await asyncio.sleep(0.05)
    (inside,) = [i for i in range(2) if "hanging after" in workers.log_of(i)]
    both[inside].send_signal(signal.SIGKILL)
    both[inside].wait()
    outcome = await asyncio.wait_for(handle.result(), 120)

    assert out.read_text() == "hang-here\n"  # the effect happened once
    assert outcome["status"] == "failed" and outcome["failed_step"] == "write"
    store = open_store(workers.store)
    try:
        events = store.events(handle.id)
    finally:
        store.close()
    [result] = [e for e in events if isinstance(e, FunctionResultEvent)]
    assert result.success is False and result.error is not None  # reported, not re-run:
    assert result.error.startswith("The outcome of this call is unknown: the worker running it")
    assert "It was not run again (it is not idempotent)" in result.error
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "failed"
    assert both[1 - inside].poll() is None  # the other worker finished the run
