"""Long runs continue-as-new: each workflow run's history stays small, and a continued run
goes on exactly where the last one stopped (the loop replays the recorded events, long tool
results as references, and goes on live)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from temporal_helpers import (
    MODEL_CALL,
    TOOL_CALL,
    TemporalRuns,
    Workers,
    action,
    final,
    shape,
)
from temporalio.api.history.v1 import History
from temporalio.client import Client, WorkflowHistory

from loopwright.agent import AgentOptions
from loopwright.engines.temporal import EngineSettings, connect
from loopwright.engines.temporal._sandbox import replayer
from loopwright.engines.temporal._workflow import AgentRunWorkflow
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


@dataclass(frozen=True)
class Growth:
    """What a workflow run's history holds, measured from a chain's histories: its fixed
    part, the part per earlier step it replays (the recording), the part per model call it
    makes (bytes and events each). Each is the largest seen, overheads included: an upper
    bound of what a run of any length adds."""

    fixed_bytes: int
    fixed_events: int
    recorded_bytes: float
    recorded_events: float
    call_bytes: float
    call_events: float

    def run(self, earlier: int, calls: int) -> tuple[float, float]:
        """Bytes and events of a workflow run that replays `earlier` steps, makes `calls`."""
        return (
            self.fixed_bytes + self.recorded_bytes * earlier + self.call_bytes * calls,
            self.fixed_events + self.recorded_events * earlier + self.call_events * calls,
        )


def first_model_call(history: History) -> int:
    return next(
        i
        for i, e in enumerate(history.events)
        if e.activity_task_scheduled_event_attributes.activity_type.name == MODEL_CALL
    )


def measure(histories: list[History]) -> Growth:
    """The prefix of a run (before its first model call) is its fixed part, and, after a
    continue-as-new, the recording of the earlier steps; the rest is its calls'. Only the
    continued runs (all but the last) are measured per call: each made a full set."""
    prefixes = [h.events[: first_model_call(h)] for h in histories]
    sizes = [sum(e.ByteSize() for e in p) for p in prefixes]
    calls = [len(activity_inputs([h], MODEL_CALL)) for h in histories]
    earlier = [sum(calls[:k]) for k in range(len(histories))]
    rest = [
        (sum(e.ByteSize() for e in h.events[len(p) :]), len(h.events) - len(p))
        for h, p in zip(histories, prefixes, strict=True)
    ]
    full = range(len(histories) - 1)
    return Growth(
        fixed_bytes=sizes[0],
        fixed_events=len(prefixes[0]),
        recorded_bytes=max(sizes[k] / earlier[k] for k in range(1, len(histories))),
        recorded_events=max(len(prefixes[k]) / earlier[k] for k in range(1, len(histories))),
        call_bytes=max(rest[k][0] / calls[k] for k in full),
        call_events=max(rest[k][1] / calls[k] for k in full),
    )


async def test_a_long_run_continues_as_new_and_its_history_stays_small(
    workers: Workers, tmp_path: Path, runs: TemporalRuns
) -> None:
    """A 30-step run continued every 10 model calls: 4 workflow runs, each small, the
    activities' inputs the same size at every step, the stored events gapless and whole.
    What a workflow run's history grows by (per model call, per earlier step replayed) is
    measured from the chain, and the default (continue after 500 calls) keeps every
    workflow run of a 1000-step run under Temporal's limits (10 MB, 10,240 events) by it.
    (A tool result of 20 KB in the history would break that: 500 of them are 10 MB.)"""
    steps = int(os.environ.get("LOOPWRIGHT_TEST_LONG_STEPS", "30"))
    every = 10
    workers.start()
    client = await connect(workers.address)
    started = time.monotonic()
    settings = EngineSettings(continue_after_calls=every)
    spec = scripted_spec(tmp_path, steps)
    handle = await runs.start(spec, settings=settings)
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
    growth = measure(histories)
    default = EngineSettings().continue_after_calls
    long_steps = 1000
    chain = [
        growth.run(earlier, min(default, long_steps + 1 - earlier))
        for earlier in range(0, long_steps + 1, default)
    ]
    print(
        f"\n{steps} steps in {elapsed:.1f} s, {len(histories)} workflow runs: {sizes} bytes, "
        f"{counts} events; model call inputs {model_inputs}; tool call inputs "
        f"{tool_inputs}; {growth}; projected {long_steps}-step run, continued every "
        f"{default} calls: {[(round(b), round(e)) for b, e in chain]} (bytes, events)"
    )
    assert len(histories) == (steps + 1 + every - 1) // every  # continued every 10 calls
    assert max(sizes) < MAX_RUN_BYTES, sizes
    assert max(counts) < MAX_RUN_EVENTS, counts
    assert len(model_inputs) == steps + 1 and len(tool_inputs) == steps
    # from step 10 on, every step's inputs are the size of step 10's (as at step 1000)
    assert max(model_inputs[9:steps]) <= model_inputs[9] * 1.05, model_inputs
    assert max(tool_inputs[9:]) <= tool_inputs[9] * 1.05, tool_inputs
    assert max(b for b, _ in chain) < MAX_RUN_BYTES, chain
    assert max(e for _, e in chain) < MAX_RUN_EVENTS, chain

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
    workers: Workers, tmp_path: Path, runs: TemporalRuns
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
    run = await runs.start(spec, settings=settings)
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
