"""Long runs continue-as-new: each workflow run's history stays small, and a continued run
goes on exactly where the last one stopped (the loop replays the recorded events, long tool
results as references, and goes on live)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from temporal_helpers import Workers, action, final, shape
from temporalio.api.history.v1 import History
from temporalio.client import Client, WorkflowHistory

from loopwright.agent import AgentOptions
from loopwright.engines.temporal import (
    AgentRunWorkflow,
    EngineSettings,
    connect,
    start_agent_run,
)
from loopwright.engines.temporal._payloads import MODEL_CALL, TOOL_CALL
from loopwright.engines.temporal._sandbox import replayer
from loopwright.events import ToolCallEvent, event_to_dict
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import open_store

TOOLS = Path(__file__).with_name("run_tools.py")
RESULT = 20_000
MAX_RUN_BYTES = 10 * 1024 * 1024
MAX_RUN_EVENTS = 10_240


def big_text(size: int) -> str:
    line = "0123456789abcdefghijklmnopqrstuvwxyz\n"
    return (line * (size // len(line) + 1))[:size]


def scripted_spec(tmp_path: Path, steps: int) -> RunSpec:
    """`steps` calls of `big`, each returning a different text of about 20 KB."""
    script = tmp_path / "script.json"
    replies = [action("big", size=RESULT - step % 500) for step in range(steps)]
    script.write_text(json.dumps([*replies, final(f"read {steps} results")]))
    return RunSpec(
        request="read many results",
        model=f"scripted:{script}",
        tools=(f"{TOOLS}:big",),
        workspace=str(tmp_path),
        options=AgentOptions(max_iterations=steps + 5, no_progress_limit=steps + 5),
    )


async def run_histories(client: Client, workflow_id: str, first_run_id: str) -> list[History]:
    """The histories of a workflow's runs, from the first along its continue-as-new chain."""
    histories: list[History] = []
    run_id: str | None = first_run_id
    while run_id:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        histories.append(History(events=history.events))
        last = history.events[-1]
        run_id = None
        if last.HasField("workflow_execution_continued_as_new_event_attributes"):
            run_id = last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
    return histories


def activity_inputs(histories: list[History], name: str) -> list[int]:
    return [
        e.activity_task_scheduled_event_attributes.input.ByteSize()
        for h in histories
        for e in h.events
        if e.activity_task_scheduled_event_attributes.activity_type.name == name
    ]


async def test_a_1000_step_run_continues_as_new_and_its_history_stays_small(
    workers: Workers, tmp_path: Path
) -> None:
    steps = int(os.environ.get("LOOPWRIGHT_TEST_LONG_STEPS", "1000"))
    workers.start()
    client = await connect(workers.address)
    started = time.monotonic()
    handle = await start_agent_run(client, scripted_spec(tmp_path, steps), task_queue=workers.queue)
    outcome = await handle.result()
    elapsed = time.monotonic() - started
    assert outcome["status"] == "completed", outcome
    assert outcome["steps"] == steps and outcome["model_calls"] == steps + 1
    assert outcome["answer"] == f"read {steps} results"

    assert handle.first_execution_run_id is not None
    histories = await run_histories(client, handle.id, handle.first_execution_run_id)
    sizes = [sum(e.ByteSize() for e in h.events) for h in histories]
    counts = [len(h.events) for h in histories]
    model_inputs = activity_inputs(histories, MODEL_CALL)
    tool_inputs = activity_inputs(histories, TOOL_CALL)
    print(
        f"\n{steps} steps in {elapsed:.1f} s ({elapsed / steps * 1000:.0f} ms a step), "
        f"{len(histories)} workflow runs: {sizes} bytes, {counts} events; model call input "
        f"at step 10: {model_inputs[9]:,} B, at step {steps}: {model_inputs[steps - 1]:,} B; "
        f"tool call input at step 10: {tool_inputs[9]:,} B, at {steps}: {tool_inputs[-1]:,} B"
    )
    assert len(histories) >= 2, "the run never continued as new"
    assert max(sizes) < MAX_RUN_BYTES, sizes
    assert max(counts) < MAX_RUN_EVENTS, counts
    assert len(model_inputs) == steps + 1 and len(tool_inputs) == steps
    assert model_inputs[steps - 1] <= model_inputs[9] * 1.05, (model_inputs[9], model_inputs[-2])
    assert tool_inputs[-1] <= tool_inputs[9] * 1.05, (tool_inputs[9], tool_inputs[-1])

    store = open_store(workers.store)
    try:
        events = store.events(handle.id)
    finally:
        store.close()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # no gap, no repeat
    results = [e.result for e in events if isinstance(e, ToolCallEvent)]
    assert len(results) == steps
    assert results[-1] == big_text(RESULT - (steps - 1) % 500)  # the text, not a reference


async def test_a_continued_run_stores_the_same_events_as_the_embedded_engine(
    workers: Workers, tmp_path: Path
) -> None:
    """Continued every 4 model calls, a 12-step run stores what the embedded engine stores
    (field by field but ids and times: each tool result whole, each request's fingerprint
    the one of the whole texts), and each workflow run of the chain replays."""
    spec = scripted_spec(tmp_path, 12)
    runtime = Runtime(open_store(str(tmp_path / "runs.db")))
    try:
        handle = runtime.start(spec)
        await handle.wait()
        embedded = [event_to_dict(e) for e in runtime.store.events(handle.run_id)]
    finally:
        runtime.close()

    workers.start()
    client = await connect(workers.address)
    settings = EngineSettings(continue_after_calls=4)
    run = await start_agent_run(client, spec, settings=settings, task_queue=workers.queue)
    outcome = await run.result()
    assert outcome["status"] == "completed" and outcome["model_calls"] == 13
    assert run.first_execution_run_id is not None
    histories = await run_histories(client, run.id, run.first_execution_run_id)
    assert len(histories) == 4  # calls 1-4, 5-8, 9-12, 13
    checker = replayer(AgentRunWorkflow)
    for history in histories:  # each run of the chain replays deterministically
        replayed = await checker.replay_workflow(WorkflowHistory(run.id, list(history.events)))
        assert replayed.replay_failure is None

    store = open_store(workers.store)
    try:
        stored = [event_to_dict(e) for e in store.events(run.id)]
    finally:
        store.close()
    assert shape(stored) == shape(embedded)
