"""The run store under faults, on real PostgreSQL servers:

- a one-attempt tool activity (a tool that is not idempotent) whose worker dies while it
  stores the events it carries (its insert waits; the worker is SIGKILLed and its
  transaction never commits): the outcome path stores them, the call (never started) runs
  once on the other worker, the run completes with a gap-free log. Before, the next
  append was refused (`event seq N does not follow M`) and the run was left interrupted;
- the server shut down while a tool call ends, and started again: the worker waits it out
  (a dropped connection is retryable, within a bounded time) and the run completes with
  the call's result recorded."""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_faults import BlockedInsert
from temporal_helpers import TOOLS_FILE, TemporalRuns, Workers, action, final
from temporalio.client import WorkflowHandle
from trial_helpers import until

from loopwright.engines.temporal import DevServer, EngineSettings
from loopwright.events import Event, RunFinishedEvent, ToolCallEvent
from loopwright.runtime import RunSpec
from loopwright.store import LocalPostgres, open_store, start_local_postgres
from loopwright.tasks import TaskSpec

FAST = EngineSettings(heartbeat_timeout_s=5.0)
TASK = """\
name: two-lines
tools: [{tools}]
inputs:
  out: null
steps:
  - name: first
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: line1}}
  - name: second
    type: tool
    tool: append_line
    args_from: {{path: inputs.out}}
    args: {{text: line2}}
"""


def _stored(url: str, run_id: str) -> list[Event]:
    store = open_store(url)
    try:
        events = store.events(run_id)
    finally:
        store.close()
    assert [e.seq for e in events] == list(range(1, len(events) + 1))  # gap-free
    assert isinstance(events[-1], RunFinishedEvent)
    return events


async def _activities(handle: WorkflowHandle[Any, Any]) -> list[str]:
    history = await handle.fetch_history()
    return [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]


def _agent_spec(folder: Path, out: Path) -> RunSpec:
    replies = [action("append_line", path=str(out), text=line) for line in ("line1", "line2")]
    script = folder / "script.json"
    script.write_text(json.dumps([*replies, final("wrote 2 lines")]), encoding="utf-8")
    return RunSpec(request="write two lines", model=f"scripted:{script}",
                   tools=(f"{TOOLS_FILE}:append_line",), workspace=str(folder))  # fmt: skip


def _task_spec(folder: Path, out: Path) -> TaskSpec:
    task = folder / "two.yaml"
    task.write_text(TASK.format(tools=TOOLS_FILE), encoding="utf-8")
    return TaskSpec(task_file=str(task), inputs={"out": str(out)}, workspace=str(folder),
                    state_root=str(folder / "state"), auto_gate=False)  # fmt: skip


@pytest.mark.parametrize("kind", ["agent", "task"])
async def test_a_tool_attempt_killed_before_its_events_are_stored(
    workers: Workers, tmp_path: Path, kind: str, runs: TemporalRuns
) -> None:
    out = tmp_path / "out.txt"
    block = BlockedInsert(workers.store, "append_line")
    try:
        first = workers.start()
        if kind == "agent":
            spec = _agent_spec(tmp_path, out)
            handle = await runs.start(spec, settings=FAST)
        else:
            task = _task_spec(tmp_path, out)
            handle = await runs.start_task(task, settings=FAST)
        backend = await block.waiting()  # the first call's events are being stored
        workers.start()
        first.send_signal(signal.SIGKILL)  # the attempt dies before they are
        first.wait()
        block.abort(backend)
        outcome = await asyncio.wait_for(handle.result(), 120)
    finally:
        block.close()

    assert outcome["status"] == "completed", workers.logs()
    assert out.read_text().splitlines() == ["line1", "line2"]  # each call ran once
    assert Path(f"{out}.attempts").read_text().splitlines() == ["line1", "line2"]
    events = _stored(workers.store, handle.id)
    assert isinstance(events[-1], RunFinishedEvent) and events[-1].status == "completed"
    if kind == "agent":
        calls = [e for e in events if isinstance(e, ToolCallEvent)]
        assert [c.result for c in calls] == ["appended 'line1'", "appended 'line2'"]
    scheduled = await _activities(handle)
    assert scheduled.count("loopwright.tool_outcome.v1") == 1  # stored the lost events
    effect = "loopwright.tool_call.v1" if kind == "agent" else "loopwright.task_effect.v1"
    after = scheduled[scheduled.index("loopwright.tool_outcome.v1") + 1]
    assert after == effect  # the call again: it never started
    assert scheduled.count(effect) == (3 if kind == "agent" else 5)  # tasks: 2 backups


@pytest.fixture
def own_postgres(pg_bin: Path) -> Iterator[LocalPostgres]:
    """A PostgreSQL server of this test's own (it is shut down and started again)."""
    server = start_local_postgres(pg_bin)
    yield server
    server.stop()


async def test_the_store_restarted_while_a_tool_call_ends(
    temporal_server: DevServer, own_postgres: LocalPostgres, tmp_path: Path
) -> None:
    url = own_postgres.create_database("outage")
    open_store(url, migrate=True).close()
    workers = Workers(temporal_server.address, url, f"q-{uuid.uuid4().hex[:8]}", tmp_path)
    release, out = tmp_path / "release", tmp_path / "out.txt"
    script = tmp_path / "script.json"
    replies = [action("hold", path=str(release)),
               action("append_line", path=str(out), text="after"), final("done")]  # fmt: skip
    script.write_text(json.dumps(replies), encoding="utf-8")
    spec = RunSpec(request="hold, then write", model=f"scripted:{script}",
                   tools=(f"{TOOLS_FILE}:hold", f"{TOOLS_FILE}:append_line"),
                   workspace=str(tmp_path))  # fmt: skip
    runs = TemporalRuns(workers)
    try:
        workers.start()
        handle = await runs.start(spec, settings=FAST)
        await until(Path(f"{release}.held").exists, workers.logs, 60)
        own_postgres.pause()  # the store goes away while the call runs
        release.touch()  # the call ends: its result cannot be committed yet
        await until(lambda: "trying again" in workers.logs(), workers.logs, 60)
        own_postgres.resume()
        outcome = await asyncio.wait_for(handle.result(), 120)
    finally:
        await runs.aclose()
        workers.stop_all()

    assert outcome["status"] == "completed", workers.logs()
    assert out.read_text() == "after\n"
    events = _stored(url, handle.id)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.result for c in calls] == ["released by release", "appended 'after'"]
