"""Following a run (`Runtime.follow`) is one reader over the store: a run's events with its
sub-agents' runs nested under their calls, the same for the Runtime that executes the run
and for a fresh one on the same store, live or after the run ended."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loopwright import AgentExecutor
from loopwright.events import Event, ModelTextDeltaEvent, RunStartedEvent, ToolCallStartedEvent
from loopwright.runtime import Runtime
from loopwright.store import SqliteRunStore
from loopwright.tasks import TaskSpec
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

LEAD = "run_lead"


def act(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def lead_with_child(release: asyncio.Event | None = None) -> AgentExecutor:
    """A lead whose one call runs a sub-agent; the sub-agent's tool waits for `release`."""

    @tool(effect="read")
    async def lookup(topic: str) -> str:
        """Look a topic up.

        Args:
            topic: what to look up
        """
        if release is not None:
            await release.wait()
        return f"facts about {topic}"

    child = AgentExecutor(
        ScriptedModel([act("lookup", topic="tides"), final("the moon")], stream_chars=5),
        [lookup],
    )
    model = ScriptedModel([act("research", request="why tides?"), final("moon")], stream_chars=5)
    return AgentExecutor(model, [child.as_tool("research", "Research a question.")])


async def followed(runtime: Runtime, run_id: str, into: list[Event] | None = None) -> list[Event]:
    seen: list[Event] = [] if into is None else into
    async with contextlib.aclosing(runtime.follow(run_id)) as events:
        async for event in events:
            seen.append(event)
    return seen


async def until(check: Callable[[], bool]) -> None:
    while not check():
        await asyncio.sleep(0.01)


def children(events: list[Event]) -> set[str]:
    """The runs the calls among `events` started (each call's `child_run_id`)."""
    return {
        e.child_run_id for e in events if isinstance(e, ToolCallStartedEvent) and e.child_run_id
    }


def child_in(events: list[Event]) -> bool:
    return any(e.run_id in children(events) for e in events)


def stored_only(events: list[Event]) -> list[tuple[str, int, str]]:
    return [(e.run_id, e.seq, e.type) for e in events if not isinstance(e, ModelTextDeltaEvent)]


async def test_a_fresh_runtime_follows_a_stored_run_with_its_subagents_events(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    runtime = Runtime(store)
    try:
        await runtime.start_agent(lead_with_child(), "explain tides", run_id=LEAD).wait()
    finally:
        runtime.close()
    lead = store.events(LEAD)
    [child_id] = children(lead)
    child = store.events(child_id)
    store.close()
    assert child and isinstance(child[0], RunStartedEvent)

    again = SqliteRunStore(path)
    fresh = Runtime(again)  # another shell: `loopwright runs follow RUN_ID`
    try:
        seen = await asyncio.wait_for(followed(fresh, LEAD), 30)
    finally:
        fresh.close()
        again.close()
    assert sorted(stored_only(seen)) == sorted(stored_only([*lead, *child]))
    starts = next(i for i, e in enumerate(seen) if e.type == "tool_call_started")
    ends = next(i for i, e in enumerate(seen) if e.type == "tool_call" and e.run_id == LEAD)
    assert {e.run_id for e in seen[starts + 1 : ends]} == {child_id}  # nested under its call


async def test_a_live_follower_sees_what_a_fresh_runtime_sees(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store, other = SqliteRunStore(path), SqliteRunStore(path)
    runtime, fresh = Runtime(store), Runtime(other)
    release = asyncio.Event()
    here: list[Event] = []
    there: list[Event] = []
    try:
        handle = runtime.start_agent(lead_with_child(release), "explain tides", run_id=LEAD)
        live_here = asyncio.ensure_future(followed(runtime, LEAD, here))
        await until(lambda: store.get_run(LEAD) is not None)  # the fresh one: a stored run
        live_there = asyncio.ensure_future(followed(fresh, LEAD, there))
        # both follow the child while it waits in its tool
        await asyncio.wait_for(until(lambda: all(child_in(seen) for seen in (here, there))), 30)
        release.set()
        await asyncio.wait_for(asyncio.gather(handle.wait(), live_here, live_there), 30)
        after = await asyncio.wait_for(followed(fresh, LEAD), 30)
    finally:
        release.set()  # a failed wait: the run ends before its Runtime closes
        await asyncio.wait_for(handle.wait(), 30)
        runtime.close()
        fresh.close()
        store.close()
        other.close()
    assert stored_only(here) == stored_only(there) == stored_only(after)
    assert {e.run_id for e in after} == {LEAD, *children(after)} and child_in(after)
    assert any(isinstance(e, ModelTextDeltaEvent) for e in here)  # live only: deltas too


TASK = """
name: explain
steps:
  - name: explain
    type: agent
    description: "Say what a note is."
"""


async def test_a_task_runs_agent_step_is_followed_nested_under_its_call(tmp_path: Path) -> None:
    """A task's agent step is a run derived from the task run's (as a sub-agent's is from
    its lead's): linked to the step's call, in the task's tenant, and followed with it."""
    (tmp_path / "explain.yaml").write_text(TASK)
    spec = TaskSpec(task_file=str(tmp_path / "explain.yaml"), workspace=str(tmp_path),
                    tenant="acme", state_root=str(tmp_path / "state"))  # fmt: skip
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    runtime = Runtime(store)
    try:
        model = ScriptedModel([final("a short text")])
        state = await runtime.start_task(spec, model=model, run_id="run_task").wait()
    finally:
        runtime.close()
        store.close()
    assert state.status == "completed"
    again = SqliteRunStore(path)
    fresh = Runtime(again)
    try:
        seen = await asyncio.wait_for(followed(fresh, "run_task"), 30)
    finally:
        fresh.close()
        again.close()
    [call] = [e for e in seen if isinstance(e, ToolCallStartedEvent)]
    assert call.child_run_id is not None
    step = [e for e in seen if e.run_id == call.child_run_id]
    started = step[0]
    assert isinstance(started, RunStartedEvent) and started.tenant == "acme"
    assert (started.parent_run_id, started.parent_call_id) == ("run_task", call.call_id)
    assert step[-1].type == "run_finished"
    ends = next(i for i, e in enumerate(seen) if e.type == "tool_call" and e.run_id == "run_task")
    assert seen.index(call) < seen.index(started) and seen.index(step[-1]) < ends
