"""Two workers; SIGKILL the one inside a side-effecting tool (after its effect): the other
finishes the run, the tool (not idempotent) is never run again, and the model is told its
outcome is unknown. Each trial kills at another call."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest
from temporal_helpers import Provider, Workers, action, completion, final, write_script
from temporalio.worker import Replayer

from loopwright.engines.temporal import AgentRunWorkflow, EngineSettings, connect, start_agent_run
from loopwright.engines.temporal._activities import UNCERTAIN
from loopwright.engines.temporal._content import ContentStore
from loopwright.events import RunFinishedEvent, ToolCallEvent
from loopwright.runtime import RunSpec
from loopwright.store import open_store

TOOLS = Path(__file__).with_name("run_tools.py")
LINES = ["line1", "line2", "line3"]
FAST = EngineSettings(heartbeat_timeout_s=5.0)
"""Short, so a killed worker is noticed quickly; not so short that a worker starved of CPU on
a loaded machine misses a heartbeat (it beats every second)."""


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
    both = [workers.start(LOOPWRIGHT_TEST_HANG_AFTER=killed_at) for _ in range(2)]
    client = await connect(workers.address)
    handle = await start_agent_run(client, spec, settings=FAST, task_queue=workers.queue)
    hanging = f"hanging after {killed_at}"
    await _wait_for(hanging, workers, 60)
    (inside,) = [i for i in range(2) if hanging in workers.log_of(i)]
    both[inside].send_signal(signal.SIGKILL)
    both[inside].wait()
    outcome = await asyncio.wait_for(handle.result(), 120)
    assert both[1 - inside].poll() is None  # the other worker finished it

    assert outcome["status"] == "completed"
    assert out.read_text().splitlines() == LINES  # one effect per idempotency key
    store = open_store(workers.store)
    content = ContentStore(workers.store)
    try:
        events = store.events(handle.id)
        finished = [e for e in events if isinstance(e, ToolCallEvent)]
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
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
    history = await handle.fetch_history()  # with the lost attempt: replays deterministically
    replayed = await Replayer(workflows=[AgentRunWorkflow]).replay_workflow(history)
    assert replayed.replay_failure is None


async def test_a_worker_killed_in_a_model_call_is_replaced_and_the_call_repeated(
    workers: Workers, provider: Provider, tmp_path: Path
) -> None:
    """The second model call hangs at the provider; its worker is killed; another worker
    sends the same request again (loaded from the content store) and finishes the run."""
    provider.replies = [
        (200, {}, completion(action("echo", text="hello"))),
        (200, {}, completion(final("it said hello"))),
    ]
    provider.hang_on = 2
    spec = RunSpec(
        request="say hello",
        model="openai:test-model",
        base_url=f"http://127.0.0.1:{provider.server_address[1]}/v1",
        tools=("echo",),
        workspace=str(tmp_path),
    )
    first = workers.start()
    client = await connect(workers.address)
    handle = await start_agent_run(client, spec, settings=FAST, task_queue=workers.queue)
    deadline = time.monotonic() + 60
    while len(provider.calls) < 2:
        assert time.monotonic() < deadline, workers.logs()
        await asyncio.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    workers.start()
    outcome = await asyncio.wait_for(handle.result(), 120)

    assert outcome["status"] == "completed" and outcome["answer"] == "it said hello"
    assert len(provider.calls) == 3
    assert provider.bodies[2] == provider.bodies[1]  # the same request, from another worker
    store = open_store(workers.store)
    try:
        events = store.events(handle.id)
    finally:
        store.close()
    assert [e.type for e in events].count("model_response") == 2
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_an_idempotent_tool_whose_worker_was_killed_runs_again(
    workers: Workers, tmp_path: Path
) -> None:
    """Its key's row says `started`: the retry on another worker runs it again (allowed:
    it is idempotent), and commits the result the model then gets."""
    out = tmp_path / "out.txt"
    replies = [action("put_line", path=str(out), text=line) for line in ("a", "b")]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*replies, final("done")]))
    spec = RunSpec(
        request="put the lines",
        model=f"scripted:{script}",
        tools=(f"{TOOLS}:put_line",),
        workspace=str(tmp_path),
    )
    first = workers.start(LOOPWRIGHT_TEST_HANG_AFTER="b")
    client = await connect(workers.address)
    handle = await start_agent_run(client, spec, settings=FAST, task_queue=workers.queue)
    await _wait_for("hanging after b", workers, 60)
    first.send_signal(signal.SIGKILL)
    first.wait()
    workers.start()
    outcome = await asyncio.wait_for(handle.result(), 120)

    assert outcome["status"] == "completed"
    assert out.read_text().splitlines() == ["a", "b"]
    store = open_store(workers.store)
    content = ContentStore(workers.store)
    try:
        finished = [e for e in store.events(handle.id) if isinstance(e, ToolCallEvent)]
        states = [content.tool_call(f"{handle.id}:{e.call_id}") for e in finished]
    finally:
        content.close()
        store.close()
    assert [(e.is_error, e.result) for e in finished] == [(False, "has 'a'"), (False, "has 'b'")]
    assert [(s[0], s[2]) for s in states if s] == [("done", 1), ("done", 2)]  # b: 2 attempts
