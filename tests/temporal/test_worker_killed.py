"""SIGKILL the worker inside a side-effecting tool (after its effect): a second worker
finishes the run, the tool (not idempotent) is never run again, and the model is told its
outcome is unknown. Each trial kills at another call."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import pytest
from temporal_helpers import Workers, write_script
from temporalio.worker import Replayer

from loopwright.engines.temporal import AgentRunWorkflow, EngineSettings, connect, start_agent_run
from loopwright.engines.temporal._activities import UNCERTAIN
from loopwright.engines.temporal._content import ContentStore
from loopwright.events import RunFinished, ToolCallFinished
from loopwright.runtime import RunSpec
from loopwright.store import open_store

TOOLS = Path(__file__).with_name("run_tools.py")
LINES = ["line1", "line2", "line3"]
FAST = EngineSettings(heartbeat_timeout_s=3.0)


async def _wait_for(text: str, workers: Workers, limit_s: float) -> None:
    """Until a worker's log says `text` (bounded)."""
    deadline = time.monotonic() + limit_s
    while text not in workers.logs():
        assert time.monotonic() < deadline, f"no {text!r} in {limit_s:g}s:\n{workers.logs()}"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("killed_at", LINES)
async def test_a_second_worker_finishes_a_run_whose_worker_was_killed(
    workers: Workers, tmp_path: Path, killed_at: str
) -> None:
    out = tmp_path / "out.txt"
    script = write_script(tmp_path, out, LINES)
    spec = RunSpec(
        request="write the lines",
        model=f"scripted:{script}",
        tools=("echo", f"{TOOLS}:append_line"),
        workspace=str(tmp_path),
    )
    first = workers.start(LOOPWRIGHT_TEST_HANG_AFTER=killed_at)
    client = await connect(workers.address)
    handle = await start_agent_run(client, spec, settings=FAST, task_queue=workers.queue)
    await _wait_for(f"hanging after {killed_at}", workers, 60)
    first.send_signal(signal.SIGKILL)
    first.wait()
    workers.start()
    outcome = await asyncio.wait_for(handle.result(), 120)

    assert outcome["status"] == "completed"
    assert out.read_text().splitlines() == LINES  # one effect per idempotency key
    store = open_store(workers.store)
    content = ContentStore(workers.store)
    try:
        events = store.events(handle.id)
        finished = [e for e in events if isinstance(e, ToolCallFinished)]
        for event in finished[1:]:  # the first is echo
            state = content.tool_call(f"{handle.id}:{event.call_id}")
            assert state is not None
            line = event.arguments["text"]
            if line == killed_at:  # its result was never recorded: reported, not re-run
                assert (event.is_error, event.result) == (True, UNCERTAIN)
                assert state[0] == "started" and state[2] == 1
            else:
                assert (event.is_error, event.result) == (False, f"appended {line!r}")
                assert state[0] == "done"
    finally:
        content.close()
        store.close()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert isinstance(events[-1], RunFinished) and events[-1].status == "completed"
    history = await handle.fetch_history()  # with the lost attempt: replays deterministically
    replayed = await Replayer(workflows=[AgentRunWorkflow]).replay_workflow(history)
    assert replayed.replay_failure is None
