"""A run (an agent's, a task's) resumed after its workflow ended between a tool's commit and
the workflow hearing of it: the call (not idempotent) is not run again and not reported
"effect unknown": its worker reads the result committed in the content store, and the
run's log has it."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from run_tools import KILL_MARK
from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final
from trial_helpers import HeldLink, until

from loopwright.engines.temporal import EngineSettings
from loopwright.engines.temporal._content import ContentStore
from loopwright.events import (
    FunctionResultEvent,
    RunFinishedEvent,
    ToolCallEvent,
    ToolCallStartedEvent,
)
from loopwright.runtime import RunSpec
from loopwright.store import open_store
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
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: "{text}"}}
"""
MODE = {"LOOPWRIGHT_TEST_KILL_ONCE": "after-commit"}


def _committed(url: str, key: str) -> bool:
    content = ContentStore(url)
    try:
        found = content.tool_call(key)
    finally:
        content.close()
    return found is not None and found[0] == "done"


async def _start(runs: TemporalRuns, kind: str, folder: Path, text: str) -> Any:
    out = folder / "out.txt"
    if kind == "task":
        task = folder / "one.yaml"
        task.write_text(TASK.format(tools=TOOLS_FILE, text=text), encoding="utf-8")
        spec = TaskSpec(task_file=str(task), inputs={"out": str(out)}, workspace=str(folder),
                        state_root=str(folder / "state"), auto_gate=False)  # fmt: skip
        return await runs.start_task(spec, settings=FAST)
    script = folder / "script.json"
    script.write_text(json.dumps([action("append_line", path=str(out), text=text),
                                  final("wrote it")]), encoding="utf-8")  # fmt: skip
    agent = RunSpec(request="write a line", model=f"scripted:{script}",
                    tools=(f"{TOOLS_FILE}:append_line",), workspace=str(folder))  # fmt: skip
    return await runs.start(agent, settings=FAST)


@pytest.mark.parametrize("kind", ["agent", "task"])
async def test_a_resumed_run_reads_a_committed_result_of_a_call_it_did_not_hear_of(
    workers: Workers, tmp_path: Path, runs: TemporalRuns, kind: str
) -> None:
    out, text = tmp_path / "out.txt", f"line1 {KILL_MARK}"
    link = HeldLink(workers.address)
    store = open_store(workers.store)
    try:
        first = workers.start(via=await link.start(), **MODE)
        handle = await _start(runs, kind, tmp_path, text)
        await until(Path(f"{out}.hung").exists, workers.logs, 180)  # its effect is done
        (started,) = [e for e in store.events(handle.id) if isinstance(e, ToolCallStartedEvent)]
        link.hold()  # the worker's report to Temporal waits
        Path(f"{out}.go").write_text("go")  # the call returns: its result is committed
        key = f"{handle.id}:{started.call_id}"
        await until(lambda: _committed(workers.store, key), workers.logs, 60)
        first.send_signal(signal.SIGKILL)
        first.wait()
        await link.cut()
        await handle.terminate("the test stops it before it heard of the call")
        workers.start()
        resumed = await runs.runtime(FAST).resume(handle.id)
        await resumed.wait()
        events = store.events(handle.id)
    finally:
        store.close()
        await link.close()

    assert out.read_text() == f"{text}\n"  # one effect
    assert Path(f"{out}.attempts").read_text() == f"{text}\n"  # never run again
    if kind == "agent":
        (call,) = [e for e in events if isinstance(e, ToolCallEvent)]
        assert (call.result, call.is_error) == (f"appended {text!r}", False)
    else:
        (step,) = [e for e in events if isinstance(e, FunctionResultEvent)]
        assert (step.result, step.success, step.error) == (f"appended {text!r}", True, None)
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
